#include "toolgate/core/charging_flags.h"

#include <string>

#include "toolgate/core/cost.h"

namespace toolgate::core {

void DefineChargingFlags(Flags& flags) {
  flags.Define("cpu-rate", std::string(kDefaultCpuRate),
               "CPU compute price, micro-USD per GB-ms (decimal)");
  flags.Define("gpu-rate", std::string(kDefaultGpuRate),
               "GPU compute price, micro-USD per ms (decimal)");
  flags.Define("commission-percent", std::string(kDefaultCommissionPercent),
               "platform commission on function fees, percent");
  flags.Define("rate-limit-per-key", "1000", "invocations per second per API key; 0: off");
  flags.Define("rate-limit-burst", "2000", "invocations an API key may send at once");
  flags.Define("concurrency-per-org", "100", "executions in flight per organization; 0: off");
  flags.Define("uncharged-timeout-s-per-hour", "3600",
               "sandbox seconds per hour an organization's calls may spend running past their "
               "timeout (408, not charged) before its calls are refused; 0: off");
}

}  // namespace toolgate::core
