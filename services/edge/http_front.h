// HttpFront: the edge's own accept path, in front of Pistache.
//
// Pistache 0.0.5 reads a whole request before the edge sees it: it reads a declared body of
// any length before answering, has no header or body read deadline, and a reactor thread can
// keep polling a connection that the client has left (docs/decisions.md, "The edge's front").
// The front owns the public socket instead. Each client connection gets its own loopback
// connection to Pistache, and the front relays the bytes both ways, framing the requests
// (request_framer.h) as they pass, so it can
//   * answer 413 problem+json as soon as a head declares a body over the limit, or a chunked
//     body crosses it, and close the connection;
//   * answer 408 and close when a head is not complete within header_timeout_ms of its first
//     byte, or a body within body_timeout_ms of its head; close a connection idle (no request
//     begun, no answer pending) for idle_timeout_ms;
//   * refuse connections over max_connections in total (503) or max_connections_per_client
//     from one address (429);
//   * decide, from a request's head alone, whether its body is read at all (the BodyGate: who
//     the caller is, and what this caller may send to this route), and answer 401/403/404/413
//     before the first byte of the body is read; the client's socket is not read meanwhile;
//   * bound the bytes of request bodies in flight (admitted and not yet answered), for the
//     whole edge (503) and per client address (429), both with Retry-After, so that memory
//     stays bounded whatever the clients send;
//   * after any answer of its own that ends a connection, read and discard what the client
//     still sends of the refused body for a while (a lingering close, as nginx does), so that
//     a client that writes its whole body before reading, as most do, reads the answer rather
//     than a reset;
//   * tell the edge who the client is: every request reaches Pistache with
//     `X-Toolgate-Client: <token> <address>` (the peer address, or for a peer listed in
//     trusted_proxies the right-most X-Forwarded-For address that is not a trusted proxy).
//     The token is random per process, so a request that reached Pistache some other way
//     cannot claim an address.
// Answers are not parsed: they are relayed as Pistache writes them.
//
// The front also answers the requests a FrontRoute takes (the invoke route) itself, without
// Pistache: when such a request arrives on a connection whose earlier requests are all answered,
// as HTTP/1.1 with a Content-Length body, it is handed whole to the route on the front's thread,
// and the route's response is written to the client when it comes, from whatever thread gives
// it. Requests that follow it on the connection wait for that response, so responses keep the
// order of their requests. Every limit, deadline and refusal above applies to them alike.
//
// One thread, level-triggered epoll; a side is polled for reading only while its buffer has
// room, so a stalled or departed peer costs no CPU. Start/Stop from one thread; the accessors
// are thread-safe once Start has returned.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "http_head.h"
#include "toolgate/base/status.h"
#include "toolgate/v1/toolgate.pb.h"

namespace toolgate::edge {

// A request the front answers itself (FrontRoute), whole.
struct FrontRequest {
  RequestHead head;  // as framed, X-Toolgate-Client included
  std::string body;
};
// Delivers the whole response (ResponseBytes) to one FrontRequest, or the end of one whose parts
// went first: called exactly once, from any thread; it does nothing once the client's
// connection or the front is gone.
using FrontRespond = std::function<void(std::string response)>;
// Which requests the front answers itself, and how. answer runs on the front's thread and must
// not block: it answers through respond, now or later. Before respond it may send the response
// in parts through part (the head of a chunked response, then its chunks: an event stream), any
// number of times from any thread, each reaching the client as it comes; respond then carries
// the rest, the last chunk included.
// pass_begins and pass_ends, when set, bracket each pass of the front's loop (the events of one
// epoll_wait), so that the route can send what a pass decided together.
struct FrontRoute {
  std::function<bool(std::string_view method, std::string_view target)> takes;
  std::function<void(FrontRequest request, FrontRespond respond, FrontRespond part)> answer;
  std::function<void()> pass_begins;
  std::function<void()> pass_ends;
};

// The verdict on a request's body, given from its head alone: a refusal, answered at once
// (the connection then closes), or the most bytes its body may hold.
struct BodyVerdict {
  std::optional<v1::Problem> refusal;
  size_t body_limit = 0;
};
// Decides on the body of each request that has one (a Content-Length above 0, or chunked), from
// its head (X-Toolgate-Client included). Runs on the front's thread and must not block: it
// returns the verdict when it has it now, or nullopt and calls later exactly once, from any
// thread, when it has it (later does nothing once the connection or the front is gone).
using BodyGate = std::function<std::optional<BodyVerdict>(const RequestHead& head,
                                                          std::function<void(BodyVerdict)> later)>;

struct FrontOptions {
  std::string host = "127.0.0.1";
  int port = 8080;       // 0: any free port
  int backend_port = 0;  // Pistache, on 127.0.0.1
  size_t max_body_bytes = 6 * 1024 * 1024;
  size_t max_upload_bytes = 0;  // the upload route's (upload_route.h); 0: max_body_bytes
  size_t max_head_bytes = 64 * 1024;
  int header_timeout_ms = 10000;
  int body_timeout_ms = 60000;
  int idle_timeout_ms = 60000;
  int max_connections = 4096;
  int max_connections_per_client = 128;
  std::vector<std::string> trusted_proxies;  // peer IP addresses, as written by inet_ntop
  std::string token;                         // proves the X-Toolgate-Client header ours
  FrontRoute route;                          // none: every request goes to Pistache
  BodyGate gate;                             // none: every body within the limits is read
  // Bytes of request bodies admitted and not yet answered: a chunked body counts as its
  // limit. Past the edge's total a request is 503, past its client address's share 429.
  size_t max_body_bytes_in_flight = 256 * 1024 * 1024;
  size_t max_body_bytes_in_flight_per_client = 72 * 1024 * 1024;
};

// The address a request comes from: peer, unless peer is a trusted proxy, in which case the
// right-most address of forwarded_for (X-Forwarded-For values, comma-separated) that is not a
// trusted proxy, or peer when there is none. Pure; thread-safe.
std::string ClientAddress(std::string_view peer, std::string_view forwarded_for,
                          const std::vector<std::string>& trusted_proxies);

class HttpFront {
 public:
  explicit HttpFront(FrontOptions options);
  ~HttpFront();  // Stop()
  HttpFront(const HttpFront&) = delete;
  HttpFront& operator=(const HttpFront&) = delete;

  // Binds the public socket and starts the thread. Fails (Unavailable) when it cannot bind.
  Status Start();
  // Closes every connection and joins the thread. Idempotent.
  void Stop();
  int port() const { return port_; }

 private:
  class Loop;
  FrontOptions options_;
  std::unique_ptr<Loop> loop_;
  std::thread thread_;
  std::atomic<int> port_{0};
};

}  // namespace toolgate::edge
