#include "dev_vars.h"

#include <algorithm>

#include "toolgate/base/json_writer.h"
#include "toolgate/base/strings.h"
#include "toolgate/core/env_keys.h"

namespace toolgate::cli {
namespace {

// The blanks of a line: spaces, tabs, and the CR of a CRLF line end.
constexpr std::string_view kLineBlanks = " \t\r";

bool IsBlank(char c) {
  return kLineBlanks.find(c) != std::string_view::npos;
}

// Whether what follows a closing quote may end the line: blanks, then nothing or a comment.
bool OnlyCommentLeft(std::string_view rest) {
  rest = Trim(rest, kLineBlanks);
  return rest.empty() || rest.front() == '#';
}

// The value part of a line (after '='). The error says what is wrong, never the value.
Result<std::string> ParseValue(std::string_view raw) {
  std::string_view v = Trim(raw, kLineBlanks);
  if (v.empty()) return std::string();
  if (v.front() == '\'') {
    const size_t close = v.find('\'', 1);
    if (close == std::string_view::npos) return Status::InvalidArgument("unterminated ' quote");
    if (!OnlyCommentLeft(v.substr(close + 1))) {
      return Status::InvalidArgument("text after the closing ' quote");
    }
    return std::string(v.substr(1, close - 1));
  }
  if (v.front() == '"') {
    std::string out;
    for (size_t i = 1; i < v.size(); ++i) {
      const char c = v[i];
      if (c == '"') {
        if (!OnlyCommentLeft(v.substr(i + 1))) {
          return Status::InvalidArgument("text after the closing \" quote");
        }
        return out;
      }
      if (c != '\\') {
        out.push_back(c);
        continue;
      }
      if (++i == v.size()) break;
      switch (v[i]) {
        case 'n':
          out.push_back('\n');
          break;
        case 't':
          out.push_back('\t');
          break;
        case '"':
        case '\\':
        case '$':
          out.push_back(v[i]);
          break;
        default:
          return Status::InvalidArgument(std::string("unknown escape \\") + v[i] +
                                         " in a \" quoted value");
      }
    }
    return Status::InvalidArgument("unterminated \" quote");
  }
  // A bare value: " #" starts a comment, so "a#b" keeps its '#'.
  for (size_t i = 1; i < v.size(); ++i) {
    if (v[i] == '#' && IsBlank(v[i - 1])) {
      v = Trim(v.substr(0, i), kLineBlanks);
      break;
    }
  }
  return std::string(v);
}

}  // namespace

Result<std::vector<DevVar>> ParseDevVars(std::string_view text, std::string_view source) {
  std::vector<DevVar> out;
  size_t number = 0;
  size_t start = 0;
  while (start < text.size()) {
    const size_t end = std::min(text.find('\n', start), text.size());
    std::string_view line = Trim(text.substr(start, end - start), kLineBlanks);
    start = end + 1;
    ++number;
    auto fail = [&](std::string_view what) {
      return Status::InvalidArgument(std::string(source) + ":" + std::to_string(number) + ": " +
                                     std::string(what));
    };
    if (line.empty() || line.front() == '#') continue;
    if (line.starts_with("export ")) line = Trim(line.substr(7), kLineBlanks);
    const size_t eq = line.find('=');
    if (eq == std::string_view::npos) return fail("not NAME=VALUE");
    const std::string name(Trim(line.substr(0, eq), kLineBlanks));
    if (!core::IsValidEnvKeyName(name)) {
      return fail("the name must match [A-Za-z_][A-Za-z0-9_]*");
    }
    auto value = ParseValue(line.substr(eq + 1));
    if (!value.ok()) return fail(value.status().message() + " (" + name + ")");
    for (const DevVar& seen : out) {
      if (seen.name == name) return fail(name + " is given twice");
    }
    out.push_back({name, std::move(*value)});
  }
  return out;
}

Result<DevVar> ParseEnvWord(std::string_view word) {
  const size_t eq = word.find('=');
  if (eq == std::string_view::npos) {
    return Status::InvalidArgument("--env takes NAME=VALUE");
  }
  std::string name(word.substr(0, eq));
  if (!core::IsValidEnvKeyName(name)) {
    return Status::InvalidArgument("--env: the name must match [A-Za-z_][A-Za-z0-9_]*");
  }
  return DevVar{std::move(name), std::string(word.substr(eq + 1))};
}

Result<std::vector<DevVar>> DevEnv(const std::vector<std::string>& declared_keys,
                                   const std::vector<DevVar>& from_file,
                                   const std::vector<DevVar>& from_words) {
  auto check = [&](const DevVar& v) -> Status {
    if (std::find(declared_keys.begin(), declared_keys.end(), v.name) != declared_keys.end()) {
      return Status::Ok();
    }
    std::string declared;
    for (const auto& k : declared_keys) declared += (declared.empty() ? "" : ", ") + k;
    return Status::InvalidArgument(v.name + " is not a declared key of this tool (declared_keys: " +
                                   (declared.empty() ? "none" : declared) +
                                   "); add it to the manifest or remove it");
  };
  std::vector<DevVar> out;
  for (const DevVar& v : from_file) {
    if (Status s = check(v); !s.ok()) return s;
    out.push_back(v);
  }
  std::vector<std::string> given;
  for (const DevVar& v : from_words) {
    if (Status s = check(v); !s.ok()) return s;
    if (std::find(given.begin(), given.end(), v.name) != given.end()) {
      return Status::InvalidArgument("--env " + v.name + " is given twice");
    }
    given.push_back(v.name);
    auto same =
        std::find_if(out.begin(), out.end(), [&](const DevVar& o) { return o.name == v.name; });
    if (same != out.end()) {
      same->value = v.value;
    } else {
      out.push_back(v);
    }
  }
  return out;
}

std::string DevEnvJson(const std::vector<DevVar>& env) {
  JsonWriter w;
  w.BeginObject();
  for (const DevVar& v : env) w.Field(v.name, v.value);
  w.EndObject();
  return w.Take();
}

}  // namespace toolgate::cli
