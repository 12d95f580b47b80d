#include "mcp_prices.h"

#include "toolgate/base/json.h"
#include "toolgate/base/json_writer.h"

namespace toolgate::edge {
namespace {

// object's member `name` as JSON when it is an object, else "{}".
std::string ObjectJsonOf(simdjson::dom::object object, std::string_view name) {
  simdjson::dom::element member;
  if (object[name].get(member) != simdjson::SUCCESS || !member.is_object()) return "{}";
  return ToJson(member);
}

// json (an object) with _meta[key] = value_json, its other _meta members kept.
std::string WithMetaMember(std::string_view json, std::string_view key,
                           std::string_view value_json) {
  auto doc = ParseJson(json);
  simdjson::dom::object object;
  if (!doc.ok() || doc->root.get_object().get(object) != simdjson::SUCCESS) {
    return std::string(json);
  }
  return WithMember(json, "_meta", WithMember(ObjectJsonOf(object, "_meta"), key, value_json));
}

}  // namespace

ToolPrice PriceOf(const v1::WorkspaceTool& tool, const v1::ComputeMedian* median) {
  ToolPrice price;
  price.function_micro_usd = tool.owned() ? 0 : tool.price_micro_usd();
  if (median) {
    price.max_compute_micro_usd = median->max_compute_micro_usd();
    if (median->samples() > 0)
      price.expected_compute_micro_usd = median->median_compute_micro_usd();
  }
  return price;
}

ToolPrice PriceOfListingCall(const v1::Summary& summary, const v1::ComputeMedian* median) {
  ToolPrice price;
  price.function_micro_usd = summary.cost().function_micro_usd();
  price.max_compute_micro_usd = summary.max_compute_micro_usd();
  if (median && median->samples() > 0) {
    price.expected_compute_micro_usd = median->median_compute_micro_usd();
  }
  return price;
}

std::string PriceMetaJson(const ToolPrice& price) {
  JsonWriter w;
  w.BeginObject()
      .Field("currency", "USD")
      .Field("function_micro_usd", price.function_micro_usd)
      .Key("expected_compute_micro_usd");
  if (price.expected_compute_micro_usd) {
    w.Int(*price.expected_compute_micro_usd);
  } else {
    w.Null();
  }
  w.Field("max_compute_micro_usd", price.max_compute_micro_usd)
      .Field("max_hold_micro_usd", price.function_micro_usd + price.max_compute_micro_usd);
  return w.EndObject().Take();
}

std::string WithToolPrice(std::string_view tool_json, const ToolPrice& price) {
  return WithMetaMember(tool_json, kPriceMetaKey, PriceMetaJson(price));
}

std::string WithListedToolPrices(std::string_view response_json, const ToolPrice& price) {
  auto doc = ParseJson(response_json);
  simdjson::dom::object response;
  simdjson::dom::element result;
  simdjson::dom::array tools;
  if (!doc.ok() || doc->root.get_object().get(response) != simdjson::SUCCESS ||
      response["result"].get(result) != simdjson::SUCCESS || !result.is_object() ||
      result["tools"].get_array().get(tools) != simdjson::SUCCESS) {
    return std::string(response_json);
  }
  std::string priced = "[";
  for (simdjson::dom::element tool : tools) {
    if (priced.size() > 1) priced += ',';
    priced += WithToolPrice(ToJson(tool), price);
  }
  priced += ']';
  return WithMember(response_json, "result", WithMember(ToJson(result), "tools", priced));
}

std::string WithCallCost(std::string_view response_json, const v1::Summary& summary) {
  auto doc = ParseJson(response_json);
  simdjson::dom::object response;
  simdjson::dom::element result;
  if (!doc.ok() || doc->root.get_object().get(response) != simdjson::SUCCESS ||
      response["result"].get(result) != simdjson::SUCCESS || !result.is_object()) {
    return std::string(response_json);
  }
  JsonWriter w;
  w.BeginObject()
      .Field("currency", "USD")
      .Field("total_micro_usd", summary.cost().total_micro_usd())
      .Field("compute_micro_usd", summary.cost().compute_micro_usd())
      .Field("function_micro_usd", summary.cost().function_micro_usd())
      .Key("available_micro_usd");
  if (summary.has_available_after_micro_usd()) {
    w.Int(summary.available_after_micro_usd());
  } else {
    w.Null();
  }
  w.Key("budget_remaining_micro_usd");
  if (summary.has_budget_remaining_micro_usd()) {
    w.Int(summary.budget_remaining_micro_usd());
  } else {
    w.Null();
  }
  w.Key("budget_limit");
  if (summary.budget_limit().empty()) {
    w.Null();
  } else {
    w.String(summary.budget_limit());
  }
  w.Field("execution_id", summary.execution_id());
  const std::string cost = w.EndObject().Take();
  return WithMember(response_json, "result", WithMetaMember(ToJson(result), kCostMetaKey, cost));
}

}  // namespace toolgate::edge
