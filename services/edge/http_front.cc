#include "http_front.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <deque>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

#include "render.h"
#include "request_framer.h"
#include "toolgate/base/crypto.h"
#include "toolgate/base/log.h"
#include "toolgate/base/strings.h"
#include "toolgate/base/time.h"
#include "toolgate/core/problem.h"

namespace toolgate::edge {
namespace {

constexpr size_t kHighWater = 256 * 1024;  // per direction: stop reading above this
constexpr size_t kReadChunk = 64 * 1024;
// After an answer of our own that ends the connection, the client is drained (read and
// discarded) until it has been quiet kLingerMs, for kMaxLingerMs at most, and for the rest of
// the refused body it declared plus kMaxDrained at most (never past max_upload_bytes): a client
// that writes its whole body before it reads then reads our answer, not a reset.
constexpr int64_t kLingerMs = 2000;
constexpr int64_t kMaxLingerMs = 10000;
constexpr size_t kMaxDrained = 4 * 1024 * 1024;
// A client told to come back when the edge's bodies in flight are over its bounds.
constexpr int kBodyBudgetRetryAfterS = 2;
constexpr int64_t kAcceptPauseMs = 100;  // out of file descriptors: retry accepting after this

// epoll tags: id * 4 + side. kWake with id 0 is Stop; with id 1, responses for own requests.
enum Side : uint64_t { kListen = 0, kClient = 1, kBackend = 2, kWake = 3 };

int64_t NowMonoMs() {
  return MonotonicUs() / 1000;
}

// The most a request the front answers itself may hold, head and body: it is kept whole before
// it is answered, and reading from the client stops past kHighWater.
constexpr size_t kMaxOwnRequest = kHighWater / 2;

// A whole HTTP/1.1 problem answer that ends the connection.
std::string ProblemBytes(const v1::Problem& problem) {
  std::string request_id = HexEncode(RandomBytes(12));
  HttpAnswer a = RenderProblem(problem, request_id);
  std::vector<std::pair<std::string, std::string>> headers = {{"Content-Type", a.content_type},
                                                              {"X-Request-Id", request_id}};
  headers.insert(headers.end(), a.headers.begin(), a.headers.end());
  return ResponseBytes(a.status, headers, a.body, /*keep_alive=*/false);
}
std::string ProblemBytes(std::string_view code, std::string_view detail) {
  return ProblemBytes(core::MakeProblem(code, detail));
}

v1::Problem RetryLater(std::string_view code, std::string_view detail) {
  v1::Problem problem = core::MakeProblem(code, detail);
  problem.set_retry_after_s(kBodyBudgetRetryAfterS);
  return problem;
}

// The address in the X-Toolgate-Client line the framer ends each head with ("<token>
// <address>"), from the head as it was passed on.
std::string ClientOfHead(std::string_view head) {
  constexpr std::string_view kLine = "\r\nX-Toolgate-Client: ";
  const size_t at = head.rfind(kLine);
  if (at == std::string_view::npos) return {};
  std::string_view value = head.substr(at + kLine.size());
  value = value.substr(0, value.find("\r\n"));
  const size_t space = value.find(' ');
  return space == std::string_view::npos ? std::string() : std::string(value.substr(space + 1));
}

bool IsIp(std::string_view s) {
  std::string text(s);
  unsigned char buf[sizeof(in6_addr)];
  return inet_pton(AF_INET, text.c_str(), buf) == 1 || inet_pton(AF_INET6, text.c_str(), buf) == 1;
}

bool Contains(const std::vector<std::string>& list, std::string_view s) {
  for (const auto& item : list) {
    if (item == s) return true;
  }
  return false;
}

std::string PeerAddress(const sockaddr_storage& addr) {
  char text[INET6_ADDRSTRLEN] = {0};
  if (addr.ss_family == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(&addr)->sin_addr, text, sizeof text);
  } else if (addr.ss_family == AF_INET6) {
    const auto* a6 = reinterpret_cast<const sockaddr_in6*>(&addr);
    if (IN6_IS_ADDR_V4MAPPED(&a6->sin6_addr)) {
      inet_ntop(AF_INET, &a6->sin6_addr.s6_addr[12], text, sizeof text);
    } else {
      inet_ntop(AF_INET6, &a6->sin6_addr, text, sizeof text);
    }
  }
  return text;
}

void SetNoDelay(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

}  // namespace

std::string ClientAddress(std::string_view peer, std::string_view forwarded_for,
                          const std::vector<std::string>& trusted_proxies) {
  if (!Contains(trusted_proxies, peer)) return std::string(peer);
  // Right to left: each trusted proxy appended the address it received from.
  while (!forwarded_for.empty()) {
    size_t comma = forwarded_for.rfind(',');
    std::string_view item = Trim(
        comma == std::string_view::npos ? forwarded_for : forwarded_for.substr(comma + 1), " ");
    forwarded_for =
        comma == std::string_view::npos ? std::string_view() : forwarded_for.substr(0, comma);
    if (Contains(trusted_proxies, item)) continue;
    return IsIp(item) ? std::string(item) : std::string(peer);
  }
  return std::string(peer);
}

class HttpFront::Loop {
 public:
  Loop(const FrontOptions& options, int listen_fd)
      : options_(options), listen_fd_(listen_fd), answers_(std::make_shared<Answers>()) {
    epoll_ = epoll_create1(EPOLL_CLOEXEC);
    wake_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    answers_->fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    Add(listen_fd_, Tag(0, kListen), EPOLLIN);
    Add(wake_, Tag(0, kWake), EPOLLIN);
    Add(answers_->fd, Tag(1, kWake), EPOLLIN);
  }
  ~Loop() {
    {
      std::lock_guard<std::mutex> lock(answers_->mu);
      answers_->closed = true;  // a response given from now on goes nowhere
      close(answers_->fd);
    }
    for (auto& [id, c] : conns_) {
      if (c.client >= 0) close(c.client);
      if (c.backend >= 0) close(c.backend);
    }
    close(listen_fd_);
    close(wake_);
    close(epoll_);
  }

