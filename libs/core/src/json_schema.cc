#include "toolgate/core/json_schema.h"

#include <re2/re2.h>

#include <cmath>
#include <set>

namespace toolgate::core {
namespace {

using simdjson::dom::element;
using simdjson::dom::element_type;

constexpr std::string_view kTypes[] = {"object",  "array",   "string", "number",
                                       "integer", "boolean", "null"};
// Keywords this subset checks; a schema with none of them accepts every value.
constexpr std::string_view kChecked[] = {"type",
                                         "properties",
                                         "required",
                                         "additionalProperties",
                                         "items",
                                         "enum",
                                         "const",
                                         "minimum",
                                         "maximum",
                                         "exclusiveMinimum",
                                         "exclusiveMaximum",
                                         "minLength",
                                         "maxLength",
                                         "pattern",
                                         "minItems",
                                         "maxItems"};

bool IsNumber(element e) {
  auto t = e.type();
  return t == element_type::INT64 || t == element_type::UINT64 || t == element_type::DOUBLE;
}

double NumberOf(element e) {
  double d = 0;
  if (e.get_double().get(d) != simdjson::SUCCESS) return 0;
  return d;
}

bool IsInteger(element e) {
  auto t = e.type();
  if (t == element_type::INT64 || t == element_type::UINT64) return true;
  if (t != element_type::DOUBLE) return false;
  double d = NumberOf(e);
  return std::isfinite(d) && std::floor(d) == d;
}

bool IsCount(element e) {
  return IsInteger(e) && NumberOf(e) >= 0;
}

std::string_view TypeName(element e) {
  switch (e.type()) {
    case element_type::OBJECT:
      return "object";
    case element_type::ARRAY:
      return "array";
    case element_type::STRING:
      return "string";
    case element_type::BOOL:
      return "boolean";
    case element_type::NULL_VALUE:
      return "null";
    default:
      return IsInteger(e) ? "integer" : "number";
  }
}

bool HasType(element value, std::string_view type) {
  if (type == "number") return IsNumber(value);
  if (type == "integer") return IsInteger(value);
  return TypeName(value) == type;
}

// JSON equality: numbers by value, objects whatever their member order.
bool Equal(element a, element b) {
  if (IsNumber(a) && IsNumber(b)) return NumberOf(a) == NumberOf(b);
  if (a.type() != b.type()) return false;
  switch (a.type()) {
    case element_type::STRING:
      return std::string_view(a) == std::string_view(b);
    case element_type::BOOL:
      return bool(a) == bool(b);
    case element_type::NULL_VALUE:
      return true;
    case element_type::ARRAY: {
      simdjson::dom::array x = a, y = b;
      if (x.size() != y.size()) return false;
      auto i = x.begin(), j = y.begin();
      for (; i != x.end(); ++i, ++j) {
        if (!Equal(*i, *j)) return false;
      }
      return true;
    }
    case element_type::OBJECT: {
      simdjson::dom::object x = a, y = b;
      if (x.size() != y.size()) return false;
      for (auto field : x) {
        element other;
        if (y.at_key(field.key).get(other) != simdjson::SUCCESS || !Equal(field.value, other)) {
          return false;
        }
      }
      return true;
    }
    default:
      return false;
  }
}

size_t CodePoints(std::string_view s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

// RFC 6901: "~" and "/" in a member name are escaped.
void AppendToken(std::string& pointer, std::string_view token) {
  pointer.push_back('/');
  for (char c : token) {
    if (c == '~') {
      pointer += "~0";
    } else if (c == '/') {
      pointer += "~1";
    } else {
      pointer.push_back(c);
    }
  }
}

std::string FormatNumber(double d) {
  if (std::floor(d) == d && std::fabs(d) < 1e15) return std::to_string(static_cast<int64_t>(d));
  std::string s = std::to_string(d);
  while (!s.empty() && s.back() == '0') s.pop_back();
  return s;
}

}  // namespace

JsonSchema::~JsonSchema() = default;

Result<std::shared_ptr<const JsonSchema>> JsonSchema::Compile(std::string_view schema_json) {
  std::shared_ptr<JsonSchema> schema(new JsonSchema());
  auto doc = ParseJson(schema_json);
  if (!doc.ok()) return Status::InvalidArgument("is not JSON: " + doc.status().message());
  schema->doc_ = std::move(*doc);
  Status s = schema->Check(schema->doc_.root, "", 0);
  if (!s.ok()) return s;
  element root = schema->doc_.root;
  bool trivial = root.type() == element_type::BOOL ? bool(root) : true;
  if (root.type() == element_type::OBJECT) {
    for (std::string_view k : kChecked) {
      element unused;
      if (root.at_key(k).get(unused) == simdjson::SUCCESS) trivial = false;
    }
  }
  schema->trivial_ = trivial;
  return std::shared_ptr<const JsonSchema>(std::move(schema));
}

Status JsonSchema::Check(element schema, const std::string& at, int depth) {
  auto fail = [&](std::string_view keyword, std::string_view what) {
    return Status::InvalidArgument(at + (keyword.empty() ? "" : "/" + std::string(keyword)) + ": " +
                                   std::string(what));
  };
  if (depth > kMaxSchemaDepth) {
    return fail("", "nests deeper than " + std::to_string(kMaxSchemaDepth) + " levels");
  }
  if (schema.type() == element_type::BOOL) return Status::Ok();
  if (schema.type() != element_type::OBJECT) return fail("", "a schema must be an object");
  simdjson::dom::object obj = schema;
  for (auto field : obj) {
    std::string_view key = field.key;
    element v = field.value;
    if (key == "type") {
      std::vector<element> names;
      if (v.type() == element_type::ARRAY) {
        for (element n : simdjson::dom::array(v)) names.push_back(n);
        if (names.empty()) return fail(key, "must name at least one type");
      } else {
        names.push_back(v);
      }
      for (element n : names) {
        bool known = false;
        if (n.type() == element_type::STRING) {
          for (std::string_view t : kTypes) known = known || std::string_view(n) == t;
        }
        if (!known) {
          return fail(key, "must be one of object, array, string, number, integer, boolean, null");
        }
      }
    } else if (key == "properties") {
      if (v.type() != element_type::OBJECT) return fail(key, "must be an object of schemas");
      for (auto p : simdjson::dom::object(v)) {
        std::string next = at + "/properties";
        AppendToken(next, p.key);
        Status s = Check(p.value, next, depth + 1);
        if (!s.ok()) return s;
      }
    } else if (key == "required") {
      if (v.type() != element_type::ARRAY) return fail(key, "must be an array of names");
      for (element n : simdjson::dom::array(v)) {
        if (n.type() != element_type::STRING) return fail(key, "must be an array of names");
      }
    } else if (key == "additionalProperties" || key == "items") {
      Status s = Check(v, at + "/" + std::string(key), depth + 1);
      if (!s.ok()) return s;
    } else if (key == "enum") {
      if (v.type() != element_type::ARRAY || simdjson::dom::array(v).size() == 0) {
        return fail(key, "must be a non-empty array");
      }
    } else if (key == "minimum" || key == "maximum" || key == "exclusiveMinimum" ||
               key == "exclusiveMaximum") {
      if (!IsNumber(v)) return fail(key, "must be a number");
    } else if (key == "minLength" || key == "maxLength" || key == "minItems" || key == "maxItems") {
      if (!IsCount(v)) return fail(key, "must be a non-negative integer");
    } else if (key == "pattern") {
      if (v.type() != element_type::STRING) return fail(key, "must be a string");
      std::string_view text = v;
      RE2::Options options;
      options.set_log_errors(false);
      auto re = std::make_unique<re2::RE2>(re2::StringPiece(text.data(), text.size()), options);
      if (!re->ok()) return fail(key, "is not a valid pattern: " + re->error());
      patterns_[text.data()] = std::move(re);
    }
  }
  return Status::Ok();
}

std::vector<SchemaError> JsonSchema::Validate(std::string_view json) const {
  auto doc = ParseJson(json);
  if (!doc.ok()) return {{"", "is not JSON"}};
  return Validate(doc->root);
}

std::vector<SchemaError> JsonSchema::Validate(element value) const {
  std::vector<SchemaError> errors;
  if (trivial_) return errors;
  std::string pointer;
  Walk(doc_.root, value, pointer, errors);
  return errors;
}

void JsonSchema::Walk(element schema, element value, std::string& pointer,
                      std::vector<SchemaError>& errors) const {
  auto add = [&](std::string message) {
    if (errors.size() < kMaxSchemaErrors) errors.push_back({pointer, std::move(message)});
  };
  if (schema.type() == element_type::BOOL) {
    if (!bool(schema)) add("is not allowed here");
    return;
  }
  simdjson::dom::object s = schema;
  element v;
  if (s.at_key("type").get(v) == simdjson::SUCCESS) {
    bool ok = false;
    std::string names;
    if (v.type() == element_type::ARRAY) {
      for (element n : simdjson::dom::array(v)) {
        ok = ok || HasType(value, std::string_view(n));
        names += (names.empty() ? "" : " or ") + std::string(std::string_view(n));
      }
    } else {
      ok = HasType(value, std::string_view(v));
      names = std::string(std::string_view(v));
    }
    if (!ok) {
      const bool vowel = names == "object" || names == "array" || names == "integer";
      add(std::string("must be ") + (vowel ? "an " : "a ") + names);
      return;  // the rest would only repeat it
    }
  }
  if (s.at_key("enum").get(v) == simdjson::SUCCESS) {
    bool found = false;
    for (element option : simdjson::dom::array(v)) found = found || Equal(option, value);
    if (!found) add("must be one of " + simdjson::minify(v));
  }
  if (s.at_key("const").get(v) == simdjson::SUCCESS && !Equal(v, value)) {
    add("must be " + simdjson::minify(v));
  }
  if (IsNumber(value)) {
    double x = NumberOf(value);
    if (s.at_key("minimum").get(v) == simdjson::SUCCESS && x < NumberOf(v)) {
      add("must be at least " + FormatNumber(NumberOf(v)));
    }
    if (s.at_key("maximum").get(v) == simdjson::SUCCESS && x > NumberOf(v)) {
      add("must be at most " + FormatNumber(NumberOf(v)));
    }
    if (s.at_key("exclusiveMinimum").get(v) == simdjson::SUCCESS && x <= NumberOf(v)) {
      add("must be more than " + FormatNumber(NumberOf(v)));
    }
    if (s.at_key("exclusiveMaximum").get(v) == simdjson::SUCCESS && x >= NumberOf(v)) {
      add("must be less than " + FormatNumber(NumberOf(v)));
    }
  }
  if (value.type() == element_type::STRING) {
    std::string_view text = value;
    size_t length = CodePoints(text);
    if (s.at_key("minLength").get(v) == simdjson::SUCCESS && length < NumberOf(v)) {
      add("must be at least " + FormatNumber(NumberOf(v)) + " characters long");
    }
    if (s.at_key("maxLength").get(v) == simdjson::SUCCESS && length > NumberOf(v)) {
      add("must be at most " + FormatNumber(NumberOf(v)) + " characters long");
    }
    if (s.at_key("pattern").get(v) == simdjson::SUCCESS) {
      std::string_view pattern = v;
      auto it = patterns_.find(pattern.data());
      if (it != patterns_.end() &&
          !RE2::PartialMatch(re2::StringPiece(text.data(), text.size()), *it->second)) {
        add("must match the pattern " + std::string(pattern));
      }
    }
  }
  if (value.type() == element_type::ARRAY) {
    simdjson::dom::array items = value;
    size_t n = items.size();
    if (s.at_key("minItems").get(v) == simdjson::SUCCESS && n < NumberOf(v)) {
      add("must have at least " + FormatNumber(NumberOf(v)) + " items");
    }
    if (s.at_key("maxItems").get(v) == simdjson::SUCCESS && n > NumberOf(v)) {
      add("must have at most " + FormatNumber(NumberOf(v)) + " items");
    }
    if (s.at_key("items").get(v) == simdjson::SUCCESS) {
      size_t index = 0;
      for (element item : items) {
        size_t mark = pointer.size();
        pointer += "/" + std::to_string(index++);
        Walk(v, item, pointer, errors);
        pointer.resize(mark);
      }
    }
  }
  if (value.type() == element_type::OBJECT) {
    simdjson::dom::object members = value;
    if (s.at_key("required").get(v) == simdjson::SUCCESS) {
      for (element name : simdjson::dom::array(v)) {
        element unused;
        std::string_view key = name;
        if (members.at_key(key).get(unused) != simdjson::SUCCESS) {
          size_t mark = pointer.size();
          AppendToken(pointer, key);
          add("is required");
          pointer.resize(mark);
        }
      }
    }
    element properties, additional;
    bool has_properties = s.at_key("properties").get(properties) == simdjson::SUCCESS;
    bool has_additional = s.at_key("additionalProperties").get(additional) == simdjson::SUCCESS;
    for (auto field : members) {
      element sub;
      bool declared = has_properties && properties.at_key(field.key).get(sub) == simdjson::SUCCESS;
      if (!declared && !has_additional) continue;
      size_t mark = pointer.size();
      AppendToken(pointer, field.key);
      if (declared) {
        Walk(sub, field.value, pointer, errors);
      } else if (additional.type() == element_type::BOOL && !bool(additional)) {
        add("is not an allowed property");
      } else {
        Walk(additional, field.value, pointer, errors);
      }
      pointer.resize(mark);
    }
  }
}

}  // namespace toolgate::core
