// Charging arithmetic (contract section 4), in integers only.
//
// Rates are fixed-point: nano-units of micro-USD (1e-9 µUSD). The CPU rate is per GB-ms with
// GB = 1024 MB, the GPU rate per ms. Commission is in basis points (2000 = 20 %).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace toolgate::core {

inline constexpr int64_t kNanoPerUnit = 1'000'000'000;

// Parses a non-negative decimal ("0.0166667", "1.1", "3") into nano-units; nullopt when it is
// not such a number, has more than 9 digits before the point or more than 9 decimals.
constexpr std::optional<int64_t> ParseNanoDecimal(std::string_view text) {
  if (text.empty()) return std::nullopt;
  int64_t whole = 0, frac = 0;
  size_t i = 0;
  for (; i < text.size() && text[i] != '.'; ++i) {
    if (text[i] < '0' || text[i] > '9' || i > 8) return std::nullopt;
    whole = whole * 10 + (text[i] - '0');
  }
  if (i == 0) return std::nullopt;
  int64_t scale = kNanoPerUnit;
  if (i < text.size()) {
    ++i;  // '.'
    if (i == text.size()) return std::nullopt;
    for (; i < text.size(); ++i) {
      if (text[i] < '0' || text[i] > '9' || scale == 1) return std::nullopt;
      scale /= 10;
      frac += (text[i] - '0') * scale;
    }
  }
  return whole * kNanoPerUnit + frac;
}

// The default rates (contract section 4), written as an operator writes them in billing's
// --cpu-rate, --gpu-rate and --commission-percent; Rates{} holds the same values, parsed.
inline constexpr std::string_view kDefaultCpuRate = "0.0166667";     // µUSD per GB-ms
inline constexpr std::string_view kDefaultGpuRate = "1.1";           // µUSD per GPU-ms
inline constexpr std::string_view kDefaultCommissionPercent = "20";  // of function fees

struct Rates {
  int64_t cpu_nano_per_gb_ms = ParseNanoDecimal(kDefaultCpuRate).value();
  int64_t gpu_nano_per_ms = ParseNanoDecimal(kDefaultGpuRate).value();
  // Basis points: 1 % = 100 bp.
  int64_t commission_bp =
      ParseNanoDecimal(kDefaultCommissionPercent).value() / (kNanoPerUnit / 100);
};

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
