#include "human_output.h"

#include <gtest/gtest.h>

namespace toolgate::cli {
namespace {

TEST(HumanOutputTest, TableAlignsColumnsAndReadsPaths) {
  std::string rows = R"([
    {"id": "e1", "status_code": 200, "cost": {"total_micro_usd": 17}},
    {"id": "execution-2", "status_code": 500, "cost": {"total_micro_usd": 0}}
  ])";
  EXPECT_EQ(RenderTable(
                rows, {{"ID", "id"}, {"STATUS", "status_code"}, {"COST", "cost.total_micro_usd"}}),
            "ID           STATUS  COST\n"
            "e1           200     17\n"
            "execution-2  500     0\n");
}

TEST(HumanOutputTest, CellsForNullsMissingMembersArraysAndLineBreaks) {
  std::string rows = R"([{"a": null, "tags": ["x", "y"], "n": "one\ntwo", "o": {"k": 1}}])";
  EXPECT_EQ(
      RenderTable(
          rows,
          {{"A", "a"}, {"B", "b"}, {"TAGS", "tags"}, {"N", "n"}, {"O", "o"}, {"DEEP", "o.k.z"}}),
      "A  B  TAGS  N        O        DEEP\n"
      "-  -  x, y  one two  {\"k\":1}  -\n");
  EXPECT_EQ(RenderTable("[]", {{"A", "a"}}), "(none)\n");
  EXPECT_EQ(CellText(R"("plain")"), "plain");
  EXPECT_EQ(CellText("[1,2]"), "[1,2]");
  EXPECT_EQ(CellText("true"), "true");
}

TEST(HumanOutputTest, FieldsFlattenObjectsAndTabulateArrays) {
  std::string detail = R"({
    "function_id": "f1", "name": "Echo",
    "last_7_days": {"executions": 3, "p50_ms": null},
    "input_schema": {"type": "object", "properties": {"n": {"type": "number"}}},
    "declared_keys": [],
    "versions": [{"version": "1.0.0", "runtime": "lua", "limits": {"x": 1}},
                 {"version": "1.1.0", "runtime": "python", "limits": {"x": 2}}],
    "logs": "line 1\nline 2\n"
  })";
  EXPECT_EQ(
      RenderFields(detail),
      "function_id             f1\n"
      "name                    Echo\n"
      "last_7_days.executions  3\n"
      "last_7_days.p50_ms      -\n"
      "input_schema            {\"type\":\"object\",\"properties\":{\"n\":{\"type\":\"number\"}}}\n"
      "declared_keys           -\n"
      "versions:\n"
      "  version  runtime\n"
      "  1.0.0    lua\n"
      "  1.1.0    python\n"
      "logs:\n"
      "  line 1\n"
      "  line 2\n");
  EXPECT_EQ(RenderFields("[1]"), "");
}

TEST(HumanOutputTest, AnExecutionsCallbackReadsAsLinesWithItsAttemptsAsATable) {
  std::string execution = R"({
    "execution_id": "x1", "status": "succeeded",
    "error": null,
    "callback": {"url": "https://hooks.example.com/t", "outcome": "delivered",
                 "attempts": [{"attempt": 1, "attempted_at": "2026-12-02T15:04:05Z",
                               "status_code": 503, "error": null, "outcome": "retry"},
                              {"attempt": 2, "attempted_at": "2026-12-02T15:04:06Z",
                               "status_code": 204, "error": null, "outcome": "delivered"}]},
    "pending": {"url": "https://hooks.example.com/u", "outcome": "pending", "attempts": []}
  })";
  EXPECT_EQ(RenderFields(execution),
            "execution_id      x1\n"
            "status            succeeded\n"
            "error             -\n"
            "callback.url      https://hooks.example.com/t\n"
            "callback.outcome  delivered\n"
            "callback.attempts:\n"
            "  attempt  attempted_at          status_code  error  outcome\n"
            "  1        2026-12-02T15:04:05Z  503          -      retry\n"
            "  2        2026-12-02T15:04:06Z  204          -      delivered\n"
            "pending.url       https://hooks.example.com/u\n"
            "pending.outcome   pending\n"
            "pending.attempts  -\n");
}

TEST(HumanOutputTest, HumanAnswerPicksTableOrFields) {
  TableView view{"items", {{"ID", "id"}}};
  EXPECT_EQ(RenderHuman(R"({"items": [{"id": "a"}], "next_cursor": "c2"})", view),
            "ID\na\nmore: --cursor c2\n");
  EXPECT_EQ(RenderHuman(R"({"items": [{"id": "a"}], "next_cursor": null})", view), "ID\na\n");
  // Another list member, as in {owned, added}.
  EXPECT_EQ(RenderHuman(R"({"owned": [{"id": "a"}], "added": []})", {"owned", {{"ID", "id"}}}),
            "ID\na\n");
  EXPECT_EQ(RenderHuman(R"({"balance_micro_usd": 5})", view), "balance_micro_usd  5\n");
  EXPECT_EQ(RenderHuman("not json", view), "not json");
}

TEST(HumanOutputTest, UsdTextShowsTwoToSixDecimals) {
  EXPECT_EQ(UsdText(0), "$0.00");
  EXPECT_EQ(UsdText(2500), "$0.0025");
  EXPECT_EQ(UsdText(5'000'000), "$5.00");
  EXPECT_EQ(UsdText(1'234'567), "$1.234567");
  EXPECT_EQ(UsdText(-1), "-$0.000001");
  EXPECT_EQ(UsdText(1'000'000'000'000'000'000), "$1000000000000.00");
}

TEST(HumanOutputTest, BudgetReadsAsLimitsAndSpending) {
  EXPECT_EQ(
      RenderBudget(R"({"daily_micro_usd":5000000,"monthly_micro_usd":null,)"
                   R"("spent_today_micro_usd":1200000,"spent_this_month_micro_usd":3400000})"),
      "daily    $5.00 limit, $1.20 spent today (24 %)\n"
      "monthly  no limit, $3.40 spent this month\n");
  // 79.99 % is not rounded up to 80 %; a limit spent in full is reached.
  EXPECT_EQ(RenderBudget(R"({"daily_micro_usd":10000,"monthly_micro_usd":10000,)"
                         R"("spent_today_micro_usd":7999,"spent_this_month_micro_usd":10000})"),
            "daily    $0.01 limit, $0.007999 spent today (79 %)\n"
            "monthly  $0.01 limit, $0.01 spent this month (100 %, reached)\n");
  // Anything else reads as plain fields.
  EXPECT_EQ(RenderBudget(R"({"other":1})"), RenderFields(R"({"other":1})"));
}

}  // namespace
}  // namespace toolgate::cli
