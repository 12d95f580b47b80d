// JsonSchema: a version's input_schema, checked once at publish and applied to every event.
//
// The subset of JSON Schema 2020-12 that describes a tool's arguments, and that MCP clients read:
//   type            a name or a list of names: object, array, string, number, integer, boolean,
//                   null ("integer" also takes 2.0)
//   properties      name -> schema, for members present
//   required        names that must be present
//   additionalProperties   false, or a schema for members not in properties
//   items           a schema for every element of an array
//   enum, const     the value must equal one of these (JSON equality: 1 equals 1.0, member order
//                   does not matter)
//   minimum, maximum, exclusiveMinimum, exclusiveMaximum        numbers
//   minLength, maxLength (Unicode code points), pattern (RE2 syntax, unanchored search: linear
//                   time whatever the pattern or the input), minItems, maxItems
// Every other keyword (title, description, default, examples, format, $schema...) is accepted and
// not checked. Compile refuses a schema whose keywords above have the wrong form, nesting deeper
// than kMaxSchemaDepth, or a pattern RE2 cannot compile.
//
// Thread safety: a compiled JsonSchema is immutable; Validate may run on any number of threads.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "toolgate/base/json.h"
#include "toolgate/base/status.h"

namespace re2 {
class RE2;
}

namespace toolgate::core {

constexpr int kMaxSchemaDepth = 32;
// Validate reports at most this many errors (the first ones, in document order).
constexpr size_t kMaxSchemaErrors = 20;

struct SchemaError {
  std::string pointer;  // RFC 6901 JSON Pointer into the event ("" is the event itself)
  std::string message;  // "is required", "must be a string", ...
};

class JsonSchema {
 public:
  // Compiles schema_json. InvalidArgument naming the first problem ("/properties/age/minimum:
  // must be a number") when it is not a schema this subset understands.
  static Result<std::shared_ptr<const JsonSchema>> Compile(std::string_view schema_json);
  ~JsonSchema();
  JsonSchema(const JsonSchema&) = delete;
  JsonSchema& operator=(const JsonSchema&) = delete;

  // The ways value breaks the schema; empty when it conforms.
  std::vector<SchemaError> Validate(simdjson::dom::element value) const;
  // Same for JSON text; one error at "" when it is not JSON.
  std::vector<SchemaError> Validate(std::string_view json) const;

  // True for a schema that accepts every value, or every object ({} or {"type":"object"} with
  // nothing else checked): the invoke path skips parsing the event for it.
  bool accepts_anything_of_its_type() const { return trivial_; }

 private:
  JsonSchema() = default;
  Status Check(simdjson::dom::element schema, const std::string& at, int depth);
  void Walk(simdjson::dom::element schema, simdjson::dom::element value, std::string& pointer,
            std::vector<SchemaError>& errors) const;

  ParsedJson doc_;
  // Compiled patterns, by the address of the pattern's text inside doc_.
  std::map<const char*, std::unique_ptr<re2::RE2>> patterns_;
  bool trivial_ = false;
};

}  // namespace toolgate::core