  void Wake() {
    uint64_t one = 1;
    [[maybe_unused]] ssize_t n = write(wake_, &one, sizeof one);
  }

  void Run() {
    epoll_event events[256];
    std::string buffer(kReadChunk, '\0');
    buffer_ = &buffer;
    while (!stop_) {
      int timeout = -1;
      if (next_deadline_ > 0) {
        timeout = static_cast<int>(std::max<int64_t>(0, next_deadline_ - NowMonoMs()));
      }
      int n = epoll_wait(epoll_, events, 256, timeout);
      if (n < 0 && errno != EINTR) {
        log::Error("front: epoll_wait failed").Str("error", std::strerror(errno));
        return;
      }
      now_ = NowMonoMs();
      if (n > 0 && options_.route.pass_begins) options_.route.pass_begins();
      for (int i = 0; i < n; ++i) Dispatch(events[i].data.u64, events[i].events);
      if (n > 0 && options_.route.pass_ends) options_.route.pass_ends();
      if (next_deadline_ > 0 && now_ >= next_deadline_) Sweep();
    }
  }

 private:
  // A body admitted and not yet answered: its request's index on the connection, its bytes, and
  // the client address whose share they count against.
  struct Reservation {
    uint64_t request;
    size_t bytes;
    std::string client;
  };

  struct Conn {
    Conn(uint64_t id_, std::string peer_, const FrontOptions& o)
        : id(id_),
          peer(std::move(peer_)),
          framer(
              o.max_head_bytes, o.max_body_bytes,
              [this, &o](std::string_view forwarded_for) {
                return o.token + " " + ClientAddress(peer, forwarded_for, o.trusted_proxies);
              },
              o.max_upload_bytes, /*hold_bodies=*/static_cast<bool>(o.gate)) {}
    uint64_t id;
    std::string peer;
    RequestFramer framer;
    ResponseCloseWatch responses;  // where a response that ends the connection ends
    uint64_t relayed = 0;          // response bytes sent to the client
    int client = -1;
    int backend = -1;
    uint32_t client_mask = 0;
    uint32_t backend_mask = 0;
    std::string to_backend;
    std::string to_client;
    bool backend_connected = false;
    bool client_eof = false;
    bool awaiting = false;  // a request passed on whole, no answer byte since
    uint64_t completed = 0;
    bool closing = false;  // our own answer queued; then shut down, drain, close
    bool shut = false;
    int64_t close_at = 0;
    size_t drained = 0;
    int64_t idle_since = 0;
    // to_backend starts with a request the route takes, kept until it is whole.
    bool held = false;
    // The route has a request of this connection and has not answered it yet: nothing after
    // it goes to Pistache meanwhile.
    bool own_pending = false;
    // The route's answer is going out in parts (an event stream), and whether its head said
    // "Connection: close".
    bool own_streamed = false;
    bool own_stream_closes = false;
    // Client bytes received while the framer held a body (kHeld): fed once it is admitted.
    std::string unfed;
    bool gate_pending = false;  // the gate was asked about the held body and has not answered
    // Bodies admitted and not yet answered: the request's index on the connection, its bytes.
    std::deque<Reservation> reservations;
    size_t drain_limit = kMaxDrained;
    int64_t linger_ends = 0;
  };

