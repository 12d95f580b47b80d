// The `json` table Lua handlers see, and the encoder the Lua runtime applies to return values.
//
// Encoding reads tables raw (metamethods are ignored). A table whose keys are exactly 1..n (n > 0)
// is an array; any other table is an object whose keys are strings or numbers (written as their
// decimal text); an empty table is {}. json.null encodes as null; nil encodes as null. Integers
// stay integers; floats use the shortest text that reads back to the same value; NaN and the
// infinities, functions, coroutines, userdata, strings that are not UTF-8, cycles and nesting
// deeper than kMaxJsonDepth cannot be encoded.
//
// Decoding (simdjson) maps objects and arrays to tables, null to json.null (so arrays keep their
// length), integers to Lua integers, other numbers to floats, and a JSON string to a Lua string.
#pragma once

#include <simdjson.h>

#include <cstddef>
#include <lua.hpp>
#include <string>
#include <string_view>

namespace toolgate::executor::lua {

constexpr int kMaxJsonDepth = 1000;

// Per-state workspace of the json functions, kept outside the Lua heap and outliving every call
// into Lua: a Lua error unwinds with longjmp, which would skip the destructors of C++ locals.
struct JsonWorkspace {
  simdjson::dom::parser parser;
  std::string text;              // json.encode's output before it is pushed
  std::string error;             // json.encode's error message before it is raised
  size_t max_encoded_bytes = 0;  // json.encode refuses to produce more (the state's memory cap)
};

// Pushes the table {encode, decode, null}. workspace must outlive the state.
void PushJsonLibrary(lua_State* L, JsonWorkspace* workspace);

enum class EncodeStatus { kOk, kInvalid, kTooLarge };
// Encodes the value at idx into *out (replaced). Raises no Lua error and runs no Lua code. On
// kInvalid *error says why; kTooLarge when the text would exceed max_bytes.
EncodeStatus EncodeJson(lua_State* L, int idx, size_t max_bytes, std::string* out,
                        std::string* error);

// Parses text and pushes its value. Raises a Lua error when text is not JSON.
void PushDecodedJson(lua_State* L, JsonWorkspace* workspace, std::string_view text);

}  // namespace toolgate::executor::lua
