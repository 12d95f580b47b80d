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

// Character sets for the Trim functions below.
// Spaces and tabs: HTTP's optional whitespace (RFC 9110, 5.6.3).
inline constexpr std::string_view kBlanks = " \t";
// What std::isspace accepts in the "C" locale.
inline constexpr std::string_view kAsciiWhitespace = " \t\n\v\f\r";

// s without the leading bytes that are in `chars`.
inline std::string_view TrimLeft(std::string_view s, std::string_view chars) {
  size_t begin = s.find_first_not_of(chars);
  return begin == std::string_view::npos ? std::string_view() : s.substr(begin);
}

// s without the trailing bytes that are in `chars`.
inline std::string_view TrimRight(std::string_view s, std::string_view chars) {
  size_t end = s.find_last_not_of(chars);
  return end == std::string_view::npos ? std::string_view() : s.substr(0, end + 1);
}

// s without the leading bytes in `leading` and the trailing bytes in `trailing`: for a line
// whose end may also carry a CR or LF that its start may not.
inline std::string_view Trim(std::string_view s, std::string_view leading,
                             std::string_view trailing) {
  return TrimRight(TrimLeft(s, leading), trailing);
}

// s without the leading and trailing bytes that are in `chars`.
inline std::string_view Trim(std::string_view s, std::string_view chars) {
  return Trim(s, chars, chars);
}

// s without its leading and trailing spaces and tabs (HTTP's optional whitespace, RFC 9110,
// 5.6.3).
inline std::string_view TrimBlanks(std::string_view s) {
  return Trim(s, kBlanks);
}

// s without its leading and trailing ASCII whitespace (kAsciiWhitespace).
inline std::string_view TrimAsciiWhitespace(std::string_view s) {
  return Trim(s, kAsciiWhitespace);
}

// s as one word for a POSIX shell: inside single quotes, each quote in s written '\''. Every
// byte else stands as it is, so the result is safe to paste into sh, bash or zsh.
inline std::string ShellQuote(std::string_view s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
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
