#include "toolgate/billing/compute_medians.h"

#include <gtest/gtest.h>

namespace toolgate::billing {
namespace {

constexpr const char* kFunction = "0b6f8e84-2a53-4d7e-9a70-5e6c61f3d2a1";

TEST(RecentComputeChargesTest, TheMedianIsOfTheLatestSamplesOfThatVersion) {
  RecentComputeCharges charges;
  EXPECT_EQ(charges.Median(kFunction, "1.0.0", 0).samples, 0);
  for (int64_t v : {5, 1, 9, 3, 7}) charges.Record(kFunction, "1.0.0", v, 0);
  charges.Record(kFunction, "2.0.0", 1000, 0);
  ComputeMedianValue m = charges.Median(kFunction, "1.0.0", 0);
  EXPECT_EQ(m.samples, 5);
  EXPECT_EQ(m.median_micro_usd, 5);
  EXPECT_EQ(charges.Median(kFunction, "2.0.0", 0).median_micro_usd, 1000);
  // An even count answers the upper median.
  charges.Record(kFunction, "1.0.0", 100, 0);
  EXPECT_EQ(charges.Median(kFunction, "1.0.0", 0).median_micro_usd, 7);
}

TEST(RecentComputeChargesTest, OldSamplesGiveWayToNewOnes) {
  RecentComputeCharges charges;
  for (size_t i = 0; i < kSamplesPerVersion; ++i) charges.Record(kFunction, "1.0.0", 10, 0);
  for (size_t i = 0; i < kSamplesPerVersion / 2 + 1; ++i) {
    charges.Record(kFunction, "1.0.0", 90, 0);
  }
  ComputeMedianValue m = charges.Median(kFunction, "1.0.0", 0);
  EXPECT_EQ(m.samples, static_cast<int>(kSamplesPerVersion));
  EXPECT_EQ(m.median_micro_usd, 90);
}

TEST(RecentComputeChargesTest, AVersionNotChargedForAWeekIsForgotten) {
  RecentComputeCharges charges;
  charges.Record(kFunction, "1.0.0", 10, 0);
  const int64_t week_ms = 7LL * 24 * 3600 * 1000;
  EXPECT_EQ(charges.Median(kFunction, "1.0.0", week_ms - 1).samples, 1);
  EXPECT_EQ(charges.Median(kFunction, "1.0.0", week_ms).samples, 0);
}

TEST(ComputeMediansAnswerTest, AnswersEveryVersionAskedInOrder) {
  RecentComputeCharges charges;
  charges.Record(kFunction, "1.0.0", 42, 0);
  v1::ComputeMediansRequest request;
  auto* a = request.add_versions();
  a->set_function_id(kFunction);
  a->set_version("9.9.9");
  auto* b = request.add_versions();
  b->set_function_id(kFunction);
  b->set_version("1.0.0");
  b->set_compute_type(v1::COMPUTE_TYPE_CPU);
  b->set_timeout_ms(1000);
  b->set_memory_mb(128);
  v1::ComputeMediansReply reply =
      AnswerComputeMedians(charges, core::Rates{}, request.SerializeAsString(), 0);
  ASSERT_FALSE(reply.has_problem());
  ASSERT_EQ(reply.medians_size(), 2);
  EXPECT_EQ(reply.medians(0).version(), "9.9.9");
  EXPECT_EQ(reply.medians(0).samples(), 0);
  EXPECT_EQ(reply.medians(1).median_compute_micro_usd(), 42);
  EXPECT_EQ(reply.medians(1).samples(), 1);
  // The compute of the whole timeout, as a hold of it would count it.
  EXPECT_EQ(reply.medians(1).max_compute_micro_usd(),
            core::HoldAmount(core::Rates{}, false, 1000, 128, 0));
  EXPECT_GT(reply.medians(1).max_compute_micro_usd(), 0);
}

TEST(ComputeMediansAnswerTest, RefusesAMalformedOrOversizedRequest) {
  RecentComputeCharges charges;
  EXPECT_EQ(AnswerComputeMedians(charges, core::Rates{}, "\xff\xff", 0).problem().code(),
            "bad_request");
  v1::ComputeMediansRequest request;
  for (size_t i = 0; i <= kMaxMedianVersions; ++i) request.add_versions()->set_version("1.0.0");
  EXPECT_EQ(
      AnswerComputeMedians(charges, core::Rates{}, request.SerializeAsString(), 0).problem().code(),
      "bad_request");
}

}  // namespace
}  // namespace toolgate::billing