  // Responses the route gives, from any thread, for the loop to write.
  struct Answers {
    std::mutex mu;
    int fd = -1;  // eventfd: there are responses
    bool closed = false;
    struct Response {
      uint64_t id;        // the connection's
      std::string bytes;  // the response, or a part of it
      bool last;          // the response's end: the connection's next request may go on
    };
    std::vector<Response> queue;
    std::vector<std::pair<uint64_t, BodyVerdict>> verdicts;  // (connection id, the gate's)
  };

  static uint64_t Tag(uint64_t id, Side side) { return id * 4 + side; }

  void Add(int fd, uint64_t tag, uint32_t mask) {
    epoll_event ev{};
    ev.events = mask;
    ev.data.u64 = tag;
    epoll_ctl(epoll_, EPOLL_CTL_ADD, fd, &ev);
  }
  void Modify(int fd, uint64_t tag, uint32_t mask) {
    epoll_event ev{};
    ev.events = mask;
    ev.data.u64 = tag;
    epoll_ctl(epoll_, EPOLL_CTL_MOD, fd, &ev);
  }

  void Dispatch(uint64_t tag, uint32_t events) {
    const uint64_t id = tag / 4;
    const auto side = static_cast<Side>(tag % 4);
    if (side == kWake) {
      if (id == 0) {
        stop_ = true;
      } else {
        DeliverAnswers();
      }
      return;
    }
    if (side == kListen) return Accept();
    auto it = conns_.find(id);
    if (it == conns_.end()) return;  // closed earlier in this batch
    Conn& c = it->second;
    if (side == kClient) {
      // Hung up both ways (or reset): nothing more can be read or written.
      if (events & (EPOLLERR | EPOLLHUP)) return Close(c);
      if (events & EPOLLOUT) FlushClient(c);
      if (conns_.count(id) && (events & EPOLLIN)) ReadClient(c);
    } else {
      if (events & (EPOLLOUT | EPOLLERR)) {
        if (!c.backend_connected) Connected(c);
        if (conns_.count(id) && c.backend >= 0) FlushBackend(c);
      }
      if (conns_.count(id) && c.backend >= 0 && (events & (EPOLLIN | EPOLLHUP | EPOLLERR))) {
        ReadBackend(c);
      }
    }
    if (conns_.count(id)) Update(c);
  }

  void Accept() {
    for (;;) {
      sockaddr_storage addr{};
      socklen_t len = sizeof addr;
      int fd = accept4(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len,
                       SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
          // Level-triggered: the pending connection would wake us at once, again and again.
          epoll_ctl(epoll_, EPOLL_CTL_DEL, listen_fd_, nullptr);
          accept_resume_at_ = now_ + kAcceptPauseMs;
          Schedule(accept_resume_at_);
          log::Warn("front: out of file descriptors; accepting paused");
        }
        return;
      }
      std::string peer = PeerAddress(addr);
      const bool proxy = Contains(options_.trusted_proxies, peer);
      if (static_cast<int>(conns_.size()) >= options_.max_connections) {
        RefuseNow(fd, "service_unavailable", "The edge is at its connection limit; retry later.");
        continue;
      }
      if (!proxy && per_client_[peer] >= options_.max_connections_per_client) {
        RefuseNow(fd, "too_many_connections",
                  "Too many open connections from your address; reuse or close some.");
        continue;
      }
      if (!proxy) ++per_client_[peer];
      uint64_t id = ++next_id_;
      auto [it, inserted] = conns_.try_emplace(id, id, std::move(peer), options_);
      Conn& c = it->second;
      c.client = fd;
      c.idle_since = now_;
      SetNoDelay(fd);
      Add(c.client, Tag(id, kClient), 0);
      if (!ConnectBackend(c)) {
        Refuse(c, "service_unavailable", "The edge cannot reach its HTTP server; retry later.");
      }
      if (conns_.count(id)) Update(c);
    }
  }

  // Best effort, for connections refused before they are tracked.
  void RefuseNow(int fd, std::string_view code, std::string_view detail) {
    std::string answer = ProblemBytes(code, detail);
    [[maybe_unused]] ssize_t n = send(fd, answer.data(), answer.size(), MSG_NOSIGNAL);
    shutdown(fd, SHUT_WR);
    close(fd);
  }

