#include "toolgate/base/json.h"

#include "toolgate/base/json_writer.h"

namespace toolgate {

Result<ParsedJson> ParseJson(std::string_view text) {
  ParsedJson out;
  out.parser = std::make_unique<simdjson::dom::parser>();
  simdjson::padded_string padded(text);
  auto err = out.parser->parse(padded).get(out.root);
  if (err) return Status::InvalidArgument(simdjson::error_message(err));
  return out;
}

namespace {
// Looks key up; kAbsent for a missing key or null.
Field Lookup(simdjson::dom::object obj, std::string_view key, simdjson::dom::element* out) {
  if (obj[key].get(*out) != simdjson::SUCCESS) return Field::kAbsent;
  if (out->is_null()) return Field::kAbsent;
  return Field::kOk;
}
}  // namespace

Field GetString(simdjson::dom::object obj, std::string_view key, std::string* out) {
  simdjson::dom::element e;
  if (Lookup(obj, key, &e) == Field::kAbsent) return Field::kAbsent;
  std::string_view sv;
  if (e.get_string().get(sv)) return Field::kWrongType;
  out->assign(sv);
  return Field::kOk;
}

Field GetInt(simdjson::dom::object obj, std::string_view key, int64_t* out) {
  simdjson::dom::element e;
  if (Lookup(obj, key, &e) == Field::kAbsent) return Field::kAbsent;
  int64_t v;
  if (e.get_int64().get(v)) {
    // Accept 5.0 but not 5.5: clients written in JavaScript send numbers as doubles.
    double d;
    if (e.get_double().get(d) || !(d >= -0x1p63 && d < 0x1p63) || d != static_cast<int64_t>(d)) {
      return Field::kWrongType;
    }
    v = static_cast<int64_t>(d);
  }
  *out = v;
  return Field::kOk;
}

Field GetBool(simdjson::dom::object obj, std::string_view key, bool* out) {
  simdjson::dom::element e;
  if (Lookup(obj, key, &e) == Field::kAbsent) return Field::kAbsent;
  bool b;
  if (e.get_bool().get(b)) return Field::kWrongType;
  *out = b;
  return Field::kOk;
}

Field GetStringArray(simdjson::dom::object obj, std::string_view key,
                     std::vector<std::string>* out) {
  simdjson::dom::element e;
  if (Lookup(obj, key, &e) == Field::kAbsent) return Field::kAbsent;
  simdjson::dom::array arr;
  if (e.get_array().get(arr)) return Field::kWrongType;
  std::vector<std::string> values;
  for (auto item : arr) {
    std::string_view sv;
    if (item.get_string().get(sv)) return Field::kWrongType;
    values.emplace_back(sv);
  }
  *out = std::move(values);
  return Field::kOk;
}

Field GetRaw(simdjson::dom::object obj, std::string_view key, std::string* out) {
  simdjson::dom::element e;
  if (Lookup(obj, key, &e) == Field::kAbsent) return Field::kAbsent;
  *out = ToJson(e);
  return Field::kOk;
}

std::string ToJson(simdjson::dom::element element) {
  return simdjson::minify(element);
}

std::string WithMember(std::string_view object_json, std::string_view key,
                       std::string_view value_json) {
  auto doc = ParseJson(object_json);
  simdjson::dom::object obj;
  if (!doc.ok() || doc->root.get_object().get(obj) != simdjson::SUCCESS) {
    return std::string(object_json);
  }
  JsonWriter w;
  w.BeginObject();
  bool replaced = false;
  for (simdjson::dom::key_value_pair field : obj) {
    w.Key(field.key);
    if (field.key == key) {
      w.Raw(value_json);
      replaced = true;
    } else {
      w.Raw(ToJson(field.value));
    }
  }
  if (!replaced) w.Key(key).Raw(value_json);
  return w.EndObject().Take();
}

}  // namespace toolgate
