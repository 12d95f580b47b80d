// HTTP/1.1 on the wire, once for every server Toolgate writes itself (the edge's front, the
// egress gateway, the services' admin ports): a request head parsed, the framing rules that keep
// two parsers from reading one head differently, and responses written.
//
//   auto head = net::ParseRequestHead(bytes_through_the_blank_line);
//   if (!head) ...                                   // not a request head
//   if (std::string why = net::FramingError(raw_head, head->version == "HTTP/1.0"); !why.empty())
//     ...                                            // smuggling risk: refuse, never forward
//   send(net::ResponseBytes(200, {{"Content-Type", "text/plain"}}, "ok\n", /*keep_alive=*/false));
//
// Pure functions; a RequestHead is a value. Thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace toolgate::net {

using HeaderList = std::vector<std::pair<std::string, std::string>>;

struct RequestHead {
  std::string method;
  std::string target;
  std::string version;  // "HTTP/1.1"
  // Every header in order, its name lower-cased and its value trimmed.
  HeaderList headers;

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
  // The target without its query string ("/metrics?x=1" -> "/metrics").
  std::string_view Path() const;
};

// The head (request line, headers, blank line); nullopt when it is not one. Lenient about what
// FramingError refuses: callers that relay or frame bodies check that first.
std::optional<RequestHead> ParseRequestHead(std::string_view head);

// Why a request head (from the request line through the last header's CRLF, or with the blank
// line) may not be relayed (RFC 9112 sections 2.2, 5 and 6), or "" when it may: a bare CR, LF
// or NUL; a folded line; a header line without a colon or whose name is no token (whitespace
// before the colon); both Content-Length and Transfer-Encoding; Content-Lengths that are not one
// number or disagree; a Transfer-Encoding on HTTP/1.0; any Transfer-Encoding but "chunked" alone.
// A head that two parsers could frame differently is how requests are smuggled.
std::string FramingError(std::string_view head, bool http10);

// "OK", "Not Found", ...; "Unknown" for a status without a phrase here.
const char* ReasonPhrase(int status);

// A whole HTTP/1.1 response: the status line, headers, "Connection: close" or "Connection:
// keep-alive" as keep_alive says, Content-Length, then the body. 204 and 304 carry neither
// length nor body.
std::string ResponseBytes(int status, const HeaderList& headers, std::string_view body,
                          bool keep_alive);
// ResponseBytes without the body, its Content-Length still body_length: the answer to HEAD.
std::string ResponseHeadBytes(int status, const HeaderList& headers, uint64_t body_length,
                              bool keep_alive);

// The head of a response whose body follows in chunks (Transfer-Encoding: chunked): an event
// stream. Chunk() frames one piece of the body (nothing for an empty piece, which would end it);
// kLastChunk ends it.
std::string ChunkedResponseHead(int status, const HeaderList& headers, bool keep_alive);
std::string Chunk(std::string_view data);
inline constexpr std::string_view kLastChunk = "0\r\n\r\n";

}  // namespace toolgate::net
