#include "toolgate/billing/earnings.h"

#include <gtest/gtest.h>

#include "toolgate/base/json.h"
#include "toolgate/base/time.h"

namespace toolgate::billing {
namespace {

// 2026-12-02T13:45:00Z
const int64_t kNow = *ParseRfc3339("2026-12-02T13:45:00Z");

EarningsPeriod PeriodOf(std::string_view from, std::string_view to) {
  auto parsed = ParseEarningsPeriod(from, to, kNow);
  EXPECT_TRUE(std::holds_alternative<EarningsPeriod>(parsed))
      << std::get<v1::Problem>(parsed).DebugString();
  return std::holds_alternative<EarningsPeriod>(parsed) ? std::get<EarningsPeriod>(parsed)
                                                        : EarningsPeriod{};
}

v1::Problem ProblemOf(std::string_view from, std::string_view to) {
  auto parsed = ParseEarningsPeriod(from, to, kNow);
  EXPECT_TRUE(std::holds_alternative<v1::Problem>(parsed));
  return std::holds_alternative<v1::Problem>(parsed) ? std::get<v1::Problem>(parsed)
                                                     : v1::Problem();
}

TEST(EarningsPeriodTest, DefaultsToTheThirtyDaysEndingWithToday) {
  EarningsPeriod p = PeriodOf("", "");
  EXPECT_EQ(FormatRfc3339(p.to_ms), "2026-12-03T00:00:00Z");
  EXPECT_EQ(FormatRfc3339(p.from_ms), "2026-11-03T00:00:00Z");
  // Only one bound given: the other counts from it.
  p = PeriodOf("", "2026-06-01");
  EXPECT_EQ(FormatRfc3339(p.from_ms), "2026-05-02T00:00:00Z");
  p = PeriodOf("2026-11-20", "");
  EXPECT_EQ(FormatRfc3339(p.from_ms), "2026-11-20T00:00:00Z");
  EXPECT_EQ(FormatRfc3339(p.to_ms), "2026-12-03T00:00:00Z");
}

TEST(EarningsPeriodTest, TakesDatesAndTimesAsUtcHalfOpenBounds) {
  EarningsPeriod p = PeriodOf("2026-11-01", "2026-12-01");
  EXPECT_EQ(p.from_ms, *ParseRfc3339("2026-11-01T00:00:00Z"));
  EXPECT_EQ(p.to_ms, *ParseRfc3339("2026-12-01T00:00:00Z"));
  p = PeriodOf("2026-11-01T10:00:00+02:00", "2026-11-01T12:30:00Z");
  EXPECT_EQ(FormatRfc3339(p.from_ms), "2026-11-01T08:00:00Z");
  EXPECT_EQ(FormatRfc3339(p.to_ms), "2026-11-01T12:30:00Z");
  // The longest period is accepted, to the millisecond.
  p = PeriodOf("2025-01-01", "2026-01-02");
  EXPECT_EQ(p.to_ms - p.from_ms, kMaxEarningsDays * kDayMs);
}

TEST(EarningsPeriodTest, RefusesBadBoundsWithA400NamingEach) {
  v1::Problem bad = ProblemOf("yesterday", "2026-13-01");
  EXPECT_EQ(bad.code(), "invalid_period");
  EXPECT_EQ(bad.status(), 400);
  ASSERT_EQ(bad.errors_size(), 2);
  EXPECT_EQ(bad.errors(0).field(), "from");
  EXPECT_EQ(bad.errors(1).field(), "to");

  v1::Problem backwards = ProblemOf("2026-12-01", "2026-11-01");
  EXPECT_EQ(backwards.status(), 400);
  ASSERT_EQ(backwards.errors_size(), 1);
  EXPECT_EQ(backwards.errors(0).field(), "to");
  EXPECT_EQ(ProblemOf("2026-12-01", "2026-12-01").code(), "invalid_period");

  v1::Problem too_long = ProblemOf("2025-01-01", "2026-01-02T00:00:00.001Z");
  EXPECT_EQ(too_long.code(), "invalid_period");
  EXPECT_EQ(too_long.errors(0).field(), "to");
  // Far from now without a to: from is the bound at fault.
  EXPECT_EQ(ProblemOf("2020-01-01", "").errors(0).field(), "from");
}

TEST(CsvCellTest, QuotesPerRfc4180) {
  EXPECT_EQ(CsvCell("plain name"), "plain name");
  EXPECT_EQ(CsvCell(""), "");
  EXPECT_EQ(CsvCell("a,b"), "\"a,b\"");
  EXPECT_EQ(CsvCell("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(CsvCell("two\nlines"), "\"two\nlines\"");
  EXPECT_EQ(CsvCell("cr\rhere"), "\"cr\rhere\"");
  EXPECT_EQ(CsvCell("ünïcödé"), "ünïcödé");
}

TEST(CsvCellTest, MakesFormulasInert) {
  EXPECT_EQ(CsvCell("=HYPERLINK(\"http://evil\",\"x\")"),
            "\"'=HYPERLINK(\"\"http://evil\"\",\"\"x\"\")\"");
  EXPECT_EQ(CsvCell("+1+1"), "'+1+1");
  EXPECT_EQ(CsvCell("-2+3"), "'-2+3");
  EXPECT_EQ(CsvCell("@SUM(A1:A2)"), "'@SUM(A1:A2)");
  EXPECT_EQ(CsvCell("\tcmd"), "'\tcmd");
  EXPECT_EQ(CsvCell("\r=1"), "\"'\r=1\"");
  // Only the first character makes a formula.
  EXPECT_EQ(CsvCell("a=b"), "a=b");
}

EarningsStatement Statement() {
  EarningsStatement s;
  s.org_id = "org-1";
  s.period = PeriodOf("2026-11-01", "2026-12-01");
  EarningsRow a{"2026-11-03", "fn-a", std::string("Weather, daily"), 3, 3000, 2700};
  EarningsRow b{"2026-11-03", "fn-b", std::nullopt, 1, 500, 450};
  EarningsRow c{"2026-11-04", "fn-a", std::string("=cmd|' /C calc'!A0"), 2, 2000, 1800};
  s.rows = {a, b, c};
  s.payouts.push_back(PayoutItem{7, "org-1", 1000, "SEPA 42", "u1", "ops@example.com", 3950,
                                 *ParseRfc3339("2026-11-10T09:00:00Z")});
  s.payable = Payable{4950, 1000, 6000};
  return s;
}

TEST(EarningsCsvTest, HasAHeaderAndOneRowPerDayAndFunction) {
  EXPECT_EQ(EarningsCsv(Statement()),
            "date,function_id,function_name,calls,gross_micro_usd,commission_micro_usd,"
            "net_micro_usd\r\n"
            "2026-11-03,fn-a,\"Weather, daily\",3,3000,300,2700\r\n"
            "2026-11-03,fn-b,,1,500,50,450\r\n"
            "2026-11-04,fn-a,'=cmd|' /C calc'!A0,2,2000,200,1800\r\n");
  EXPECT_EQ(EarningsCsvFilename(Statement().period), "toolgate-earnings-2026-11-01-2026-11-30.csv");
}

TEST(EarningsJsonTest, CarriesRowsTotalsPayoutsAndThePayableAmount) {
  std::string json = EarningsJson(Statement());
  auto doc = ParseJson(json);
  ASSERT_TRUE(doc.ok()) << json;
  auto root = doc->root;
  EXPECT_EQ(std::string_view(root["from"].get_string().value()), "2026-11-01T00:00:00Z");
  EXPECT_EQ(std::string_view(root["to"].get_string().value()), "2026-12-01T00:00:00Z");
  auto items = root["items"].get_array().value();
  ASSERT_EQ(items.size(), 3u);
  EXPECT_EQ(int64_t(items.at(0)["commission_micro_usd"].get_int64().value()), 300);
  EXPECT_TRUE(items.at(1)["function_name"].is_null());
  auto totals = root["totals"];
  EXPECT_EQ(int64_t(totals["calls"].get_int64().value()), 6);
  EXPECT_EQ(int64_t(totals["gross_micro_usd"].get_int64().value()), 5500);
  EXPECT_EQ(int64_t(totals["commission_micro_usd"].get_int64().value()), 550);
  EXPECT_EQ(int64_t(totals["net_micro_usd"].get_int64().value()), 4950);
  auto payouts = root["payouts"].get_array().value();
  ASSERT_EQ(payouts.size(), 1u);
  EXPECT_EQ(std::string_view(payouts.at(0)["payout_id"].get_string().value()), "7");
  // A member's view of a payout does not name the operator.
  EXPECT_TRUE(payouts.at(0)["recorded_by"].error() == simdjson::NO_SUCH_FIELD);
  EXPECT_EQ(int64_t(root["payouts_micro_usd"].get_int64().value()), 1000);
  EXPECT_EQ(int64_t(root["earned_micro_usd"].get_int64().value()), 4950);
  EXPECT_EQ(int64_t(root["paid_out_micro_usd"].get_int64().value()), 1000);
  EXPECT_EQ(int64_t(root["payable_micro_usd"].get_int64().value()), 3950);
}

TEST(PayableTest, IsUnpaidEarningsButNeverMoreThanTheBalance) {
  EXPECT_EQ((Payable{5000, 1000, 10000}.payable_micro_usd()), 4000);
  // Earnings spent on the organization's own calls are gone.
  EXPECT_EQ((Payable{5000, 1000, 2500}.payable_micro_usd()), 2500);
  EXPECT_EQ((Payable{5000, 5000, 10000}.payable_micro_usd()), 0);
  EXPECT_EQ((Payable{5000, 0, -20}.payable_micro_usd()), 0);
  // Credit granted or bought is not earnings: none of it is payable.
  EXPECT_EQ((Payable{0, 0, 1'000'000}.payable_micro_usd()), 0);
}

}  // namespace
}  // namespace toolgate::billing
