#include "toolgate/core/cost.h"

#include <gtest/gtest.h>

namespace toolgate::core {
namespace {

const Rates kDefault;

TEST(CostTest, DefaultRatesMatchTheContract) {
  EXPECT_EQ(kDefaultCpuRate, "0.0166667");
  EXPECT_EQ(kDefaultGpuRate, "1.1");
  EXPECT_EQ(kDefaultCommissionPercent, "20");
  EXPECT_EQ(kDefault.cpu_nano_per_gb_ms, 16'666'700);
  EXPECT_EQ(kDefault.gpu_nano_per_ms, 1'100'000'000);
  EXPECT_EQ(kDefault.commission_bp, 2000);
}

TEST(CostTest, CpuCostIsCeilOfGbMsTimesRate) {
  // 1000 ms × 128 MB / 1024 × 0.0166667 = 2.0833375 -> 3.
  EXPECT_EQ(ComputeCost(kDefault, false, 1000, 128), 3);
  // 1,000,000 ms × 128 MB / 1024 × 0.0166667 = 2083.3375 -> 2084.
  EXPECT_EQ(ComputeCost(kDefault, false, 1'000'000, 128), 2084);
  // 30000 ms × 128 MB / 1024 × 0.0166667 = 62.500125 -> 63.
  EXPECT_EQ(ComputeCost(kDefault, false, 30000, 128), 63);
  // 900000 ms × 4096 MB / 1024 × 0.0166667 = 60000.12 -> 60001.
  EXPECT_EQ(ComputeCost(kDefault, false, 900000, 4096), 60001);
  // 1024 MB for 60 ms at the default rate is 1.000002 -> 2: any fraction rounds up.
  EXPECT_EQ(ComputeCost(kDefault, false, 60, 1024), 2);
}

TEST(CostTest, CpuCostIsExactWhenTheProductIsWhole) {
  Rates rates;
  rates.cpu_nano_per_gb_ms = 1'000'000'000;  // 1 µUSD per GB-ms
  EXPECT_EQ(ComputeCost(rates, false, 1000, 1024), 1000);
  EXPECT_EQ(ComputeCost(rates, false, 1000, 512), 500);
  EXPECT_EQ(ComputeCost(rates, false, 3, 512), 2);  // 1.5 -> 2
}

TEST(CostTest, MinimumChargeIsOne) {
  // 1 ms × 128 MB / 1024 × 0.0166667 = 0.0021 -> 1.
  EXPECT_EQ(ComputeCost(kDefault, false, 1, 128), 1);
  Rates free;
  free.cpu_nano_per_gb_ms = 0;
  free.gpu_nano_per_ms = 0;
  EXPECT_EQ(ComputeCost(free, false, 1000, 128), 1);
  EXPECT_EQ(ComputeCost(free, true, 1000, 0), 1);
}

TEST(CostTest, RuntimeZeroIsBilledAsOneMillisecond) {
  Rates rates;
  rates.cpu_nano_per_gb_ms = 3'000'000'000;  // 3 µUSD per GB-ms makes 1 ms at 1 GB cost 3
  EXPECT_EQ(ComputeCost(rates, false, 0, 1024), 3);
  EXPECT_EQ(ComputeCost(rates, false, -5, 1024), 3);
  EXPECT_EQ(ComputeCost(kDefault, true, 0, 128), 2);  // GPU: ceil(1 × 1.1)
}

TEST(CostTest, GpuCostIgnoresMemory) {
  EXPECT_EQ(ComputeCost(kDefault, true, 10, 128), 11);
  EXPECT_EQ(ComputeCost(kDefault, true, 10, 4096), 11);
  EXPECT_EQ(ComputeCost(kDefault, true, 1, 128), 2);  // 1.1 -> 2
  EXPECT_EQ(ComputeCost(kDefault, true, 1000, 128), 1100);
  EXPECT_EQ(ComputeCost(kDefault, true, 900000, 128), 990000);
}

TEST(CostTest, FunctionFeeIsWaivedForTheOwner) {
  EXPECT_EQ(FunctionFee(500, false), 500);
  EXPECT_EQ(FunctionFee(500, true), 0);
  EXPECT_EQ(FunctionFee(0, false), 0);
}

TEST(CostTest, HoldIsFeePlusComputeAtTimeout) {
  EXPECT_EQ(HoldAmount(kDefault, false, 30000, 128, 500), 500 + 63);
  EXPECT_EQ(HoldAmount(kDefault, false, 1000, 128, 0), 3);
  EXPECT_EQ(HoldAmount(kDefault, true, 10, 128, 7), 7 + 11);
  // The hold never falls below what the run can cost.
  for (int64_t runtime : {1, 500, 29999, 30000}) {
    EXPECT_GE(HoldAmount(kDefault, false, 30000, 256, 100),
              100 + ComputeCost(kDefault, false, runtime, 256));
  }
}

TEST(CostTest, OwnerRevenueIsFlooredAfterCommission) {
  EXPECT_EQ(OwnerRevenue(kDefault, 999), 799);  // 799.2
  EXPECT_EQ(OwnerRevenue(kDefault, 1000), 800);
  EXPECT_EQ(OwnerRevenue(kDefault, 1), 0);  // 0.8
  EXPECT_EQ(OwnerRevenue(kDefault, 0), 0);
  EXPECT_EQ(OwnerRevenue(kDefault, 1'000'000'000'000), 800'000'000'000);
  Rates none;
  none.commission_bp = 0;
  EXPECT_EQ(OwnerRevenue(none, 999), 999);
  Rates all;
  all.commission_bp = 10000;
  EXPECT_EQ(OwnerRevenue(all, 999), 0);
}

TEST(CostTest, ParseNanoDecimalValid) {
  EXPECT_EQ(ParseNanoDecimal("0.0166667"), 16'666'700);
  EXPECT_EQ(ParseNanoDecimal("1.1"), 1'100'000'000);
  EXPECT_EQ(ParseNanoDecimal("3"), 3'000'000'000);
  EXPECT_EQ(ParseNanoDecimal("0"), 0);
  EXPECT_EQ(ParseNanoDecimal("0.000000001"), 1);  // nine decimals
  EXPECT_EQ(ParseNanoDecimal("12.5"), 12'500'000'000);
  EXPECT_EQ(ParseNanoDecimal("007.10"), 7'100'000'000);
  EXPECT_EQ(ParseNanoDecimal("999999999.999999999"), 999'999'999'999'999'999);
}

TEST(CostTest, ParseNanoDecimalInvalid) {
  for (const char* text : {"", ".", ".5", "5.", "-1", "+1", "1e3", "1.2.3", " 1", "1 ", "abc",
                           "1,5", "0x10", "0.0000000001" /* ten decimals */,
                           "9999999999" /* overflows int64 nanos */, "99999999999"}) {
    EXPECT_EQ(ParseNanoDecimal(text), std::nullopt) << '"' << text << '"';
  }
}

}  // namespace
}  // namespace toolgate::core
