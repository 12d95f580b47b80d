// Reading JSON with simdjson's DOM, for management payloads (the invoke hot path uses the
// on-demand API directly at the edge).
//
//   auto doc = ParseJson(body);
//   if (!doc.ok()) ...                       // not JSON
//   simdjson::dom::object obj;
//   if (doc->root.get_object().get(obj)) ... // not an object
//   std::string name;
//   switch (GetString(obj, "name", &name)) { case Field::kAbsent: ... }
#pragma once

#include <simdjson.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "toolgate/base/status.h"

namespace toolgate {

// A parsed document; root stays valid while the ParsedJson lives. Movable, not copyable.
struct ParsedJson {
  std::unique_ptr<simdjson::dom::parser> parser;
  simdjson::dom::element root;
};

// Returns InvalidArgument with simdjson's message when text is not one JSON value.
Result<ParsedJson> ParseJson(std::string_view text);

enum class Field { kAbsent, kWrongType, kOk };

// Each getter leaves *out untouched unless it returns kOk. A JSON null counts as absent.
Field GetString(simdjson::dom::object obj, std::string_view key, std::string* out);
Field GetInt(simdjson::dom::object obj, std::string_view key, int64_t* out);
Field GetBool(simdjson::dom::object obj, std::string_view key, bool* out);
Field GetStringArray(simdjson::dom::object obj, std::string_view key,
                     std::vector<std::string>* out);
// Any JSON value, re-encoded compactly.
Field GetRaw(simdjson::dom::object obj, std::string_view key, std::string* out);

// Compact JSON text of an element.
std::string ToJson(simdjson::dom::element element);

// object_json (compact) with member key set to value_json (which must be JSON): replaced where
// present, else added last. object_json unchanged when it is not a JSON object.
std::string WithMember(std::string_view object_json, std::string_view key,
                       std::string_view value_json);

}  // namespace toolgate
