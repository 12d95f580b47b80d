// The `http` table Lua handlers see: http.request, the runtime's outbound HTTP facility.
//
//   local r = http.request{url = "https://api.example.com/v1?q=1", method = "POST",
//                          headers = {["content-type"] = "application/json"},
//                          body = json.encode{a = 1}, timeout_ms = 2000}
//   -- r.status (integer), r.headers (names in lower case), r.body (string)
//
// It goes through the egress gateway with EgressFetch (egress_fetch.h), whose rules it shares
// with the other runtimes: redirects followed (at most 5), https verified, the gateway's refusal
// raised as a Lua error whose message is exactly the gateway's (catchable by pcall; no position
// is added). timeout_ms defaults to the time the call has left and never goes beyond it. The
// request blocks the state (out of the instruction hook's reach, hence the cap); a request
// that fails at the call's deadline ends the call as the deadline does.
#pragma once

#include <cstdint>
#include <lua.hpp>
#include <optional>
#include <string>

#include "toolgate/base/status.h"
#include "toolgate/executor/egress_fetch.h"

namespace toolgate::executor::lua {

// Per-state workspace of http.request, outside the Lua heap and outliving every call into Lua
// (a Lua error unwinds with longjmp, which would skip the destructors of C++ locals).
struct HttpWorkspace {
  EgressConfig egress;      // empty proxy: every request raises kNoEgressMessage
  int64_t deadline_us = 0;  // the call's deadline (MonotonicUs); 0: none yet
  // Ends the call as the deadline does (raises; never returns): called when a request failed at
  // the call's deadline, so the outcome is the deadline's (408), not a caught error.
  int (*deadline_passed)(lua_State* L) = nullptr;
  EgressRequest request;                         // the request being made
  std::optional<Result<EgressResponse>> result;  // its answer, until it is pushed
};

// Pushes the table {request}. workspace must outlive the state.
void PushHttpLibrary(lua_State* L, HttpWorkspace* workspace);

}  // namespace toolgate::executor::lua