  bool ConnectBackend(Conn& c) {
    c.backend = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (c.backend < 0) return false;
    SetNoDelay(c.backend);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(options_.backend_port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int r = connect(c.backend, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    if (r < 0 && errno != EINPROGRESS) {
      close(c.backend);
      c.backend = -1;
      return false;
    }
    c.backend_connected = r == 0;
    Add(c.backend, Tag(c.id, kBackend), EPOLLOUT);
    c.backend_mask = EPOLLOUT;
    return true;
  }

  void Connected(Conn& c) {
    int err = 0;
    socklen_t len = sizeof err;
    getsockopt(c.backend, SOL_SOCKET, SO_ERROR, &err, &len);
    if (err != 0) {
      return Refuse(c, "service_unavailable",
                    "The edge cannot reach its HTTP server; retry later.");
    }
    c.backend_connected = true;
  }

  void ReadClient(Conn& c) {
    std::string& buf = *buffer_;
    ssize_t n = recv(c.client, buf.data(), buf.size(), 0);
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return;
      return Close(c);
    }
    if (n == 0) {
      c.client_eof = true;
      if (c.closing) Close(c);
      return;
    }
    if (c.closing) {
      c.drained += static_cast<size_t>(n);
      if (c.drained > c.drain_limit) return Close(c);
      c.close_at = std::min(c.linger_ends, now_ + kLingerMs);
      return;
    }
    const std::string_view data(buf.data(), static_cast<size_t>(n));
    if (c.framer.phase() == RequestFramer::Phase::kHeld) {
      c.unfed.append(data);  // read in the same pass as the head it follows
      return;
    }
    FeedFrom(c, data);
  }

  // Feeds client bytes to the framer and on towards Pistache or the route, until they are used
  // up or the framer holds a body; then the rest waits in c.unfed for the gate's verdict.
  void FeedFrom(Conn& c, std::string_view data) {
    std::string resumed;  // owns what data points into after a verdict given at once
    while (!data.empty() && !c.closing) {
      // Whether what the framer passes on now starts with a request head, and how many
      // requests came before it.
      const bool at_head =
          c.held || (c.to_backend.empty() && c.framer.phase() == RequestFramer::Phase::kIdle);
      const uint64_t before = c.framer.completed();
      const size_t used = c.framer.Feed(data, now_, &c.to_backend);
      data.remove_prefix(used);
      if (c.framer.completed() != c.completed) {
        c.completed = c.framer.completed();
        c.awaiting = true;
      }
      if (RefusedByFramer(c)) return;
      if (!Route(c, at_head, before)) FlushBackend(c);
      if (c.framer.phase() != RequestFramer::Phase::kHeld) continue;
      // A body that came whole with its head has been read already: asking who may send it
      // would save nothing, so it goes on within the route's limit and the bodies in flight,
      // and its owner decides the rest (the usual invocation, in one segment, asks nothing).
      if (const auto declared = c.framer.held_length(); declared && *declared <= data.size()) {
        if (!Admit(c, ClientOfHead(c.framer.held_head()), c.framer.body_limit())) return;
        continue;
      }
      c.unfed.assign(data);
      AskGate(c);
      if (c.closing || c.framer.phase() == RequestFramer::Phase::kHeld) return;
      resumed = std::move(c.unfed);
      c.unfed.clear();
      data = resumed;
    }
  }

  // Answers the framer's error, if it has one; true when it had.
  bool RefusedByFramer(Conn& c) {
    switch (c.framer.error()) {
      case RequestFramer::Error::kNone:
        return false;
      case RequestFramer::Error::kBodyTooLarge:
        Refuse(c, "payload_too_large",
               "The request body is over " + std::to_string(c.framer.body_limit()) + " bytes.");
        break;
      case RequestFramer::Error::kHeadTooLarge:
        Refuse(c, "headers_too_large",
               "The request line and headers are over " + std::to_string(options_.max_head_bytes) +
                   " bytes.");
        break;
      case RequestFramer::Error::kBadFraming:
        Refuse(c, "bad_request",
               "The request is not valid HTTP/1.1 framing (Content-Length, "
               "Transfer-Encoding or header syntax).");
        break;
    }
    return true;
  }

  // Asks the gate about the body the framer holds; applies a verdict given at once.
  void AskGate(Conn& c) {
    if (c.gate_pending) return;
    auto head = ParseRequestHead(c.framer.held_head());
    if (!head) {
      return Refuse(c, "bad_request", "The request head could not be read.");
    }
    c.gate_pending = true;
    std::optional<BodyVerdict> verdict = options_.gate(*head, Later(c.id));
    if (!verdict) return;
    c.gate_pending = false;
    Decided(c, *head, std::move(*verdict));
  }

  std::function<void(BodyVerdict)> Later(uint64_t id) {
    return [answers = answers_, id](BodyVerdict verdict) {
      std::lock_guard<std::mutex> lock(answers->mu);
      if (answers->closed) return;
      answers->verdicts.emplace_back(id, std::move(verdict));
      if (answers->queue.size() + answers->verdicts.size() == 1) {
        uint64_t one = 1;
        [[maybe_unused]] ssize_t n = write(answers->fd, &one, sizeof one);
      }
    };
  }

  // The gate's verdict on the held body of c: a refusal; or the body's limit, checked against
  // the bodies in flight, after which the framer lets the body through.
  void Decided(Conn& c, const RequestHead& head, BodyVerdict verdict) {
    if (verdict.refusal) return Refuse(c, *verdict.refusal);
    const std::optional<uint64_t> declared = c.framer.held_length();
    const size_t limit = std::min(verdict.body_limit, c.framer.body_limit());
    if (declared && *declared > limit) {
      return Refuse(c, "payload_too_large",
                    "The request body is over " + std::to_string(limit) + " bytes.");
    }
    if (!Admit(c, ClientOfHead(c.framer.held_head()), limit)) return;
    // "Expect: 100-continue": the client waits for a word before it sends the body. Only when
    // every earlier request is answered, so that the 100 cannot land inside another response.
    const std::string* expect = head.Find("expect");
    if (expect != nullptr && AsciiLower(*expect) == "100-continue" && !c.responses.blind() &&
        c.responses.close_offset() == 0 && c.responses.completed() == c.framer.completed()) {
      constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
      c.responses.Feed(kContinue);
      c.to_client.append(kContinue);
      FlushClient(c);
    }
  }

  // Lets the held body through with limit, when its bytes (declared, or the limit for a chunked
  // body) fit the bodies in flight, the edge's and client's; else refuses. True when admitted.
  bool Admit(Conn& c, std::string client, size_t limit) {
    const std::optional<uint64_t> declared = c.framer.held_length();
    const size_t bytes = declared ? static_cast<size_t>(*declared) : limit;
    if (in_flight_ + bytes > options_.max_body_bytes_in_flight) {
      Refuse(c, RetryLater("service_unavailable",
                           "The edge holds as many request bodies as it may; retry after the "
                           "time in Retry-After."));
      return false;
    }
    const bool proxy = Contains(options_.trusted_proxies, client);
    size_t& mine = client_in_flight_[client];
    if (!proxy && mine + bytes > options_.max_body_bytes_in_flight_per_client) {
      if (mine == 0) client_in_flight_.erase(client);
      Refuse(c, RetryLater("too_many_request_bytes",
                           "Your address has as many request bytes in flight as it may; retry "
                           "after the time in Retry-After, or send fewer at once."));
      return false;
    }
    mine += bytes;
    in_flight_ += bytes;
    // Per request: a proxy's connection carries the requests of many clients.
    c.reservations.push_back({c.framer.completed(), bytes, std::move(client)});
    c.framer.Admit(limit);
    return !c.closing;
  }

  // Gives back the in-flight bytes of the bodies whose requests are answered (or, once answers
  // cannot be counted, whose requests have gone to Pistache whole); all of them when closing.
  void ReleaseBodies(Conn& c, bool all) {
    while (!c.reservations.empty()) {
      const Reservation& r = c.reservations.front();
      const uint64_t request = r.request;
      const size_t bytes = r.bytes;
      const bool answered = request < c.responses.completed();
      const bool sent = (c.responses.blind() || c.responses.close_offset() > 0) &&
                        request < c.framer.completed() && c.to_backend.empty();
      if (!all && !answered && !sent) return;
      in_flight_ -= bytes;
      auto mine = client_in_flight_.find(r.client);
      if (mine != client_in_flight_.end() && (mine->second -= bytes) == 0) {
        client_in_flight_.erase(mine);
      }
      c.reservations.pop_front();
    }
  }

  // Hands the request at the start of to_backend to the route when it takes it and it is
  // whole, every earlier request of the connection answered. True when to_backend must stay
  // (kept for the route, or waiting behind the route's answer); false when it goes to Pistache.
  bool Route(Conn& c, bool at_head, uint64_t before) {
    if (!options_.route.takes) return false;
    if (c.own_pending) return true;
    c.held = false;
    if (!at_head || c.to_backend.empty()) return false;
    const size_t head_end = c.to_backend.find("\r\n\r\n");
    if (head_end == std::string::npos) return false;  // the framer passes whole heads
    auto head = ParseRequestHead(std::string_view(c.to_backend).substr(0, head_end + 4));
    if (!head || head->version != "HTTP/1.1" || head->Find("transfer-encoding") != nullptr ||
        head->Find("expect") != nullptr || !options_.route.takes(head->method, head->target)) {
      return false;
    }
    const uint64_t length = head_end + 4 + head->ContentLength();
    if (length > kMaxOwnRequest) return false;
    // Earlier requests still unanswered (pipelined to Pistache): this one follows them there.
    if (c.responses.blind() || c.responses.close_offset() > 0 ||
        c.responses.completed() != before) {
      return false;
    }
    if (c.to_backend.size() < length) {
      c.held = true;  // the body is on its way; the framer's body deadline runs
      return true;
    }
    FrontRequest request{std::move(*head),
                         c.to_backend.substr(head_end + 4, length - head_end - 4)};
    c.to_backend.erase(0, length);
    c.own_pending = true;
    c.awaiting = true;
    options_.route.answer(std::move(request), Responder(c.id, true), Responder(c.id, false));
    return true;
  }

  FrontRespond Responder(uint64_t id, bool last) {
    return [answers = answers_, id, last](std::string response) {
      std::lock_guard<std::mutex> lock(answers->mu);
      if (answers->closed) return;
      answers->queue.push_back({id, std::move(response), last});
      if (answers->queue.size() == 1) {
        uint64_t one = 1;
        [[maybe_unused]] ssize_t n = write(answers->fd, &one, sizeof one);
      }
    };
  }

  void DeliverAnswers() {
    std::vector<Answers::Response> ready;
    std::vector<std::pair<uint64_t, BodyVerdict>> verdicts;
    {
      std::lock_guard<std::mutex> lock(answers_->mu);
      uint64_t count = 0;
      [[maybe_unused]] ssize_t n = read(answers_->fd, &count, sizeof count);
      ready.swap(answers_->queue);
      verdicts.swap(answers_->verdicts);
    }
    for (auto& [id, verdict] : verdicts) {
      auto it = conns_.find(id);
      if (it == conns_.end()) continue;  // the client left
      Conn& c = it->second;
      if (!c.gate_pending || c.closing) continue;
      c.gate_pending = false;
      auto head = ParseRequestHead(c.framer.held_head());
      if (!head) {
        Refuse(c, "bad_request", "The request head could not be read.");
      } else {
        Decided(c, *head, std::move(verdict));
      }
      if (conns_.count(id) && !c.closing && c.framer.phase() != RequestFramer::Phase::kHeld) {
        std::string rest = std::move(c.unfed);
        c.unfed.clear();
        FeedFrom(c, rest);
      }
      if (conns_.count(id)) Update(c);
    }
    for (auto& [id, response, last] : ready) {
      auto it = conns_.find(id);
      if (it == conns_.end()) continue;  // the client left
      Conn& c = it->second;
      if (!c.own_pending || c.closing) continue;
      c.idle_since = now_;
      if (!last || c.own_streamed) {
        // A part of a response still being written (chunked: its end is ours to know, not the
        // watch's): out to the client now; the request stays pending, and what follows it
        // waits, until the response ends.
        if (!c.own_streamed) {
          c.own_streamed = true;
          c.own_stream_closes = response.find("\r\nConnection: close\r\n") != std::string::npos;
        }
        c.responses.Skip(response.size());
        c.to_client += response;
        if (!last) {
          FlushClient(c);
          if (conns_.count(id)) Update(c);
          continue;
        }
        c.responses.Completed(c.own_stream_closes);
        c.own_streamed = false;
      } else {
        // Through the watch like Pistache's answers: it counts them, and sees a "Connection:
        // close" one end the connection.
        c.responses.Feed(response);
        c.to_client += response;
      }
      c.own_pending = false;
      ReleaseBodies(c, /*all=*/false);
      // Requests that came in behind it are still to be answered.
      c.awaiting = c.framer.completed() != c.responses.completed();
      FlushClient(c);
      if (!conns_.count(id)) continue;
      // What the client sent meanwhile starts at a request head, every earlier one answered.
      if (!c.closing && !Route(c, true, c.framer.completed() - CompleteRequestsIn(c))) {
        FlushBackend(c);
      }
      if (conns_.count(id)) Update(c);
    }
  }

  // Whole requests in to_backend: the framer's count less those already handed on. Only used
  // right after the route's answer, when to_backend starts at a head.
  uint64_t CompleteRequestsIn(const Conn& c) const {
    uint64_t n = 0;
    size_t at = 0;
    while (at < c.to_backend.size()) {
      size_t head_end = c.to_backend.find("\r\n\r\n", at);
      if (head_end == std::string::npos) break;
      auto head = ParseRequestHead(std::string_view(c.to_backend).substr(at, head_end + 4 - at));
      if (!head || head->Find("transfer-encoding") != nullptr) break;
      size_t end = head_end + 4 + head->ContentLength();
      if (end > c.to_backend.size()) break;
      ++n;
      at = end;
    }
    return n;
  }

  void ReadBackend(Conn& c) {
    std::string& buf = *buffer_;
    ssize_t n = recv(c.backend, buf.data(), buf.size(), 0);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return;
    if (n <= 0) {
      CloseBackend(c);
      return;
    }
    c.to_client.append(buf.data(), static_cast<size_t>(n));
    c.responses.Feed(std::string_view(buf.data(), static_cast<size_t>(n)));
    ReleaseBodies(c, /*all=*/false);
    c.awaiting = false;
    c.idle_since = now_;
    FlushClient(c);
  }

  void FlushBackend(Conn& c) {
    if (c.held || c.own_pending) return;
    if (c.backend < 0 || !c.backend_connected || c.to_backend.empty()) return;
    ssize_t n = send(c.backend, c.to_backend.data(), c.to_backend.size(), MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return;
      return CloseBackend(c);
    }
    c.to_backend.erase(0, static_cast<size_t>(n));
  }

  void FlushClient(Conn& c) {
    if (!c.to_client.empty()) {
      ssize_t n = send(c.client, c.to_client.data(), c.to_client.size(), MSG_NOSIGNAL);
      if (n < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return;
        return Close(c);
      }
      c.to_client.erase(0, static_cast<size_t>(n));
      if (!c.closing) c.relayed += static_cast<uint64_t>(n);
    }
    const uint64_t close_offset = c.responses.close_offset();
    if (!c.closing && close_offset > 0 && c.relayed >= close_offset) {
      // The client asked for "Connection: close" (or spoke HTTP/1.0), and its answer is out:
      // the connection ends here, as Pistache does not end it.
      CloseBackend(c);
      c.closing = true;
      c.close_at = now_ + kLingerMs;
    }
    if (c.closing && c.to_client.empty() && !c.shut) {
      // Half-close and keep reading a moment: closing with unread input would send a reset,
      // which can destroy our answer before the client reads it.
      shutdown(c.client, SHUT_WR);
      c.shut = true;
    }
  }

  // Our own answer ends the connection: Pistache's side goes at once.
  void Refuse(Conn& c, std::string_view code, const std::string& detail) {
    Refuse(c, core::MakeProblem(code, detail));
  }
  void Refuse(Conn& c, const v1::Problem& problem) {
    if (c.closing) return;
    log::Info("front: request refused").Str("code", problem.code()).Str("client", c.peer);
    CloseBackend(c);
    c.to_backend.clear();
    c.unfed.clear();
    ReleaseBodies(c, /*all=*/true);
    c.closing = true;
    c.linger_ends = now_ + kMaxLingerMs;
    c.close_at = now_ + kLingerMs;
    // The rest of the body the client declared is what it will write before it reads.
    const uint64_t declared = c.framer.declared_length();
    c.drain_limit = static_cast<size_t>(std::clamp<uint64_t>(
        declared + options_.max_head_bytes, kMaxDrained,
        std::max(options_.max_upload_bytes, options_.max_body_bytes) + options_.max_head_bytes));
    c.to_client += ProblemBytes(problem);
    FlushClient(c);
  }

  void CloseBackend(Conn& c) {
    if (c.backend < 0) return;
    epoll_ctl(epoll_, EPOLL_CTL_DEL, c.backend, nullptr);
    close(c.backend);
    c.backend = -1;
  }

  void Close(Conn& c) {
    ReleaseBodies(c, /*all=*/true);
    CloseBackend(c);
    if (c.client >= 0) {
      epoll_ctl(epoll_, EPOLL_CTL_DEL, c.client, nullptr);
      close(c.client);
    }
    auto pc = per_client_.find(c.peer);
    if (pc != per_client_.end() && --pc->second <= 0) per_client_.erase(pc);
    conns_.erase(c.id);
  }

  int64_t Deadline(const Conn& c) const {
    if (c.closing) return c.close_at;
    switch (c.framer.phase()) {
      case RequestFramer::Phase::kHead:
        return c.framer.phase_started_ms() + options_.header_timeout_ms;
      case RequestFramer::Phase::kHeld:
      case RequestFramer::Phase::kBody:
        return c.framer.phase_started_ms() + options_.body_timeout_ms;
      default:
        return c.awaiting ? 0 : c.idle_since + options_.idle_timeout_ms;
    }
  }

  void Schedule(int64_t at) {
    if (at > 0 && (next_deadline_ == 0 || at < next_deadline_)) next_deadline_ = at;
  }

  // Chooses what each side is polled for, closes what is finished, and schedules its deadline.
  void Update(Conn& c) {
    if (c.closing) {
      if (c.shut && c.client_eof) return Close(c);
    } else {
      if (c.backend < 0 && c.to_client.empty()) return Close(c);  // Pistache hung up
      if (c.client_eof && c.to_client.empty() && !c.awaiting) return Close(c);
    }
    uint32_t client_mask = 0;
    // A held body is not read until the gate admits it.
    if (!c.client_eof && (c.closing || (c.to_backend.size() < kHighWater &&
                                        c.framer.phase() != RequestFramer::Phase::kHeld))) {
      client_mask |= EPOLLIN;
    }
    if (!c.to_client.empty()) client_mask |= EPOLLOUT;
    if (client_mask != c.client_mask) {
      Modify(c.client, Tag(c.id, kClient), client_mask);
      c.client_mask = client_mask;
    }
    if (c.backend >= 0) {
      uint32_t backend_mask = 0;
      if (c.to_client.size() < kHighWater) backend_mask |= EPOLLIN;
      if (!c.backend_connected || (!c.to_backend.empty() && !c.held && !c.own_pending)) {
        backend_mask |= EPOLLOUT;
      }
      if (backend_mask != c.backend_mask) {
        Modify(c.backend, Tag(c.id, kBackend), backend_mask);
        c.backend_mask = backend_mask;
      }
    }
    Schedule(Deadline(c));
  }

  void Sweep() {
    next_deadline_ = 0;
    if (accept_resume_at_ > 0) {
      if (now_ >= accept_resume_at_) {
        accept_resume_at_ = 0;
        Add(listen_fd_, Tag(0, kListen), EPOLLIN);
      } else {
        Schedule(accept_resume_at_);
      }
    }
    std::vector<uint64_t> expired;
    for (auto& [id, c] : conns_) {
      int64_t at = Deadline(c);
      if (at > 0 && at <= now_) {
        expired.push_back(id);
      } else {
        Schedule(at);
      }
    }
    for (uint64_t id : expired) {
      auto it = conns_.find(id);
      if (it == conns_.end()) continue;
      Conn& c = it->second;
      if (c.closing) {
        Close(c);
        continue;
      }
      switch (c.framer.phase()) {
        case RequestFramer::Phase::kHead:
          Refuse(c, "request_timeout",
                 "The request head did not arrive within " +
                     std::to_string(options_.header_timeout_ms) + " ms.");
          break;
        case RequestFramer::Phase::kHeld:
        case RequestFramer::Phase::kBody:
          Refuse(c, "request_timeout",
                 "The request body did not arrive within " +
                     std::to_string(options_.body_timeout_ms) + " ms.");
          break;
        default:
          Close(c);
          continue;
      }
      if (conns_.count(id)) Update(c);
    }
  }

  const FrontOptions& options_;
  int listen_fd_;
  int epoll_ = -1;
  int wake_ = -1;
  bool stop_ = false;
  int64_t now_ = 0;
  int64_t next_deadline_ = 0;
  int64_t accept_resume_at_ = 0;
  uint64_t next_id_ = 0;
  std::string* buffer_ = nullptr;
  std::shared_ptr<Answers> answers_;
  std::unordered_map<uint64_t, Conn> conns_;
  std::unordered_map<std::string, int> per_client_;
  size_t in_flight_ = 0;  // bytes of admitted bodies not yet answered
  std::unordered_map<std::string, size_t> client_in_flight_;
};

HttpFront::HttpFront(FrontOptions options) : options_(std::move(options)) {}

HttpFront::~HttpFront() {
  Stop();
}

Status HttpFront::Start() {
  sockaddr_storage addr{};
  socklen_t len = 0;
  auto* a4 = reinterpret_cast<sockaddr_in*>(&addr);
  auto* a6 = reinterpret_cast<sockaddr_in6*>(&addr);
  if (inet_pton(AF_INET, options_.host.c_str(), &a4->sin_addr) == 1) {
    a4->sin_family = AF_INET;
    a4->sin_port = htons(static_cast<uint16_t>(options_.port));
    len = sizeof *a4;
  } else if (inet_pton(AF_INET6, options_.host.c_str(), &a6->sin6_addr) == 1) {
    a6->sin6_family = AF_INET6;
    a6->sin6_port = htons(static_cast<uint16_t>(options_.port));
    len = sizeof *a6;
  } else {
    return Status::InvalidArgument("--host must be an IP address, got " + options_.host);
  }
  int fd = socket(addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return Status::Unavailable(std::string("socket: ") + std::strerror(errno));
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), len) != 0 || listen(fd, SOMAXCONN) != 0) {
    std::string error = std::strerror(errno);
    close(fd);
    return Status::Unavailable("cannot listen on " + options_.host + ":" +
                               std::to_string(options_.port) + ": " + error);
  }
  sockaddr_storage bound{};
  socklen_t bound_len = sizeof bound;
  getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &bound_len);
  port_ = ntohs(bound.ss_family == AF_INET ? reinterpret_cast<sockaddr_in*>(&bound)->sin_port
                                           : reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port);
  loop_ = std::make_unique<Loop>(options_, fd);
  thread_ = std::thread([this] { loop_->Run(); });
  return Status::Ok();
}

void HttpFront::Stop() {
  if (!loop_) return;
  loop_->Wake();
  if (thread_.joinable()) thread_.join();
  loop_.reset();
}

}  // namespace toolgate::edge
