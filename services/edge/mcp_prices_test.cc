#include "mcp_prices.h"

#include <gtest/gtest.h>

#include "toolgate/base/json.h"

namespace toolgate::edge {
namespace {

v1::WorkspaceTool Tool(int64_t price, bool owned) {
  v1::WorkspaceTool t;
  t.set_function_id("f1");
  t.set_version("1.0.0");
  t.set_price_micro_usd(price);
  t.set_owned(owned);
  return t;
}

TEST(McpPricesTest, AToolCostsItsPriceToOthersAndNothingToItsOwner) {
  v1::ComputeMedian median;
  median.set_median_compute_micro_usd(12);
  median.set_samples(3);
  median.set_max_compute_micro_usd(500);
  ToolPrice other = PriceOf(Tool(2500, false), &median);
  EXPECT_EQ(other.function_micro_usd, 2500);
  EXPECT_EQ(other.max_compute_micro_usd, 500);
  EXPECT_EQ(other.expected_compute_micro_usd, 12);
  EXPECT_EQ(PriceOf(Tool(2500, true), &median).function_micro_usd, 0);
  // No calls yet: nothing to expect; billing unreachable: no compute figures at all.
  median.set_samples(0);
  EXPECT_FALSE(PriceOf(Tool(1, false), &median).expected_compute_micro_usd);
  ToolPrice unknown = PriceOf(Tool(1, false), nullptr);
  EXPECT_FALSE(unknown.expected_compute_micro_usd);
  EXPECT_EQ(unknown.max_compute_micro_usd, 0);
}

TEST(McpPricesTest, ThePriceJoinsAnEntrysOwnMeta) {
  ToolPrice price{2500, 500, 12};
  EXPECT_EQ(PriceMetaJson(price),
            R"({"currency":"USD","function_micro_usd":2500,"expected_compute_micro_usd":12,)"
            R"("max_compute_micro_usd":500,"max_hold_micro_usd":3000})");
  EXPECT_EQ(WithToolPrice(R"({"name":"a","_meta":{"x":1}})", price),
            R"({"name":"a","_meta":{"x":1,"io.toolgate/price":)" + PriceMetaJson(price) + "}}");
  EXPECT_EQ(WithToolPrice(R"({"name":"a"})", ToolPrice{}),
            R"({"name":"a","_meta":{"io.toolgate/price":)" + PriceMetaJson(ToolPrice{}) + "}}");
  EXPECT_EQ(WithToolPrice("[1]", price), "[1]");
}

TEST(McpPricesTest, ACallsResultCarriesItsCostAndWhatIsLeft) {
  v1::Summary s;
  s.mutable_cost()->set_total_micro_usd(107);
  s.mutable_cost()->set_compute_micro_usd(7);
  s.mutable_cost()->set_function_micro_usd(100);
  s.set_execution_id("e1");
  s.set_available_after_micro_usd(9893);
  s.set_budget_remaining_micro_usd(393);
  s.set_budget_limit("key_daily");
  const std::string response =
      R"({"jsonrpc":"2.0","id":1,"result":{"content":[],"_meta":{"keep":true}}})";
  EXPECT_EQ(
      WithCallCost(response, s),
      R"({"jsonrpc":"2.0","id":1,"result":{"content":[],"_meta":{"keep":true,)"
      R"("io.toolgate/cost":{"currency":"USD","total_micro_usd":107,"compute_micro_usd":7,)"
      R"("function_micro_usd":100,"available_micro_usd":9893,)"
      R"("budget_remaining_micro_usd":393,"budget_limit":"key_daily","execution_id":"e1"}}}})");
  v1::Summary bare;
  EXPECT_NE(
      WithCallCost(R"({"id":1,"result":{}})", bare)
          .find(
              R"("available_micro_usd":null,"budget_remaining_micro_usd":null,"budget_limit":null)"),
      std::string::npos);
  const std::string error = R"({"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"x"}})";
  EXPECT_EQ(WithCallCost(error, s), error);
}

TEST(McpPricesTest, AFunctionsOwnListPricesEveryToolFromTheListingCall) {
  v1::Summary summary;
  summary.mutable_cost()->set_function_micro_usd(2500);
  summary.set_max_compute_micro_usd(209);
  v1::ComputeMedian median;
  median.set_samples(3);
  median.set_median_compute_micro_usd(7);
  const ToolPrice price = PriceOfListingCall(summary, &median);
  EXPECT_EQ(price.function_micro_usd, 2500);
  EXPECT_EQ(price.max_compute_micro_usd, 209);
  EXPECT_EQ(price.expected_compute_micro_usd, 7);
  median.set_samples(0);
  EXPECT_FALSE(PriceOfListingCall(summary, &median).expected_compute_micro_usd.has_value());
  EXPECT_FALSE(PriceOfListingCall(summary, nullptr).expected_compute_micro_usd.has_value());

  const std::string listed = WithListedToolPrices(
      R"({"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a"},{"name":"b","_meta":{"x":1}}]}})",
      price);
  auto doc = ParseJson(listed);
  ASSERT_TRUE(doc.ok()) << listed;
  simdjson::dom::array tools = doc->root["result"]["tools"];
  ASSERT_EQ(tools.size(), 2u);
  for (simdjson::dom::element tool : tools) {
    EXPECT_EQ(int64_t(tool["_meta"]["io.toolgate/price"]["function_micro_usd"]), 2500);
    EXPECT_EQ(int64_t(tool["_meta"]["io.toolgate/price"]["max_hold_micro_usd"]), 2709);
  }
  EXPECT_EQ(int64_t(doc->root["result"]["tools"].at(1)["_meta"]["x"]), 1);  // kept
  // Anything but a list of tools is left alone.
  const std::string error = R"({"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"no"}})";
  EXPECT_EQ(WithListedToolPrices(error, price), error);
}

}  // namespace
}  // namespace toolgate::edge
