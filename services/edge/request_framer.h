// RequestFramer: finds where each HTTP/1.1 request on a connection begins and ends, as bytes
// arrive, without buffering bodies, so that the edge's front (http_front.h) can refuse a request
// before Pistache reads it.
//
// The framer sees the request head whole (at most max_head_bytes), checks its framing, and
// passes it on with the header `X-Toolgate-Client` replaced by the value the owner supplies (any
// copy sent by the client is dropped, so a client cannot name its own address). Body bytes pass
// through as they come; a body declared (Content-Length) or found (chunked) to be longer than
// max_body_bytes (max_upload_bytes for the upload route, upload_route.h) stops the framer before
// any of it is passed on (chunked: before the chunk that crosses the limit). Requests are framed
// one after another (keep-alive and pipelining). An HTTP/1.1 request without a Connection header
// gets "Connection: keep-alive", the protocol's default, which Pistache would otherwise not apply.
//
// With hold_bodies, the framer stops after the head of each request that has a body (a
// Content-Length above 0, or chunked): Feed consumes nothing more, and the phase is kHeld, until
// Admit gives the body's limit for this request (which may only lower the route's limit). The
// owner decides meanwhile, from the head alone, whether the body may be read at all: the caller's
// credentials and route are known before a byte of it is (http_front.h, BodyGate).
//
// Refused, as request smuggling defences: both Content-Length and Transfer-Encoding, a
// Transfer-Encoding other than "chunked", Content-Length values that disagree or are not
// digits, a malformed chunk size.
//
// Not thread-safe: one framer per connection, used by its thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace toolgate::edge {

class RequestFramer {
 public:
  enum class Phase {
    kIdle,   // between requests, nothing of the next one seen yet
    kHead,   // part of a head seen
    kHeld,   // head passed on, its body held back until Admit (hold_bodies only)
    kBody,   // head passed on, body bytes still to come
    kError,  // refused; see error()
  };
  enum class Error { kNone, kHeadTooLarge, kBadFraming, kBodyTooLarge };

  // Returns the value of X-Toolgate-Client for a request, given the values of its
  // X-Forwarded-For headers joined by ", " (empty when it has none).
  using ClientHeader = std::function<std::string(std::string_view forwarded_for)>;

  // max_upload_bytes: the limit of the upload route; 0 gives it max_body_bytes too.
  RequestFramer(size_t max_head_bytes, size_t max_body_bytes, ClientHeader client_header,
                size_t max_upload_bytes = 0, bool hold_bodies = false);

  // Consumes data received at now_ms and appends to *out what may go on to the server; returns
  // how many bytes of data it consumed: all of them, unless it stopped at a held body (kHeld),
  // whose bytes the caller keeps and feeds again after Admit. After an error the rest of data is
  // ignored (and counted as consumed).
  size_t Feed(std::string_view data, int64_t now_ms, std::string* out);

  // kHeld only: the head as it was passed on, and the length its Content-Length declares
  // (nullopt for a chunked body).
  const std::string& held_head() const { return held_head_; }
  std::optional<uint64_t> held_length() const {
    return chunked_ ? std::nullopt : std::optional<uint64_t>(body_left_);
  }
  // kHeld only: lets the body through, with body_limit as its limit when that is below the
  // route's. A declared length over the limit fails with kBodyTooLarge.
  void Admit(size_t body_limit);

  Phase phase() const { return phase_; }
  Error error() const { return error_; }
  // When the current phase began (kHead: the head's first byte; kBody: the head's end).
  int64_t phase_started_ms() const { return phase_started_ms_; }
  // Requests passed on whole so far.
  uint64_t completed() const { return completed_; }
  // What the Content-Length of the request being framed (or the last one) declared; 0 without.
  uint64_t declared_length() const { return declared_length_; }
  // The body limit of the request being framed (or the last one), for the refusal's message.
  size_t body_limit() const { return body_limit_; }

 private:
  enum class Chunk { kSize, kData, kDataEnd, kTrailer };
  void Fail(Error error);
  // Parses head_ (which ends with the blank line) and appends the head to pass on.
  void FinishHead(int64_t now_ms, std::string* out);
  void FinishRequest();
  // Consumes chunked body bytes from data; returns how many.
  size_t FeedChunked(std::string_view data, std::string* out);

  const size_t max_head_bytes_;
  const size_t max_body_bytes_;
  const size_t max_upload_bytes_;
  const bool hold_bodies_;
  size_t body_limit_;
  ClientHeader client_header_;
  Phase phase_ = Phase::kIdle;
  Error error_ = Error::kNone;
  int64_t phase_started_ms_ = 0;
  uint64_t completed_ = 0;
  std::string head_;
  std::string held_head_;  // kHeld: the head passed on
  bool chunked_ = false;
  uint64_t body_left_ = 0;  // Content-Length bytes still to pass on
  uint64_t declared_length_ = 0;
  Chunk chunk_ = Chunk::kSize;
  std::string line_;  // a chunk-size or trailer line being read
  uint64_t chunk_left_ = 0;
  uint64_t body_seen_ = 0;  // chunked: data bytes so far
};

// ResponseCloseWatch: where, in the bytes of a connection's responses, one that ends the
// connection ends. Pistache answers "Connection: Close" to a request that asks for it (or to
// HTTP/1.0) but leaves the socket open, so the front closes the client's connection itself once
// such a response has been relayed whole. Only responses with a Content-Length can be measured;
// after one without (chunked, an event stream), nothing more is watched and the connection
// closes when either side closes it, as before. Not thread-safe: one per connection.
class ResponseCloseWatch {
 public:
  // Consumes the next bytes the server sent.
  void Feed(std::string_view data);
  // The number of response bytes after which the connection ends; 0 while none is known.
  uint64_t close_offset() const { return close_offset_; }
  // Responses seen whole (1xx not counted), until one that ends the connection or one whose
  // end is unknown.
  uint64_t completed() const { return completed_; }
  // A response without Content-Length was seen: nothing after it can be measured.
  bool blind() const { return blind_; }
  // The bytes of a response the front writes itself as it goes (an event stream): counted, not
  // read; Completed() then ends it, and the connection after it when closes.
  void Skip(uint64_t bytes) { seen_ += bytes; }
  void Completed(bool closes) {
    if (blind_ || close_offset_ != 0) return;
    ++completed_;
    if (closes) close_offset_ = seen_;
  }

 private:
  void FinishHead();
  std::string head_;
  uint64_t seen_ = 0;       // bytes fed so far
  uint64_t body_left_ = 0;  // of the current response
  bool in_body_ = false;
  bool blind_ = false;  // a response without Content-Length: its end is unknown
  uint64_t close_offset_ = 0;
  uint64_t completed_ = 0;
};

}  // namespace toolgate::edge
