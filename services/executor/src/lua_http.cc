#include "lua_http.h"

#include <algorithm>

#include "toolgate/base/time.h"

namespace toolgate::executor::lua {
namespace {

// How close to the call's deadline a failed request counts as cut by it.
constexpr int64_t kDeadlineSlackUs = 50'000;

HttpWorkspace& WorkspaceOf(lua_State* L) {
  return *static_cast<HttpWorkspace*>(lua_touserdata(L, lua_upvalueindex(1)));
}

// Field `name` of the argument table as a string, or "" when absent. Raises on another type.
void ReadStringField(lua_State* L, const char* name, std::string* out) {
  if (lua_getfield(L, 1, name) != LUA_TNIL) {
    if (lua_type(L, -1) != LUA_TSTRING) luaL_error(L, "http.request: %s must be a string", name);
    size_t n;
    const char* s = lua_tolstring(L, -1, &n);
    out->assign(s, n);
  }
  lua_pop(L, 1);
}

// http.request{url=, method=, headers=, body=, timeout_ms=}
int Request(lua_State* L) {
  HttpWorkspace& ws = WorkspaceOf(L);
  luaL_checktype(L, 1, LUA_TTABLE);
  ws.request = EgressRequest{};
  ws.result.reset();
  ReadStringField(L, "url", &ws.request.url);
  if (ws.request.url.empty()) return luaL_error(L, "http.request: url is required");
  ReadStringField(L, "method", &ws.request.method);
  if (ws.request.method.empty()) ws.request.method = "GET";
  std::transform(ws.request.method.begin(), ws.request.method.end(), ws.request.method.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  ReadStringField(L, "body", &ws.request.body);

  int type = lua_getfield(L, 1, "headers");
  if (type == LUA_TTABLE) {
    lua_pushnil(L);
    while (lua_next(L, -2) != 0) {
      if (lua_type(L, -2) != LUA_TSTRING || !lua_isstring(L, -1)) {
        return luaL_error(L, "http.request: headers must map names to strings");
      }
      size_t name_n, value_n;
      const char* name = lua_tolstring(L, -2, &name_n);
      lua_pushvalue(L, -1);  // tolstring converts a number in place: convert a copy
      const char* value = lua_tolstring(L, -1, &value_n);
      ws.request.headers.emplace_back(std::string(name, name_n), std::string(value, value_n));
      lua_pop(L, 2);
    }
  } else if (type != LUA_TNIL) {
    return luaL_error(L, "http.request: headers must be a table");
  }
  lua_pop(L, 1);

  const int64_t left_ms = ws.deadline_us == 0 ? 30000 : (ws.deadline_us - MonotonicUs()) / 1000;
  ws.request.timeout_ms = std::max<int64_t>(left_ms, 1);
  // Whether the call's deadline, not the handler's timeout_ms, is what limits the request.
  bool capped = ws.deadline_us != 0;
  if (lua_getfield(L, 1, "timeout_ms") != LUA_TNIL) {
    int is_integer = 0;
    lua_Integer timeout = lua_tointegerx(L, -1, &is_integer);
    if (!is_integer || timeout <= 0) {
      return luaL_error(L, "http.request: timeout_ms must be a positive integer");
    }
    capped = capped && timeout >= ws.request.timeout_ms;
    ws.request.timeout_ms = std::min<int64_t>(ws.request.timeout_ms, timeout);
  }
  lua_pop(L, 1);

  ws.result.emplace(EgressFetch(ws.egress, ws.request));
  ws.request = EgressRequest{};  // the headers may hold secrets: gone as soon as they are sent
  // Cut by the call's deadline (curl's timeout or the gateway's 504): the call is over.
  const bool cut = !ws.result->ok() && ws.deadline_us != 0 &&
                   ((capped && ws.result->status().code() == Status::Code::kTimeout) ||
                    MonotonicUs() >= ws.deadline_us - kDeadlineSlackUs);
  if (cut && ws.deadline_passed != nullptr) {
    ws.result.reset();
    return ws.deadline_passed(L);
  }
  if (!ws.result->ok()) {
    const std::string& message = ws.result->status().message();
    lua_pushlstring(L, message.data(), message.size());
    ws.result.reset();
    return lua_error(L);  // the message as it is, without a position: handlers match on it
  }
  const EgressResponse& response = **ws.result;
  lua_createtable(L, 0, 3);
  lua_pushinteger(L, response.status);
  lua_setfield(L, -2, "status");
  lua_createtable(L, 0, static_cast<int>(response.headers.size()));
  for (const auto& [name, value] : response.headers) {
    // A repeated header reads as its values joined with ", " (RFC 9110 section 5.3).
    if (lua_getfield(L, -1, name.c_str()) == LUA_TSTRING) {
      lua_pushliteral(L, ", ");
      lua_pushlstring(L, value.data(), value.size());
      lua_concat(L, 3);
    } else {
      lua_pop(L, 1);
      lua_pushlstring(L, value.data(), value.size());
    }
    lua_setfield(L, -2, name.c_str());
  }
  lua_setfield(L, -2, "headers");
  lua_pushlstring(L, response.body.data(), response.body.size());
  lua_setfield(L, -2, "body");
  ws.result.reset();
  return 1;
}

}  // namespace

void PushHttpLibrary(lua_State* L, HttpWorkspace* workspace) {
  lua_createtable(L, 0, 1);
  lua_pushlightuserdata(L, workspace);
  lua_pushcclosure(L, Request, 1);
  lua_setfield(L, -2, "request");
}

}  // namespace toolgate::executor::lua
