#include "lua_json.h"

#include <algorithm>
#include <charconv>
#include <climits>
#include <cmath>
#include <vector>

#include "toolgate/base/json_writer.h"

namespace toolgate::executor::lua {
namespace {

// json.null is a light userdata pointing here: unique, comparable with ==, never collected.
char null_sentinel;

bool IsNull(lua_State* L, int idx) {
  return lua_islightuserdata(L, idx) && lua_touserdata(L, idx) == &null_sentinel;
}

// The shortest text that reads back as d (d is finite).
std::string FormatDouble(double d) {
  char buf[32];
  auto result = std::to_chars(buf, buf + sizeof(buf), d);
  return std::string(buf, result.ptr);
}

// Walks a Lua value with raw accesses only, so it neither runs Lua code nor raises: a Lua error
// would longjmp over this object's destructor.
class Encoder {
 public:
  Encoder(lua_State* L, size_t max_bytes) : L_(L), max_bytes_(max_bytes) {}

  EncodeStatus Encode(int idx, std::string* out, std::string* error) {
    if (Value(lua_absindex(L_, idx), 0)) {
      *out = writer_.Take();
      return EncodeStatus::kOk;
    }
    if (too_large_) return EncodeStatus::kTooLarge;
    *error = std::move(error_);
    return EncodeStatus::kInvalid;
  }

 private:
  bool Fail(std::string message) {
    error_ = std::move(message);
    return false;
  }

  bool Fits() {
    if (writer_.str().size() <= max_bytes_) return true;
    too_large_ = true;
    return false;
  }

  bool Value(int idx, int depth) {
    switch (lua_type(L_, idx)) {
      case LUA_TNIL:
        writer_.Null();
        return true;
      case LUA_TBOOLEAN:
        writer_.Bool(lua_toboolean(L_, idx) != 0);
        return true;
      case LUA_TNUMBER:
        if (lua_isinteger(L_, idx)) {
          writer_.Int(lua_tointeger(L_, idx));
        } else {
          double d = lua_tonumber(L_, idx);
          if (!std::isfinite(d)) return Fail("cannot encode NaN or infinity");
          writer_.Raw(FormatDouble(d));
        }
        return Fits();
      case LUA_TSTRING: {
        size_t n;
        const char* s = lua_tolstring(L_, idx, &n);
        if (!simdjson::validate_utf8(s, n)) {
          return Fail("cannot encode a string that is not valid UTF-8");
        }
        writer_.String(std::string_view(s, n));
        return Fits();
      }
      case LUA_TTABLE:
        return Table(idx, depth);
      default:
        if (IsNull(L_, idx)) {
          writer_.Null();
          return true;
        }
        return Fail(std::string("cannot encode a ") + luaL_typename(L_, idx) + " value");
    }
  }

  bool Table(int idx, int depth) {
    if (depth >= kMaxJsonDepth) {
      return Fail("cannot encode tables nested deeper than " + std::to_string(kMaxJsonDepth) +
                  " levels");
    }
    const void* self = lua_topointer(L_, idx);
    if (std::find(path_.begin(), path_.end(), self) != path_.end()) {
      return Fail("cannot encode a table that contains itself");
    }
    if (!lua_checkstack(L_, 4)) return Fail("cannot encode: out of Lua stack space");
    path_.push_back(self);
    lua_Integer length = ArrayLength(idx);
    bool ok = length > 0 ? Array(idx, length, depth) : Object(idx, depth);
    path_.pop_back();
    return ok;
  }

  // n when the table's keys are exactly 1..n, else 0.
  lua_Integer ArrayLength(int idx) {
    lua_Integer count = 0, max = 0;
    lua_pushnil(L_);
    while (lua_next(L_, idx) != 0) {
      lua_pop(L_, 1);  // the value; the key stays for lua_next
      if (!lua_isinteger(L_, -1) || lua_tointeger(L_, -1) < 1) {
        lua_pop(L_, 1);
        return 0;
      }
      max = std::max(max, lua_tointeger(L_, -1));
      ++count;
    }
    return max == count ? count : 0;
  }

  bool Array(int idx, lua_Integer length, int depth) {
    writer_.BeginArray();
    for (lua_Integer i = 1; i <= length; ++i) {
      lua_rawgeti(L_, idx, i);
      bool ok = Value(lua_gettop(L_), depth + 1);
      lua_pop(L_, 1);
      if (!ok) return false;
    }
    writer_.EndArray();
    return Fits();
  }

  bool Object(int idx, int depth) {
    writer_.BeginObject();
    lua_pushnil(L_);
    while (lua_next(L_, idx) != 0) {
      int top = lua_gettop(L_);
      bool ok = Key(top - 1) && Value(top, depth + 1);
      lua_pop(L_, 1);
      if (!ok) {
        lua_pop(L_, 1);  // the key: lua_next will not see it again
        return false;
      }
    }
    writer_.EndObject();
    return Fits();
  }

