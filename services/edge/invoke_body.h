// The edge's reading of an invoke request body (contract section 3, row 5).
//
// The verdict travels in the InvokeJob and is enforced by the registry stage, after the 401, 404
// and 403 checks, so that a malformed body never reveals whether a function exists.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "toolgate/v1/toolgate.pb.h"

namespace toolgate::edge {

struct InvokeBody {
  v1::BodyCheck check = v1::BODY_OK;
  std::string event_json;  // the event exactly as sent (object or string), when check is OK
};

// Valid JSON object with "event" being an object or a string -> OK and its raw text.
// Not JSON -> BODY_INVALID_JSON; not an object or no "event" -> BODY_MISSING_EVENT (a body that is
// JSON but not an object cannot carry an event); event of another type -> BODY_INVALID_EVENT;
// a body nesting deeper than core::kMaxEventDepth + 1 levels (its event deeper than the limit,
// or, rarely, another member) -> BODY_EVENT_TOO_DEEP, whether or not the rest would parse.
// Thread-safe (per-thread parsers).
InvokeBody ParseInvokeBody(std::string_view body);

// The most X-Toolgate-Max-Cost may say: $1,000,000 (any real ceiling is far below).
inline constexpr int64_t kMaxCostHeaderMicroUsd = 1'000'000'000'000LL;
// X-Toolgate-Max-Cost (invoke and MCP requests): decimal digits only, 1 to
// kMaxCostHeaderMicroUsd; false for anything else.
bool ParseMaxCost(std::string_view text, int64_t* out);
// The 400 detail for a value ParseMaxCost refuses.
std::string MaxCostRefusal();

}  // namespace toolgate::edge
