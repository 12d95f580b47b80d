#include "http_head.h"

#include <strings.h>

#include <algorithm>
#include <cctype>
#include <cstdio>

#include "toolgate/base/strings.h"
#include "toolgate/core/http_status.h"

namespace toolgate::edge {
namespace {

// Whether the comma-separated list (a Connection value) holds token, ignoring case.
bool ListHas(std::string_view list, std::string_view token) {
  while (!list.empty()) {
    size_t comma = list.find(',');
    if (AsciiLower(TrimBlanks(list.substr(0, comma))) == token) return true;
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return false;
}

}  // namespace

const std::string* RequestHead::Find(std::string_view lower_name) const {
  for (const auto& [name, value] : headers) {
    if (name == lower_name) return &value;
  }
  return nullptr;
}

std::string RequestHead::Value(std::string_view lower_name) const {
  const std::string* v = Find(lower_name);
  return v != nullptr ? *v : std::string();
}

std::string ApiKeyFrom(std::string_view value) {
  while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  if (value.size() > 7 && strncasecmp(value.data(), "bearer ", 7) == 0) value.remove_prefix(7);
  while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  while (!value.empty() && value.back() == ' ') value.remove_suffix(1);
  return std::string(value);
}

std::optional<std::string> RequestHead::Cookie(std::string_view name) const {
  for (const auto& [header, value] : headers) {
    if (header != "cookie") continue;
    std::string_view rest(value);
    while (!rest.empty()) {
      size_t semi = rest.find(';');
      std::string_view pair = TrimBlanks(rest.substr(0, semi));
      size_t eq = pair.find('=');
      if (eq != std::string_view::npos && TrimBlanks(pair.substr(0, eq)) == name) {
        std::string_view v = TrimBlanks(pair.substr(eq + 1));
        if (v.size() >= 2 && v.front() == '"' && v.back() == '"') v = v.substr(1, v.size() - 2);
        return std::string(v);
      }
      if (semi == std::string_view::npos) break;
      rest.remove_prefix(semi + 1);
    }
  }
  return std::nullopt;
}

uint64_t RequestHead::ContentLength() const {
  const std::string* v = Find("content-length");
  if (v == nullptr || v->empty() || v->size() > 18) return 0;
  uint64_t n = 0;
  for (char c : *v) {
    if (c < '0' || c > '9') return 0;
    n = n * 10 + static_cast<uint64_t>(c - '0');
  }
  return n;
}

bool RequestHead::KeepAlive() const {
  const std::string* connection = Find("connection");
  if (version == "HTTP/1.1") return connection == nullptr || !ListHas(*connection, "close");
  return connection != nullptr && ListHas(*connection, "keep-alive");
}

std::optional<RequestHead> ParseRequestHead(std::string_view head) {
  if (!head.ends_with("\r\n\r\n")) return std::nullopt;
  head.remove_suffix(2);
  RequestHead out;
  bool first = true;
  while (!head.empty()) {
    size_t eol = head.find("\r\n");
    std::string_view line = head.substr(0, eol);
    head.remove_prefix(eol + 2);
    if (first) {
      first = false;
      size_t a = line.find(' ');
      size_t b = a == std::string_view::npos ? a : line.find(' ', a + 1);
      if (b == std::string_view::npos || a == 0 || b == a + 1 || b + 1 >= line.size()) {
        return std::nullopt;
      }
      out.method = std::string(line.substr(0, a));
      out.target = std::string(line.substr(a + 1, b - a - 1));
      out.version = std::string(line.substr(b + 1));
      continue;
    }
    size_t colon = line.find(':');
    if (colon == std::string_view::npos || colon == 0) return std::nullopt;
    out.headers.emplace_back(AsciiLower(line.substr(0, colon)),
                             std::string(TrimBlanks(line.substr(colon + 1))));
  }
  if (first) return std::nullopt;
  return out;
}

std::string ResponseBytes(int status,
                          const std::vector<std::pair<std::string, std::string>>& headers,
                          std::string_view body, bool keep_alive) {
  // 204 and 304 carry no body, and so no length (RFC 9110, 8.6 and 15.3.5).
  const bool bodiless = status == 204 || status == 304;
  std::string out;
  size_t size = 64 + (bodiless ? 0 : body.size());
  for (const auto& [name, value] : headers) size += name.size() + value.size() + 4;
  out.reserve(size);
  out.append("HTTP/1.1 ")
      .append(std::to_string(status))
      .append(" ")
      .append(core::ReasonPhrase(status));
  out.append("\r\n");
  for (const auto& [name, value] : headers)
    out.append(name).append(": ").append(value).append("\r\n");
  out.append(keep_alive ? "Connection: keep-alive\r\n" : "Connection: close\r\n");
  if (!bodiless) out.append("Content-Length: ").append(std::to_string(body.size())).append("\r\n");
  out.append("\r\n");
  if (!bodiless) out.append(body);
  return out;
}

std::string ChunkedResponseHead(int status,
                                const std::vector<std::pair<std::string, std::string>>& headers,
                                bool keep_alive) {
  std::string out =
      "HTTP/1.1 " + std::to_string(status) + " " + std::string(core::ReasonPhrase(status)) + "\r\n";
  for (const auto& [name, value] : headers)
    out.append(name).append(": ").append(value).append("\r\n");
  out.append(keep_alive ? "Connection: keep-alive\r\n" : "Connection: close\r\n");
  out.append("Transfer-Encoding: chunked\r\n\r\n");
  return out;
}

std::string Chunk(std::string_view data) {
  if (data.empty()) return {};  // an empty chunk would end the body
  char size[20];
  int n = std::snprintf(size, sizeof size, "%zx\r\n", data.size());
  std::string out(size, static_cast<size_t>(n));
  out.append(data).append("\r\n");
  return out;
}

}  // namespace toolgate::edge
