// Reading a management request's JSON body field by field, collecting every error into one 422
// problem so the caller can fix them all at once. Internal to the registry library.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "toolgate/base/json.h"
#include "toolgate/v1/toolgate.pb.h"

namespace toolgate::registry {

// Parses body as a JSON object. nullopt and *problem (400 invalid_json) when it is not one.
std::optional<ParsedJson> ParseObjectBody(std::string_view body, simdjson::dom::object* object,
                                          v1::Problem* problem);

// Length in Unicode code points of valid UTF-8 (what simdjson hands out).
size_t CharCount(std::string_view utf8);

class FieldReader {
 public:
  explicit FieldReader(simdjson::dom::object object) : object_(object) {}

  // True when the key is present and not null.
  bool Has(std::string_view key) const;
  // A string of min_chars..max_chars code points without NUL characters. nullopt when absent
  // (an error if required) or invalid (always an error).
  std::optional<std::string> String(std::string_view key, bool required, size_t min_chars,
                                    size_t max_chars);
  // One of the allowed values.
  std::optional<std::string> OneOf(std::string_view key, bool required,
                                   const std::vector<std::string_view>& allowed);
  // An integer in min..max.
  std::optional<int64_t> Int(std::string_view key, bool required, int64_t min, int64_t max);
  std::optional<bool> Bool(std::string_view key);
  // An array of at most max_items distinct strings, each 1..max_chars code points.
  std::optional<std::vector<std::string>> StringArray(std::string_view key, size_t max_items,
                                                      size_t max_chars);
  // The raw element, for fields with their own structure; nullopt when absent.
  std::optional<simdjson::dom::element> Element(std::string_view key) const;

  void AddError(std::string_view field, std::string_view message);
  bool ok() const { return problem_.errors_size() == 0; }
  // 422 validation_failed with every error added so far.
  v1::Problem problem() const { return problem_; }

 private:
  simdjson::dom::object object_;
  v1::Problem problem_;
};

}  // namespace toolgate::registry