  // Writes the key at idx; lua_tostring is not used because it would convert a number key in
  // place and break lua_next.
  bool Key(int idx) {
    switch (lua_type(L_, idx)) {
      case LUA_TSTRING: {
        size_t n;
        const char* s = lua_tolstring(L_, idx, &n);
        if (!simdjson::validate_utf8(s, n)) {
          return Fail("cannot encode a table key that is not valid UTF-8");
        }
        writer_.Key(std::string_view(s, n));
        return true;
      }
      case LUA_TNUMBER:
        writer_.Key(lua_isinteger(L_, idx) ? std::to_string(lua_tointeger(L_, idx))
                                           : FormatDouble(lua_tonumber(L_, idx)));
        return true;
      default:
        return Fail(std::string("cannot encode a table key of type ") + luaL_typename(L_, idx));
    }
  }

  lua_State* L_;
  size_t max_bytes_;
  JsonWriter writer_;
  std::vector<const void*> path_;  // the tables being encoded, outermost first
  std::string error_;
  bool too_large_ = false;
};

// Pushes the value of e. Every local is trivially destructible, so a Lua error raised by an
// allocation here (the memory cap) may unwind through these frames.
void PushElement(lua_State* L, simdjson::dom::element e) {
  luaL_checkstack(L, 3, "json.decode: nesting too deep");
  switch (e.type()) {
    case simdjson::dom::element_type::ARRAY: {
      simdjson::dom::array array = e.get_array().value_unsafe();
      lua_createtable(L, static_cast<int>(std::min<size_t>(array.size(), INT_MAX)), 0);
      lua_Integer i = 0;
      for (simdjson::dom::element child : array) {
        PushElement(L, child);
        lua_rawseti(L, -2, ++i);
      }
      return;
    }
    case simdjson::dom::element_type::OBJECT: {
      simdjson::dom::object object = e.get_object().value_unsafe();
      lua_createtable(L, 0, static_cast<int>(std::min<size_t>(object.size(), INT_MAX)));
      for (simdjson::dom::key_value_pair field : object) {
        lua_pushlstring(L, field.key.data(), field.key.size());
        PushElement(L, field.value);
        lua_rawset(L, -3);
      }
      return;
    }
    case simdjson::dom::element_type::INT64:
      lua_pushinteger(L, e.get_int64().value_unsafe());
      return;
    case simdjson::dom::element_type::UINT64:  // above the largest Lua integer
      lua_pushnumber(L, static_cast<lua_Number>(e.get_uint64().value_unsafe()));
      return;
    case simdjson::dom::element_type::DOUBLE:
      lua_pushnumber(L, e.get_double().value_unsafe());
      return;
    case simdjson::dom::element_type::STRING: {
      std::string_view s = e.get_string().value_unsafe();
      lua_pushlstring(L, s.data(), s.size());
      return;
    }
    case simdjson::dom::element_type::BOOL:
      lua_pushboolean(L, e.get_bool().value_unsafe());
      return;
    case simdjson::dom::element_type::NULL_VALUE:
      lua_pushlightuserdata(L, &null_sentinel);
      return;
  }
}

JsonWorkspace* WorkspaceOf(lua_State* L) {
  return static_cast<JsonWorkspace*>(lua_touserdata(L, lua_upvalueindex(1)));
}

int JsonEncode(lua_State* L) {
  luaL_checkany(L, 1);
  JsonWorkspace* ws = WorkspaceOf(L);
  switch (EncodeJson(L, 1, ws->max_encoded_bytes, &ws->text, &ws->error)) {
    case EncodeStatus::kOk:
      break;
    case EncodeStatus::kInvalid:
      return luaL_error(L, "json.encode: %s", ws->error.c_str());
    case EncodeStatus::kTooLarge:
      return luaL_error(L, "json.encode: the result is larger than the memory limit");
  }
  lua_pushlstring(L, ws->text.data(), ws->text.size());
  return 1;
}

int JsonDecode(lua_State* L) {
  size_t n;
  const char* text = luaL_checklstring(L, 1, &n);
  PushDecodedJson(L, WorkspaceOf(L), std::string_view(text, n));
  return 1;
}

}  // namespace

void PushJsonLibrary(lua_State* L, JsonWorkspace* workspace) {
  lua_createtable(L, 0, 3);
  lua_pushlightuserdata(L, workspace);
  lua_pushcclosure(L, JsonEncode, 1);
  lua_setfield(L, -2, "encode");
  lua_pushlightuserdata(L, workspace);
  lua_pushcclosure(L, JsonDecode, 1);
  lua_setfield(L, -2, "decode");
  lua_pushlightuserdata(L, &null_sentinel);
  lua_setfield(L, -2, "null");
}

EncodeStatus EncodeJson(lua_State* L, int idx, size_t max_bytes, std::string* out,
                        std::string* error) {
  return Encoder(L, max_bytes).Encode(idx, out, error);
}

void PushDecodedJson(lua_State* L, JsonWorkspace* workspace, std::string_view text) {
  simdjson::dom::element root;
  simdjson::error_code error = workspace->parser.parse(text.data(), text.size()).get(root);
  if (error != simdjson::SUCCESS) {
    luaL_error(L, "json.decode: invalid JSON: %s", simdjson::error_message(error));
    return;
  }
  PushElement(L, root);
}

}  // namespace toolgate::executor::lua
