// The HTTP/1.1 a request answered by the edge's front itself needs (http_front.h, FrontRoute):
// its head, parsed, and its response, written. The front has already framed and checked the
// head (request_framer.h): one request line, header lines without folding, a blank line.
//
// Pure functions; a RequestHead is a value.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace toolgate::edge {

struct RequestHead {
  std::string method;
  std::string target;
  std::string version;  // "HTTP/1.1"
  // Every header in order, its name lower-cased and its value trimmed.
  std::vector<std::pair<std::string, std::string>> headers;

  // The first value of the header named lower_name, or nullptr.
  const std::string* Find(std::string_view lower_name) const;
  // Find's value, or "" when the header is absent.
  std::string Value(std::string_view lower_name) const;
  // The value of cookie name from the Cookie headers, or nullopt.
  std::optional<std::string> Cookie(std::string_view name) const;
  // What Content-Length declares; 0 without one.
  uint64_t ContentLength() const;
  // Whether the connection stays open after the answer: HTTP/1.1 without "Connection: close",
  // or HTTP/1.0 with "Connection: keep-alive".
  bool KeepAlive() const;
};

// The API key from an Authorization value, "<key>" or "Bearer <key>" (any case), trimmed; empty
// when there is none.
std::string ApiKeyFrom(std::string_view authorization);

// The head (request line, headers, blank line); nullopt when it is not one.
std::optional<RequestHead> ParseRequestHead(std::string_view head);

// A whole HTTP/1.1 response: the status line, headers, Content-Length, and "Connection: close"
// or "Connection: keep-alive" as keep_alive says, then the body.
// The head of a response whose body follows in chunks (Transfer-Encoding: chunked): an event
// stream. Chunk() frames one piece of the body; kLastChunk ends it.
std::string ChunkedResponseHead(int status,
                                const std::vector<std::pair<std::string, std::string>>& headers,
                                bool keep_alive);
std::string Chunk(std::string_view data);
inline constexpr std::string_view kLastChunk = "0\r\n\r\n";

std::string ResponseBytes(int status,
                          const std::vector<std::pair<std::string, std::string>>& headers,
                          std::string_view body, bool keep_alive);

}  // namespace toolgate::edge
