// Prices on MCP: what tools/list shows of a tool's price and tools/call of a call's cost, as
// members of the entries' and results' _meta (docs/mcp.md, "Prices"), so that an agent can read
// them before and after a call. Pure functions: no I/O, thread-safe.
//
//   tools/list entry  _meta["io.toolgate/price"] = {"currency":"USD", "function_micro_usd",
//                     "expected_compute_micro_usd" (the version's recent median; null before any
//                     call), "max_compute_micro_usd" (the whole timeout), "max_hold_micro_usd"}
//   tools/call result _meta["io.toolgate/cost"]  = {"currency":"USD", "total_micro_usd",
//                     "compute_micro_usd", "function_micro_usd", "available_micro_usd",
//                     "budget_remaining_micro_usd" (null: no spending limit applied),
//                     "budget_limit", "execution_id"}
// Other _meta members of a handler's own entry or result are kept.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "toolgate/v1/toolgate.pb.h"

namespace toolgate::edge {

inline constexpr std::string_view kPriceMetaKey = "io.toolgate/price";
inline constexpr std::string_view kCostMetaKey = "io.toolgate/cost";

struct ToolPrice {
  int64_t function_micro_usd = 0;  // the fee per call for this caller (0: its own function)
  int64_t max_compute_micro_usd = 0;
  std::optional<int64_t> expected_compute_micro_usd;  // nullopt: no recent call to go by
};

// A workspace tool's price for the organization listing it; median is billing's answer for its
// version (nullptr: billing could not say, then neither expected nor max compute is known and
// max_compute_micro_usd is 0).
ToolPrice PriceOf(const v1::WorkspaceTool& tool, const v1::ComputeMedian* median);

// The price a function's own endpoint shows for each of its tools, from the summary of the
// tools/list call that listed them (its fee is the fee of each call; the version's compute for
// the whole timeout) and median, billing's answer for the version (nullptr: it could not say).
ToolPrice PriceOfListingCall(const v1::Summary& summary, const v1::ComputeMedian* median);

// The JSON object shown under kPriceMetaKey.
std::string PriceMetaJson(const ToolPrice& price);
// tool_json (one tools/list entry) with _meta[kPriceMetaKey] set; unchanged when it is not an
// object.
std::string WithToolPrice(std::string_view tool_json, const ToolPrice& price);
// A JSON-RPC response of a tools/list with every entry of result.tools priced; unchanged when it
// holds no tools array.
std::string WithListedToolPrices(std::string_view response_json, const ToolPrice& price);
// A JSON-RPC response of a tools/call with result._meta[kCostMetaKey] set from the summary of
// the invocation that answered it; unchanged when it holds no result object (an error).
std::string WithCallCost(std::string_view response_json, const v1::Summary& summary);

}  // namespace toolgate::edge
