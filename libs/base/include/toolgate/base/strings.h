// Small ASCII text helpers for the parsers of headers, flags and protocol lines. Pure functions.
#pragma once

#include <cctype>
#include <string>
#include <string_view>

namespace toolgate {

// s with A-Z turned to a-z; every other byte as it is (no locale).
inline std::string AsciiLower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// s without its leading and trailing spaces and tabs (HTTP's optional whitespace, RFC 9110,
// 5.6.3).
inline std::string_view TrimBlanks(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Whether s is an HTTP token (RFC 9110, 5.6.2): what a method or a header name may be. Never
// empty; no spaces, separators or control characters.
inline bool IsHttpToken(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) &&
        std::string_view("!#$%&'*+-.^_`|~").find(c) == std::string_view::npos) {
      return false;
    }
  }
  return true;
}

}  // namespace toolgate
