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

// Whether a Prefer header (RFC 7240: preferences separated by commas, each a token with optional
// "=value" and ";parameters") asks for respond-async; the token is matched case-insensitively.
bool PrefersRespondAsync(std::string_view prefer);

// The longest X-Callback-Url accepted (a webhook target's limit).
inline constexpr size_t kMaxCallbackUrlLength = 2048;

// The longest Idempotency-Key accepted.
inline constexpr size_t kMaxIdempotencyKeyLength = 255;
// An Idempotency-Key header's key: an RFC 8941 sf-string ("..." with \" and \\ escapes) as the
// IETF draft writes it, or the same characters bare; 1 to kMaxIdempotencyKeyLength printable
// ASCII characters. False for anything else.
bool ParseIdempotencyKey(std::string_view header, std::string* key);
// The 400 detail for a header ParseIdempotencyKey refuses.
std::string IdempotencyKeyRefusal();
// What a repeated key's request must match: the SHA-256 of the route (function id, version),
// X-Env-Keys and the body, each delimited so that no two requests share it.
std::string InvokeRequestDigest(std::string_view function_id, std::string_view version,
                                const std::string* env_keys, std::string_view body);

}  // namespace toolgate::edge
