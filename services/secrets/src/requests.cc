#include "toolgate/secrets/requests.h"

#include "toolgate/base/json.h"
#include "toolgate/core/problem.h"

namespace toolgate::secrets {
namespace {

bool NameStart(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}

bool NameChar(char c) {
  return NameStart(c) || (c >= '0' && c <= '9') || c == '.' || c == '-';
}

}  // namespace

bool IsValidSecretName(std::string_view name) {
  if (name.empty() || name.size() > kMaxNameChars || !NameStart(name[0])) return false;
  for (char c : name) {
    if (!NameChar(c)) return false;
  }
  return true;
}

bool IsValidSecretValue(std::string_view value) {
  return !value.empty() && value.size() <= kMaxValueBytes &&
         value.find('\0') == std::string_view::npos;
}

std::variant<v1::Problem, SecretInput> ParseSecretInput(std::string_view body, bool with_name) {
  auto doc = ParseJson(body);
  simdjson::dom::object object;
  if (!doc.ok() || doc->root.get_object().get(object) != simdjson::SUCCESS) {
    return core::MakeProblem("invalid_json", "Send a JSON object as the request body.");
  }
  SecretInput in;
  v1::Problem problem;
  auto fail = [&problem](std::string_view field, std::string_view message) {
    if (problem.errors_size() == 0) {
      problem = core::MakeProblem("validation_failed", "Fix the fields listed in errors.");
    }
    core::AddFieldError(&problem, field, message);
  };
  if (with_name) {
    switch (GetString(object, "name", &in.name)) {
      case Field::kAbsent:
        fail("name", "is required");
        break;
      case Field::kWrongType:
        fail("name", "must be a string");
        break;
      case Field::kOk:
        if (!IsValidSecretName(in.name)) {
          fail("name",
               "must be 1 to 128 characters of letters, digits, '_', '.' or '-', starting with a "
               "letter or '_'");
        }
        break;
    }
  }
  switch (GetString(object, "value", &in.value)) {
    case Field::kAbsent:
      fail("value", "is required");
      break;
    case Field::kWrongType:
      fail("value", "must be a string");
      break;
    case Field::kOk:
      if (!IsValidSecretValue(in.value)) {
        fail("value", "must be 1 byte to 64 KiB, without NUL characters");
      }
      break;
  }
  if (problem.errors_size() > 0) return problem;
  return in;
}

}  // namespace toolgate::secrets
