#include "toolgate/core/cost.h"

namespace toolgate::core {
namespace {

constexpr int64_t kNano = kNanoPerUnit;

int64_t CeilDiv(__int128 num, __int128 den) {
  return static_cast<int64_t>((num + den - 1) / den);
}

}  // namespace

int64_t ComputeCost(const Rates& rates, bool gpu, int64_t runtime_ms, int64_t memory_mb) {
  int64_t billed_ms = runtime_ms < 1 ? 1 : runtime_ms;
  int64_t cost;
  if (gpu) {
    cost = CeilDiv(static_cast<__int128>(billed_ms) * rates.gpu_nano_per_ms, kNano);
  } else {
    cost = CeilDiv(static_cast<__int128>(billed_ms) * memory_mb * rates.cpu_nano_per_gb_ms,
                   static_cast<__int128>(1024) * kNano);
  }
  return cost < 1 ? 1 : cost;
}

int64_t FunctionFee(int64_t price_micro_usd, bool caller_is_owner) {
  return caller_is_owner ? 0 : price_micro_usd;
}

int64_t HoldAmount(const Rates& rates, bool gpu, int64_t timeout_ms, int64_t memory_mb,
                   int64_t fee) {
  return fee + ComputeCost(rates, gpu, timeout_ms, memory_mb);
}

int64_t OwnerRevenue(const Rates& rates, int64_t fee) {
  return static_cast<int64_t>(static_cast<__int128>(fee) * (10000 - rates.commission_bp) / 10000);
}

}  // namespace toolgate::core
