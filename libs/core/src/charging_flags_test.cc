#include "toolgate/core/charging_flags.h"

#include <gtest/gtest.h>

#include <string>

#include "toolgate/core/cost.h"

namespace toolgate::core {
namespace {

TEST(ChargingFlagsTest, DefinesEveryNamedFlag) {
  Flags flags("test", "");
  DefineChargingFlags(flags);
  for (std::string_view name : kChargingFlagNames) {
    EXPECT_NO_THROW(flags.Get(std::string(name))) << name;  // Get throws on an unknown flag
  }
}

TEST(ChargingFlagsTest, RateDefaultsAreTheDefaultRates) {
  Flags flags("test", "");
  DefineChargingFlags(flags);
  const Rates defaults;
  EXPECT_EQ(ParseNanoDecimal(flags.Get("cpu-rate")), defaults.cpu_nano_per_gb_ms);
  EXPECT_EQ(ParseNanoDecimal(flags.Get("gpu-rate")), defaults.gpu_nano_per_ms);
  EXPECT_EQ(ParseNanoDecimal(flags.Get("commission-percent")),
            defaults.commission_bp * (kNanoPerUnit / 100));
}

}  // namespace
}  // namespace toolgate::core
