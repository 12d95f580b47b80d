#include "request_fields.h"

#include <set>

#include "toolgate/core/problem.h"

namespace toolgate::registry {

std::optional<ParsedJson> ParseObjectBody(std::string_view body, simdjson::dom::object* object,
                                          v1::Problem* problem) {
  auto doc = ParseJson(body);
  if (!doc.ok() || doc->root.get_object().get(*object) != simdjson::SUCCESS) {
    *problem = core::MakeProblem("invalid_json", "Send a JSON object as the request body.");
    return std::nullopt;
  }
  return std::move(doc).value();
}

size_t CharCount(std::string_view utf8) {
  size_t n = 0;
  for (char c : utf8) {
    if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) ++n;  // not a continuation byte
  }
  return n;
}

bool FieldReader::Has(std::string_view key) const {
  return Element(key).has_value();
}

std::optional<simdjson::dom::element> FieldReader::Element(std::string_view key) const {
  simdjson::dom::element e;
  if (object_[key].get(e) != simdjson::SUCCESS || e.is_null()) return std::nullopt;
  return e;
}

void FieldReader::AddError(std::string_view field, std::string_view message) {
  if (ok()) problem_ = core::MakeProblem("validation_failed", "Fix the fields listed in errors.");
  core::AddFieldError(&problem_, field, message);
}

std::optional<std::string> FieldReader::String(std::string_view key, bool required,
                                               size_t min_chars, size_t max_chars) {
  std::string value;
  switch (GetString(object_, key, &value)) {
    case Field::kAbsent:
      if (required) AddError(key, "is required");
      return std::nullopt;
    case Field::kWrongType:
      AddError(key, "must be a string");
      return std::nullopt;
    case Field::kOk:
      break;
  }
  size_t chars = CharCount(value);
  if (chars < min_chars || chars > max_chars) {
    AddError(key, min_chars == 0 ? "must be at most " + std::to_string(max_chars) + " characters"
                                 : "must be " + std::to_string(min_chars) + " to " +
                                       std::to_string(max_chars) + " characters");
    return std::nullopt;
  }
  if (value.find('\0') != std::string::npos) {
    AddError(key, "must not contain NUL characters");
    return std::nullopt;
  }
  return value;
}

std::optional<std::string> FieldReader::OneOf(std::string_view key, bool required,
                                              const std::vector<std::string_view>& allowed) {
  std::string value;
  Field f = GetString(object_, key, &value);
  if (f == Field::kAbsent) {
    if (required) AddError(key, "is required");
    return std::nullopt;
  }
  for (auto a : allowed) {
    if (f == Field::kOk && value == a) return value;
  }
  std::string list;
  for (auto a : allowed) list += (list.empty() ? "\"" : ", \"") + std::string(a) + "\"";
  AddError(key, "must be one of " + list);
  return std::nullopt;
}

std::optional<int64_t> FieldReader::Int(std::string_view key, bool required, int64_t min,
                                        int64_t max) {
  int64_t value = 0;
  Field f = GetInt(object_, key, &value);
  if (f == Field::kAbsent) {
    if (required) AddError(key, "is required");
    return std::nullopt;
  }
  if (f == Field::kWrongType || value < min || value > max) {
    AddError(key, "must be an integer from " + std::to_string(min) + " to " + std::to_string(max));
    return std::nullopt;
  }
  return value;
}

std::optional<bool> FieldReader::Bool(std::string_view key) {
  bool value = false;
  switch (GetBool(object_, key, &value)) {
    case Field::kAbsent:
      return std::nullopt;
    case Field::kWrongType:
      AddError(key, "must be true or false");
      return std::nullopt;
    case Field::kOk:
      break;
  }
  return value;
}

std::optional<std::vector<std::string>> FieldReader::StringArray(std::string_view key,
                                                                 size_t max_items,
                                                                 size_t max_chars) {
  std::vector<std::string> values;
  switch (GetStringArray(object_, key, &values)) {
    case Field::kAbsent:
      return std::nullopt;
    case Field::kWrongType:
      AddError(key, "must be an array of strings");
      return std::nullopt;
    case Field::kOk:
      break;
  }
  if (values.size() > max_items) {
    AddError(key, "must have at most " + std::to_string(max_items) + " items");
    return std::nullopt;
  }
  std::set<std::string_view> seen;
  for (const auto& v : values) {
    size_t chars = CharCount(v);
    if (chars < 1 || chars > max_chars || v.find('\0') != std::string::npos) {
      AddError(key, "each item must be 1 to " + std::to_string(max_chars) + " characters");
      return std::nullopt;
    }
    if (!seen.insert(v).second) {
      AddError(key, "\"" + v + "\" is repeated");
      return std::nullopt;
    }
  }
  return values;
}

}  // namespace toolgate::registry
