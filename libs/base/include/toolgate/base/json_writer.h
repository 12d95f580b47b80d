// JsonWriter: a small, allocation-friendly JSON emitter.
//
// Calls must form a well-nested document; commas are inserted automatically. Strings are escaped
// per RFC 8259 (control characters as \u00XX); invalid UTF-8 is passed through unchanged, which is
// what the handler produced. Not thread-safe; one writer per document.
//
//   JsonWriter w;
//   w.BeginObject().Key("a").Int(1).Key("b").String("x").EndObject();
//   std::string json = w.Take();
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace toolgate {

class JsonWriter {
 public:
  JsonWriter& BeginObject();
  JsonWriter& EndObject();
  JsonWriter& BeginArray();
  JsonWriter& EndArray();
  JsonWriter& Key(std::string_view key);
  JsonWriter& String(std::string_view value);
  JsonWriter& Int(int64_t value);
  JsonWriter& Bool(bool value);
  JsonWriter& Null();
  // Inserts already-encoded JSON text as one value; the caller vouches for its validity.
  JsonWriter& Raw(std::string_view json);

  // Shorthands for "key": value.
  JsonWriter& Field(std::string_view key, std::string_view value) { return Key(key).String(value); }
  JsonWriter& Field(std::string_view key, const char* value) { return Key(key).String(value); }
  JsonWriter& Field(std::string_view key, int64_t value) { return Key(key).Int(value); }
  JsonWriter& Field(std::string_view key, int value) { return Key(key).Int(value); }
  JsonWriter& Field(std::string_view key, bool value) { return Key(key).Bool(value); }
  // "key": value, or "key": null when value is empty.
  JsonWriter& FieldOrNull(std::string_view key, std::string_view value);

  const std::string& str() const { return out_; }
  std::string Take() { return std::move(out_); }

  // Appends the escaped form of s, quotes included, to out.
  static void AppendQuoted(std::string& out, std::string_view s);
  // The JSON string literal for s.
  static std::string Quote(std::string_view s);

 private:
  void BeforeValue();
  std::string out_;
  std::vector<bool> first_;  // per open container: no element written yet
  bool after_key_ = false;
};

}  // namespace toolgate
