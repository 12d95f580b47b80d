// Charging arithmetic (contract section 4), in integers only.
//
// Rates are fixed-point: nano-units of micro-USD (1e-9 µUSD). The CPU rate is per GB-ms with
// GB = 1024 MB, the GPU rate per ms. Commission is in basis points (2000 = 20 %).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace toolgate::core {

struct Rates {
  int64_t cpu_nano_per_gb_ms = 16'666'700;     // 0.0166667 µUSD per GB-ms
  int64_t gpu_nano_per_ms = 1'100'000'000;     // 1.1 µUSD per ms
  int64_t commission_bp = 2000;                // 20 %
};

// Parses a non-negative decimal ("0.0166667", "1.1", "3") into nano-units; nullopt when it is
// not such a number or has more than 9 decimals.
std::optional<int64_t> ParseNanoDecimal(std::string_view text);

// max(1, ceil(billed_ms × memory_mb / 1024 × cpu_rate)) or max(1, ceil(billed_ms × gpu_rate)),
// billed_ms = max(1, runtime_ms).
int64_t ComputeCost(const Rates& rates, bool gpu, int64_t runtime_ms, int64_t memory_mb);
// The function fee the caller pays: the price, or 0 when the caller owns the function.
int64_t FunctionFee(int64_t price_micro_usd, bool caller_is_owner);
// What is held before the run: fee + compute cost at the full timeout.
int64_t HoldAmount(const Rates& rates, bool gpu, int64_t timeout_ms, int64_t memory_mb,
                   int64_t fee);
// The owner's revenue: floor(fee × (1 − commission)).
int64_t OwnerRevenue(const Rates& rates, int64_t fee);

}  // namespace toolgate::core
