#include "toolgate/base/time.h"

#include <gtest/gtest.h>

namespace toolgate {
namespace {

constexpr int64_t k2027Jan31 = 1801353600000;  // 2027-01-31T00:00:00Z

TEST(TimeTest, FormatRfc3339) {
  EXPECT_EQ(FormatRfc3339(0), "1970-01-01T00:00:00Z");
  EXPECT_EQ(FormatRfc3339(k2027Jan31), "2027-01-31T00:00:00Z");
  EXPECT_EQ(FormatRfc3339(1700000000999), "2023-11-14T22:13:20Z");  // milliseconds dropped
  EXPECT_EQ(FormatRfc3339(951782400000), "2000-02-29T00:00:00Z");
}

TEST(TimeTest, FormatRfc3339Millis) {
  EXPECT_EQ(FormatRfc3339Millis(0), "1970-01-01T00:00:00.000Z");
  EXPECT_EQ(FormatRfc3339Millis(k2027Jan31 + 123), "2027-01-31T00:00:00.123Z");
  EXPECT_EQ(FormatRfc3339Millis(k2027Jan31 + 7), "2027-01-31T00:00:00.007Z");
}

TEST(TimeTest, FormatRfc3339MillisAcrossSecondsAndBack) {
  // The second's text is kept between calls: each must still get its own.
  EXPECT_EQ(FormatRfc3339Millis(k2027Jan31 + 999), "2027-01-31T00:00:00.999Z");
  EXPECT_EQ(FormatRfc3339Millis(k2027Jan31 + 1000), "2027-01-31T00:00:01.000Z");
  EXPECT_EQ(FormatRfc3339Millis(k2027Jan31 + 1001), "2027-01-31T00:00:01.001Z");
  EXPECT_EQ(FormatRfc3339Millis(k2027Jan31 + 59), "2027-01-31T00:00:00.059Z");
  EXPECT_EQ(FormatRfc3339Millis(1700000000999), "2023-11-14T22:13:20.999Z");
}

TEST(TimeTest, FormatBeforeEpochRoundsTowardsThePast) {
  EXPECT_EQ(FormatRfc3339Millis(-1), "1969-12-31T23:59:59.999Z");
  EXPECT_EQ(FormatRfc3339(-1000), "1969-12-31T23:59:59Z");
}

TEST(TimeTest, ParseUtc) {
  EXPECT_EQ(ParseRfc3339("1970-01-01T00:00:00Z"), 0);
  EXPECT_EQ(ParseRfc3339("2027-01-31T00:00:00Z"), k2027Jan31);
  EXPECT_EQ(ParseRfc3339("2023-11-14T22:13:20Z"), 1700000000000);
  EXPECT_EQ(ParseRfc3339("1969-12-31T23:59:59Z"), -1000);
  EXPECT_EQ(ParseRfc3339("2027-01-31t00:00:00z"), k2027Jan31);  // RFC 3339 allows lower case
}

TEST(TimeTest, ParseOffsets) {
  EXPECT_EQ(ParseRfc3339("2027-01-31T02:00:00+02:00"), k2027Jan31);
  EXPECT_EQ(ParseRfc3339("2027-01-30T18:30:00-05:30"), k2027Jan31);
  EXPECT_EQ(ParseRfc3339("2027-01-31T00:00:00+00:00"), k2027Jan31);
  EXPECT_EQ(ParseRfc3339("2027-01-31T00:00:00-00:00"), k2027Jan31);
}

TEST(TimeTest, ParseFractions) {
  EXPECT_EQ(ParseRfc3339("2027-01-31T00:00:00.5Z"), k2027Jan31 + 500);
  EXPECT_EQ(ParseRfc3339("2027-01-31T00:00:00.123Z"), k2027Jan31 + 123);
  EXPECT_EQ(ParseRfc3339("2027-01-31T00:00:00.042Z"), k2027Jan31 + 42);
  // Digits beyond milliseconds are truncated.
  EXPECT_EQ(ParseRfc3339("2027-01-31T00:00:00.123999999Z"), k2027Jan31 + 123);
  EXPECT_EQ(ParseRfc3339("2027-01-31T02:00:00.250+02:00"), k2027Jan31 + 250);
}

TEST(TimeTest, ParseBareDateIsMidnightUtc) {
  EXPECT_EQ(ParseRfc3339("2027-01-31"), k2027Jan31);
  EXPECT_EQ(ParseRfc3339("1970-01-01"), 0);
}

TEST(TimeTest, ParseLeapYears) {
  EXPECT_EQ(ParseRfc3339("2000-02-29"), 951782400000);  // divisible by 400
  EXPECT_EQ(ParseRfc3339("2024-02-29T12:34:56Z"), 1709210096000);
  EXPECT_EQ(ParseRfc3339("2023-02-29"), std::nullopt);  // not divisible by 4
  EXPECT_EQ(ParseRfc3339("1900-02-29"), std::nullopt);  // divisible by 100, not by 400
  EXPECT_EQ(ParseRfc3339("2024-02-30"), std::nullopt);
}

TEST(TimeTest, ParseRejectsImpossibleDatesAndTimes) {
  for (const char* text : {"2027-00-10", "2027-13-01", "2027-01-00", "2027-01-32", "2027-04-31",
                           "2027-01-31T24:00:00Z", "2027-01-31T23:60:00Z",
                           "2027-01-31T00:00:00+24:00", "2027-01-31T00:00:00+01:60"}) {
    EXPECT_EQ(ParseRfc3339(text), std::nullopt) << text;
  }
}

TEST(TimeTest, ParseRejectsMalformedText) {
  for (const char* text : {"",
                           "abc",
                           "2027",
                           "2027-01-3",
                           "2027-1-31",
                           "2027/01/31",
                           "27-01-31",
                           "2027-01-31x",
                           "2027-01-31T",
                           "2027-01-31T00:00Z",
                           "2027-01-31T00:00:00",
                           "2027-01-31 00:00:00Z",
                           "2027-01-31T00:00:00.Z",
                           "2027-01-31T00:00:00ZZ",
                           "2027-01-31T00:00:00+0200",
                           "2027-01-31T00:00:00+02",
                           "2027-01-31T00:00:00+02:00x",
                           "2027-01-31T0a:00:00Z",
                           " 2027-01-31",
                           "2027-01-31T00:00:00 Z"}) {
    EXPECT_EQ(ParseRfc3339(text), std::nullopt) << '"' << text << '"';
  }
}

TEST(TimeTest, FormatParseRoundTrip) {
  for (int64_t ms :
       {int64_t{0}, k2027Jan31 + 999, int64_t{1709210096123}, int64_t{4102444799000}}) {
    EXPECT_EQ(ParseRfc3339(FormatRfc3339Millis(ms)), ms);
  }
}

TEST(TimeTest, ClocksMove) {
  EXPECT_GT(NowMs(), 1577836800000);  // after 2020: a sane wall clock
  int64_t a = MonotonicUs();
  EXPECT_GE(MonotonicUs(), a);
}

}  // namespace
}  // namespace toolgate
