#include "toolgate/net/http1.h"

#include <algorithm>
#include <cctype>
#include <cstdio>

#include "toolgate/base/strings.h"

namespace toolgate::net {
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

const char* ReasonPhrase(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 201:
      return "Created";
    case 202:
      return "Accepted";
    case 204:
      return "No Content";
    case 304:
      return "Not Modified";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 402:
      return "Payment Required";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 408:
      return "Request Timeout";
    case 409:
      return "Conflict";
    case 413:
      return "Content Too Large";
    case 415:
      return "Unsupported Media Type";
    case 422:
      return "Unprocessable Content";
    case 429:
      return "Too Many Requests";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    case 502:
      return "Bad Gateway";
    case 503:
      return "Service Unavailable";
    case 504:
      return "Gateway Timeout";
    default:
      return "Unknown";
  }
}

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

std::string ResponseBytes(int status, const HeaderList& headers, std::string_view body,
                          bool keep_alive) {
  // 204 and 304 carry no body, and so no length (RFC 9110, 8.6 and 15.3.5).
  const bool bodiless = status == 204 || status == 304;
  std::string out;
  size_t size = 64 + (bodiless ? 0 : body.size());
  for (const auto& [name, value] : headers) size += name.size() + value.size() + 4;
  out.reserve(size);
  out.append("HTTP/1.1 ").append(std::to_string(status)).append(" ").append(ReasonPhrase(status));
  out.append("\r\n");
  for (const auto& [name, value] : headers)
    out.append(name).append(": ").append(value).append("\r\n");
  out.append(keep_alive ? "Connection: keep-alive\r\n" : "Connection: close\r\n");
  if (!bodiless) out.append("Content-Length: ").append(std::to_string(body.size())).append("\r\n");
  out.append("\r\n");
  if (!bodiless) out.append(body);
  return out;
}

std::string ChunkedResponseHead(int status, const HeaderList& headers, bool keep_alive) {
  std::string out =
      "HTTP/1.1 " + std::to_string(status) + " " + std::string(ReasonPhrase(status)) + "\r\n";
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

std::string_view RequestHead::Path() const {
  std::string_view t(target);
  return t.substr(0, t.find('?'));
}

std::string ResponseHeadBytes(int status, const HeaderList& headers, uint64_t body_length,
                              bool keep_alive) {
  std::string out = "HTTP/1.1 " + std::to_string(status) + " " + ReasonPhrase(status) + "\r\n";
  for (const auto& [name, value] : headers)
    out.append(name).append(": ").append(value).append("\r\n");
  out.append(keep_alive ? "Connection: keep-alive\r\n" : "Connection: close\r\n");
  out.append("Content-Length: ").append(std::to_string(body_length)).append("\r\n\r\n");
  return out;
}

std::string FramingError(std::string_view head, bool http10) {
  // Every line ends in CRLF: a bare CR or LF is a line end to one parser and not to another.
  for (size_t i = 0; i < head.size(); ++i) {
    const char ch = head[i];
    if (ch == '\0' || (ch == '\r' && (i + 1 == head.size() || head[i + 1] != '\n')) ||
        (ch == '\n' && (i == 0 || head[i - 1] != '\r'))) {
      return "the request's head has a bare CR, LF or NUL";
    }
  }
  int lengths = 0;
  std::string_view length;
  bool length_disagrees = false;
  int encodings = 0;
  bool chunked = false;
  size_t at = head.find("\r\n") + 2;
  while (at < head.size()) {
    size_t end = head.find("\r\n", at);
    std::string_view line = head.substr(at, end - at);
    at = end + 2;
    if (line.empty()) break;  // the blank line that ends the head
    if (!line.empty() && (line.front() == ' ' || line.front() == '\t')) {
      return "the request has a folded header line (obs-fold)";
    }
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) return "the request has a header line without a colon";
    // Whitespace before the colon makes the name no token (RFC 9112, 5.1).
    if (!IsHttpToken(line.substr(0, colon))) {
      return "the request has a header name that is not a token";
    }
    const std::string name = AsciiLower(line.substr(0, colon));
    const std::string_view value = TrimBlanks(line.substr(colon + 1));
    if (name == "content-length") {
      length_disagrees = length_disagrees || (lengths > 0 && value != length);
      length = value;
      ++lengths;
    } else if (name == "transfer-encoding") {
      chunked = AsciiLower(value) == "chunked";
      ++encodings;
    }
  }
  if (lengths > 0 && encodings > 0) {
    return "the request has both Transfer-Encoding and Content-Length";
  }
  if (lengths > 0 && (length_disagrees || length.empty() || length.size() > 18 ||
                      !std::all_of(length.begin(), length.end(),
                                   [](char ch) { return ch >= '0' && ch <= '9'; }))) {
    return "the request's Content-Length is not one number";
  }
  if (encodings > 0 && http10) return "an HTTP/1.0 request cannot have a Transfer-Encoding";
  if (encodings > 1 || (encodings == 1 && !chunked)) {
    return "a Transfer-Encoding other than chunked alone";
  }
  return "";
}

}  // namespace toolgate::net
