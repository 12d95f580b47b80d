#include "toolgate/executor/egress_gateway.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <functional>
#include <future>
#include <map>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "toolgate/base/process.h"
#include "toolgate/base/strings.h"
#include "toolgate/base/time.h"
#include "toolgate/executor/egress_fetch.h"
#include "toolgate/metrics/metrics.h"
#include "toolgate/net/http1.h"

namespace toolgate::executor {

using core::IpAddress;

namespace {

constexpr size_t kMaxHeadBytes = 16 << 10;  // request line and headers
constexpr size_t kBufferBytes = 64 << 10;   // per direction, before reading pauses
constexpr size_t kMaxAddresses = 16;        // of one name
constexpr int kResolutionsPerDoor = 1;      // names of one sandbox on the resolver threads
constexpr size_t kMaxHostInRecord = 255;
constexpr int kMaxWaitMs = 1000;

std::string ProxyUrl() {
  return "http://127.0.0.1:" + std::to_string(kEgressProxyPort);
}

void CountRequest(std::string_view outcome) {
  static auto& family = metrics::Registry::Global().Counter(
      "toolgate_executor_egress_requests_total",
      "Outbound requests through the egress gateway, by outcome: allowed (connected), refused "
      "(a rule said no), failed (the upstream could not be reached or the call's limits cut it).",
      {"outcome"});
  static auto& allowed = family.With({"allowed"});
  static auto& refused = family.With({"refused"});
  static auto& failed = family.With({"failed"});
  (outcome == "allowed" ? allowed : outcome == "refused" ? refused : failed).Inc();
}

void CountBytes(std::string_view direction, uint64_t n) {
  static auto& family = metrics::Registry::Global().Counter(
      "toolgate_executor_egress_bytes_total",
      "Bytes through the egress gateway, by direction: sent (handler to upstream) or received.",
      {"direction"});
  static auto& sent = family.With({"sent"});
  static auto& received = family.With({"received"});
  (direction == "sent" ? sent : received).Inc(n);
}

// A host as a request may name it: an IP literal (IPv6 in brackets) or letters, digits, dots
// and hyphens. Whether it is a valid and allowed name is the egress list's question; this only
// keeps what goes into messages and headers plain.
bool IsPlainHost(std::string_view host) {
  if (host.empty() || host.size() > 253) return false;
  if (host.front() == '[') return IpAddress::Parse(host).ok();
  return std::all_of(host.begin(), host.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '-';
  });
}

// "host:port" or "[v6]:port" -> host (brackets kept) and port; false when malformed.
bool SplitAuthority(std::string_view authority, std::string& host, int& port, int default_port) {
  std::string_view port_text;
  if (!authority.empty() && authority.front() == '[') {
    size_t close = authority.find(']');
    if (close == std::string_view::npos) return false;
    host = std::string(authority.substr(0, close + 1));
    std::string_view rest = authority.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') return false;
      port_text = rest.substr(1);
    }
  } else {
    size_t colon = authority.find(':');
    host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) port_text = authority.substr(colon + 1);
  }
  if (port_text.empty()) {
    if (default_port == 0) return false;
    port = default_port;
  } else {
    if (port_text.size() > 5) return false;
    port = 0;
    for (char c : port_text) {
      if (c < '0' || c > '9') return false;
      port = port * 10 + (c - '0');
    }
    if (port < 1 || port > 65535) return false;
  }
  return IsPlainHost(host);
}

// The host without brackets, for resolution and messages.
std::string Unbracketed(const std::string& host) {
  if (host.size() >= 2 && host.front() == '[') return host.substr(1, host.size() - 2);
  return host;
}

bool IsHopByHop(std::string_view name) {
  static constexpr std::string_view kHop[] = {
      "connection", "proxy-connection", "keep-alive", "proxy-authorization", "proxy-authenticate",
      "te",         "trailer",          "upgrade"};
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return std::find(std::begin(kHop), std::end(kHop), lower) != std::end(kHop);
}

std::string Answer(int status, std::string_view reason, std::string_view header,
                   const std::string& message) {
  return "HTTP/1.1 " + std::to_string(status) + " " + std::string(reason) + "\r\n" +
         std::string(header) + ": " + message +
         "\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: " +
         std::to_string(message.size()) + "\r\nConnection: close\r\n\r\n" + message;
}

std::string Refusal(const std::string& message) {
  return Answer(403, "Forbidden", kEgressRefusedHeader, message);
}

std::string Failure(int status, const std::string& message) {
  return Answer(status, net::ReasonPhrase(status), kEgressErrorHeader, message);
}

// The listening socket, made in the caller's current network namespace.
Result<int> Listen(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return Status::Internal(std::string("socket: ") + std::strerror(errno));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      ::listen(fd, 64) != 0) {
    std::string why = std::strerror(errno);
    ::close(fd);
    return Status::Internal("cannot listen on 127.0.0.1:" + std::to_string(port) + ": " + why);
  }
  return fd;
}

// Brings the loopback interface of the caller's network namespace up.
Status LoopbackUp() {
  int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Status::Internal(std::string("socket: ") + std::strerror(errno));
  ifreq request{};
  std::strncpy(request.ifr_name, "lo", IFNAMSIZ - 1);
  bool ok = ::ioctl(fd, SIOCGIFFLAGS, &request) == 0;
  if (ok) {
    request.ifr_flags = static_cast<short>(request.ifr_flags | IFF_UP | IFF_RUNNING);
    ok = ::ioctl(fd, SIOCSIFFLAGS, &request) == 0;
  }
  std::string why = std::strerror(errno);
  ::close(fd);
  if (!ok) return Status::Internal("cannot bring the sandbox's loopback up: " + why);
  return Status::Ok();
}

}  // namespace

std::vector<std::string> EgressProxyEnv() {
  const std::string url = ProxyUrl();
  return {"HTTP_PROXY=" + url,
          "HTTPS_PROXY=" + url,
          "http_proxy=" + url,
          "https_proxy=" + url,
          "NO_PROXY=",
          "no_proxy=",
          std::string(kEgressProxyEnv) + "=127.0.0.1:" + std::to_string(kEgressProxyPort)};
}

Result<std::vector<IpAddress>> ResolveWithSystem(const std::string& name) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (int rc = ::getaddrinfo(name.c_str(), nullptr, &hints, &found); rc != 0) {
    return Status::Unavailable(::gai_strerror(rc));
  }
  std::vector<IpAddress> addresses;
  for (addrinfo* a = found; a != nullptr && addresses.size() < kMaxAddresses; a = a->ai_next) {
    auto ip = IpAddress::FromSockaddr(a->ai_addr, a->ai_addrlen);
    if (ip && std::find(addresses.begin(), addresses.end(), *ip) == addresses.end()) {
      addresses.push_back(*ip);
    }
  }
  ::freeaddrinfo(found);
  return addresses;
}

Result<std::vector<EgressEndpoint>> ResolveEgressEndpoints(std::string_view text) {
  std::string_view rest = text;
  if (size_t scheme = rest.find("://"); scheme != std::string_view::npos) {
    rest.remove_prefix(scheme + 3);
  }
  if (size_t at = rest.rfind('@'); at != std::string_view::npos) rest.remove_prefix(at + 1);
  if (size_t slash = rest.find('/'); slash != std::string_view::npos) rest = rest.substr(0, slash);
  std::string host;
  int port = 0;
  if (!SplitAuthority(rest, host, port, 0)) {
    return Status::InvalidArgument("\"" + std::string(text) + "\" is not host:port");
  }
  std::string name = Unbracketed(host);
  auto addresses = ResolveWithSystem(name);
  if (!addresses.ok()) {
    return Status::InvalidArgument("cannot resolve " + name + ": " + addresses.status().message());
  }
  std::vector<EgressEndpoint> out;
  for (const IpAddress& address : *addresses) out.push_back({address, port});
  return out;
}

// ---------------------------------------------------------------------------------------------
// A door's shared state: what the loop reads and the calling thread writes.

struct EgressDoor::State {
  int listen_fd = -1;  // owned by the loop once adopted
  int port = 0;

  // One request of the current call, and when it started (for ms).
  struct Request {
    EgressRecord record;
    int64_t started_us = 0;
    bool open = true;
  };

  std::mutex mu;
  bool in_call = false;           // guarded by mu
  uint64_t generation = 0;        // guarded by mu: bumped at each call's end
  core::EgressList list;          // guarded by mu
  int64_t deadline_us = 0;        // guarded by mu
  int64_t bytes = 0;              // guarded by mu: this call's, both directions
  bool cut_at_deadline = false;   // guarded by mu: this call's deadline cut a request
  std::vector<Request> requests;  // guarded by mu: this call's
};

// ---------------------------------------------------------------------------------------------
// The loop.

class EgressGateway::Loop {
 public:
  explicit Loop(EgressGateway& gateway)
      : gateway_(gateway),
        options_(gateway.options_),
        resolver_(std::make_unique<ThreadPool>(options_.resolver_threads)) {}

  Status Start() {
    epoll_ = ::epoll_create1(EPOLL_CLOEXEC);
    wake_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (epoll_ < 0 || wake_ < 0) return Status::Internal("cannot make the egress loop's epoll");
    epoll_event e{};
    e.events = EPOLLIN;
    e.data.u64 = kWakeTag;
    ::epoll_ctl(epoll_, EPOLL_CTL_ADD, wake_, &e);
    thread_ = std::thread([this] { Run(); });
    return Status::Ok();
  }

  ~Loop() {
    Post([this] { stopping_ = true; });
    if (thread_.joinable()) thread_.join();
    // Resolutions still running post to the queue, which nobody reads any more; wait for them
    // while the wake-up descriptor they write to is still open.
    resolver_.reset();
    for (auto& [id, conn] : conns_) {
      if (conn->client >= 0) ::close(conn->client);
      if (conn->upstream >= 0) ::close(conn->upstream);
    }
    for (auto& [fd, door] : doors_) ::close(fd);
    if (epoll_ >= 0) ::close(epoll_);
    if (wake_ >= 0) ::close(wake_);
  }

  // Runs task on the loop thread. Thread-safe.
  void Post(std::function<void()> task) {
    {
      std::lock_guard lock(posted_mu_);
      posted_.push_back(std::move(task));
    }
    uint64_t one = 1;
    (void)!::write(wake_, &one, sizeof one);
  }

  // Runs task on the loop thread and waits for it.
  void RunOnLoop(std::function<void()> task) {
    std::promise<void> done;
    Post([&] {
      task();
      done.set_value();
    });
    done.get_future().wait();
  }

  void AddDoor(std::shared_ptr<EgressDoor::State> door) {
    RunOnLoop([this, door] {
      epoll_event e{};
      e.events = EPOLLIN;
      e.data.u64 = kListenTag | static_cast<uint64_t>(door->listen_fd);
      ::epoll_ctl(epoll_, EPOLL_CTL_ADD, door->listen_fd, &e);
      doors_[door->listen_fd] = door;
    });
  }

  void RemoveDoor(const std::shared_ptr<EgressDoor::State>& door) {
    RunOnLoop([this, door] {
      CloseConnections(door.get(), /*stale_only=*/false);
      ::epoll_ctl(epoll_, EPOLL_CTL_DEL, door->listen_fd, nullptr);
      ::close(door->listen_fd);
      doors_.erase(door->listen_fd);
    });
  }

  // Closes the connections of door whose call has ended (all of them when !stale_only).
  void CloseConnections(EgressDoor::State* door, bool stale_only) {
    uint64_t generation;
    {
      std::lock_guard lock(door->mu);
      generation = door->generation;
    }
    std::vector<uint64_t> ids;
    for (auto& [id, conn] : conns_) {
      if (conn->door.get() == door && (!stale_only || conn->generation != generation)) {
        ids.push_back(id);
      }
    }
    for (uint64_t id : ids) Close(id);
  }

 private:
  static constexpr uint64_t kWakeTag = 1ull << 63;
  static constexpr uint64_t kListenTag = 1ull << 62;
  static constexpr uint64_t kUpstreamBit = 1;  // data.u64 = id << 1 | side

  struct Conn {
    uint64_t id = 0;
    std::shared_ptr<EgressDoor::State> door;
    uint64_t generation = 0;
    int client = -1;
    int upstream = -1;
    enum class Phase { kHead, kResolving, kConnecting, kRelay, kAnswering } phase = Phase::kHead;
    std::string head;         // the request as read, until its head is complete
    std::string to_upstream;  // bytes waiting for the upstream
    std::string to_client;    // bytes waiting for the handler
    bool client_eof = false;
    bool upstream_eof = false;
    bool upstream_shut = false;
    bool tunnel = false;
    bool answered = false;      // the handler has received bytes of an answer
    std::string status_prefix;  // the answer's first bytes, for its status line
    std::string method;
    std::string host;  // as named, brackets kept for IPv6
    int port = 0;
    std::vector<IpAddress> addresses;
    size_t next_address = 0;
    int64_t deadline_us = 0;
    int request = -1;  // index in door->requests, while generation is current
    uint32_t client_events = 0;
    uint32_t upstream_events = 0;
  };

  void Run() {
    epoll_event events[64];
    while (!stopping_) {
      int n = ::epoll_wait(epoll_, events, 64, NextWaitMs());
      for (int i = 0; i < n && !stopping_; ++i) {
        uint64_t tag = events[i].data.u64;
        if (tag == kWakeTag) {
          uint64_t count;
          (void)!::read(wake_, &count, sizeof count);
          RunPosted();
        } else if (tag & kListenTag) {
          Accept(static_cast<int>(tag & ~kListenTag));
        } else {
          OnEvent(tag >> 1, (tag & kUpstreamBit) != 0, events[i].events);
        }
      }
      ExpireDeadlines();
    }
  }

  void RunPosted() {
    std::vector<std::function<void()>> tasks;
    {
      std::lock_guard lock(posted_mu_);
      tasks.swap(posted_);
    }
    for (auto& task : tasks) task();
  }

  int NextWaitMs() const {
    int64_t now = MonotonicUs();
    int64_t wait_us = int64_t{kMaxWaitMs} * 1000;
    for (const auto& [id, conn] : conns_) {
      if (conn->deadline_us > 0) wait_us = std::min(wait_us, conn->deadline_us - now);
    }
    return static_cast<int>(std::max<int64_t>(0, (wait_us + 999) / 1000));
  }

  void Accept(int listen_fd) {
    auto door_it = doors_.find(listen_fd);
    if (door_it == doors_.end()) return;
    for (;;) {
      int fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) return;  // EAGAIN, or the backlog's trouble: the next event retries
      size_t open = 0;
      for (auto& [id, c] : conns_) open += c->door == door_it->second;
      if (open >= options_.max_connections_per_door) {
        ::close(fd);
        continue;
      }
      auto conn = std::make_unique<Conn>();
      conn->id = next_id_++;
      conn->door = door_it->second;
      conn->client = fd;
      {
        std::lock_guard lock(conn->door->mu);
        conn->generation = conn->door->generation;
        if (conn->door->in_call) conn->deadline_us = conn->door->deadline_us;
      }
      Conn& c = *conn;
      conns_[c.id] = std::move(conn);
      Watch(c);
    }
  }

  // Registers or updates the epoll interest of c's sockets for its phase and buffers.
  void Watch(Conn& c) {
    uint32_t client = 0;
    uint32_t upstream = 0;
    switch (c.phase) {
      case Conn::Phase::kHead:
        client = EPOLLIN;
        break;
      case Conn::Phase::kResolving:
        break;
      case Conn::Phase::kConnecting:
        upstream = EPOLLOUT;
        break;
      case Conn::Phase::kRelay:
        if (!c.client_eof && c.to_upstream.size() < kBufferBytes) client |= EPOLLIN;
        if (!c.upstream_eof && c.to_client.size() < kBufferBytes) upstream |= EPOLLIN;
        if (!c.to_upstream.empty()) upstream |= EPOLLOUT;
        if (!c.to_client.empty()) client |= EPOLLOUT;
        break;
      case Conn::Phase::kAnswering:
        client = EPOLLOUT;
        break;
    }
    Interest(c.client, c.id << 1, client, c.client_events);
    if (c.upstream >= 0)
      Interest(c.upstream, c.id << 1 | kUpstreamBit, upstream, c.upstream_events);
  }

  void Interest(int fd, uint64_t tag, uint32_t wanted, uint32_t& current) {
    // Registered once with no events at all is still "registered": tracked by bit 31.
    constexpr uint32_t kRegistered = 1u << 31;
    if ((current & ~kRegistered) == wanted && (current & kRegistered)) return;
    epoll_event e{};
    e.events = wanted;
    e.data.u64 = tag;
    ::epoll_ctl(epoll_, (current & kRegistered) ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, fd, &e);
    current = wanted | kRegistered;
  }

  Conn* Find(uint64_t id) {
    auto it = conns_.find(id);
    return it == conns_.end() ? nullptr : it->second.get();
  }

  // True while c's call is the door's current one.
  bool Current(const Conn& c) {
    std::lock_guard lock(c.door->mu);
    return c.door->generation == c.generation;
  }

  void OnEvent(uint64_t id, bool upstream_side, uint32_t events) {
    Conn* c = Find(id);
    if (c == nullptr) return;
    if (c->phase != Conn::Phase::kHead && !Current(*c)) return Close(id);
    switch (c->phase) {
      case Conn::Phase::kHead:
        return ReadHead(*c);
      case Conn::Phase::kResolving:
        return;
      case Conn::Phase::kConnecting:
        if (upstream_side) return Connected(*c);
        return;
      case Conn::Phase::kRelay:
        // The handler hung up entirely: nothing more can reach it.
        if (!upstream_side && (events & (EPOLLHUP | EPOLLERR))) return Close(id);
        return Relay(*c);
      case Conn::Phase::kAnswering:
        return FlushAnswer(*c);
    }
  }

  // --- The request --------------------------------------------------------------------------

  void ReadHead(Conn& c) {
    char buf[8192];
    for (;;) {
      ssize_t n = ::read(c.client, buf, sizeof buf);
      if (n > 0) {
        c.head.append(buf, static_cast<size_t>(n));
        if (c.head.find("\r\n\r\n") != std::string::npos) break;
        if (c.head.size() > kMaxHeadBytes)
          return AnswerAndClose(c, Failure(400, "the request's head is too large"));
        continue;
      }
      if (n == 0) return Close(c.id);
      if (errno == EINTR) continue;
      if (errno == EAGAIN) return;
      return Close(c.id);
    }
    size_t end = c.head.find("\r\n\r\n");
    std::string head = c.head.substr(0, end + 2);  // through the last header's CRLF
    std::string rest = c.head.substr(end + 4);     // body bytes (or a TLS hello) already read
    c.head.clear();
    HandleRequest(c, head, std::move(rest));
  }

  void HandleRequest(Conn& c, const std::string& head, std::string rest) {
    size_t line_end = head.find("\r\n");
    std::string_view line = std::string_view(head).substr(0, line_end);
    size_t sp1 = line.find(' ');
    size_t sp2 = line.rfind(' ');
    if (sp1 == std::string_view::npos || sp2 == sp1) {
      return AnswerAndClose(c, Failure(400, "not an HTTP request"));
    }
    std::string_view method = line.substr(0, sp1);
    std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
    std::string_view version = line.substr(sp2 + 1);
    if (method.empty() || method.size() > 16 ||
        !std::all_of(method.begin(), method.end(),
                     [](char ch) { return ch >= 'A' && ch <= 'Z'; }) ||
        !version.starts_with("HTTP/1.")) {
      return AnswerAndClose(c, Failure(400, "not an HTTP/1.x request"));
    }
    if (std::string framing = net::FramingError(head, version == "HTTP/1.0"); !framing.empty()) {
      return AnswerAndClose(c, Failure(400, framing));
    }
    c.method = std::string(method);
    std::string path;
    if (method == "CONNECT") {
      c.tunnel = true;
      if (!SplitAuthority(target, c.host, c.port, 0)) {
        return AnswerAndClose(c, Failure(400, "CONNECT needs host:port"));
      }
    } else {
      constexpr std::string_view kHttp = "http://";
      if (target.size() < kHttp.size() ||
          !std::equal(kHttp.begin(), kHttp.end(), target.begin(), [](char a, char b) {
            return a == std::tolower(static_cast<unsigned char>(b));
          })) {
        return AnswerAndClose(
            c, Failure(400, "the gateway forwards http:// URLs; use CONNECT for https"));
      }
      std::string_view after = target.substr(kHttp.size());
      size_t slash = after.find_first_of("/?");
      std::string_view authority = after.substr(0, slash);
      path = slash == std::string_view::npos ? "/" : std::string(after.substr(slash));
      if (path.front() == '?') path.insert(0, "/");
      if (authority.find('@') != std::string_view::npos ||
          !SplitAuthority(authority, c.host, c.port, 80)) {
        return AnswerAndClose(c, Failure(400, "the URL names no valid host"));
      }
      c.to_upstream = OriginFormRequest(head, line_end, path, authority) + rest;
      rest.clear();
    }
    if (c.tunnel) c.to_upstream = std::move(rest);

    // The record of this request, in the call it belongs to.
    std::string refusal = CheckPolicy(c);
    if (c.request < 0) {
      // No call is running: nothing to account for.
      return AnswerAndClose(c, Refusal(refusal));
    }
    if (!refusal.empty()) {
      CountRequest("refused");
      return AnswerAndClose(c, Refusal(refusal));
    }
    if (auto ip = IpAddress::Parse(c.host); ip.ok()) {
      return Resolved(c, {*ip}, "");
    }
    c.phase = Conn::Phase::kResolving;
    Watch(c);
    Resolve(c);
  }

  // The request line and headers to send upstream: origin form, no hop-by-hop headers, the
  // URL's authority as Host, and Connection: close.
  static std::string OriginFormRequest(const std::string& head, size_t line_end,
                                       const std::string& path, std::string_view authority) {
    std::string method = head.substr(0, head.find(' '));
    std::string out = method + " " + path + " HTTP/1.1\r\nHost: " + std::string(authority) + "\r\n";
    size_t at = line_end + 2;
    while (at < head.size()) {
      size_t end = head.find("\r\n", at);
      if (end == std::string::npos) break;
      std::string_view header = std::string_view(head).substr(at, end - at);
      at = end + 2;
      size_t colon = header.find(':');
      if (colon == std::string_view::npos) continue;
      std::string_view name = header.substr(0, colon);
      if (IsHopByHop(name)) continue;
      std::string lower(name);
      std::transform(lower.begin(), lower.end(), lower.begin(),
                     [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
      if (lower == "host") continue;
      out.append(header);
      out.append("\r\n");
    }
    out += "Connection: close\r\n\r\n";
    return out;
  }

  // Opens the request's record when a call is running (c.request) and says why the request is
  // refused before resolution; empty: go on.
  std::string CheckPolicy(Conn& c) {
    EgressDoor::State& door = *c.door;
    std::lock_guard lock(door.mu);
    if (!door.in_call || door.generation != c.generation) {
      return "no call is running in this sandbox";
    }
    c.deadline_us = door.deadline_us;
    EgressDoor::State::Request request;
    request.record.method = c.method;
    request.record.host = c.host.substr(0, kMaxHostInRecord);
    request.record.port = c.port;
    request.started_us = MonotonicUs();
    std::string refusal;
    if (!options_.enabled) {
      refusal = "egress is turned off on this platform";
      request.record.refused = "egress turned off";
    } else if (!door.list.Allows(c.host, c.port)) {
      std::string named = (c.port == 80 || c.port == 443)
                              ? Unbracketed(c.host)
                              : Unbracketed(c.host) + ":" + std::to_string(c.port);
      refusal = named + " is not in this version's egress list";
      request.record.refused = "not in the egress list";
    }
    if (!refusal.empty()) request.open = false;
    c.request = static_cast<int>(door.requests.size());
    door.requests.push_back(std::move(request));
    return refusal;
  }

  // Names wait for a resolver thread per door: at most kResolutionsPerDoor of one sandbox's
  // names are on the threads at once and the rest queue behind them, so a handler asking for
  // names that resolve slowly (or never) holds up its own requests, not another sandbox's.
  void Resolve(const Conn& c) {
    DoorResolutions& queue = resolutions_[c.door];
    if (queue.running >= kResolutionsPerDoor) {
      queue.waiting.emplace_back(c.id, c.host);
      return;
    }
    ++queue.running;
    SubmitResolution(c.door, c.id, c.host);
  }

  // A resolution of door's is over: its next waiting name (of a connection still waiting) goes.
  void ResolutionDone(const std::shared_ptr<EgressDoor::State>& door) {
    auto it = resolutions_.find(door);
    if (it == resolutions_.end()) return;
    DoorResolutions& queue = it->second;
    --queue.running;
    while (!queue.waiting.empty() && queue.running < kResolutionsPerDoor) {
      auto [id, host] = std::move(queue.waiting.front());
      queue.waiting.pop_front();
      Conn* c = Find(id);
      if (c == nullptr || c->phase != Conn::Phase::kResolving) continue;
      ++queue.running;
      SubmitResolution(door, id, host);
    }
    if (queue.running == 0 && queue.waiting.empty()) resolutions_.erase(it);
  }

  void SubmitResolution(const std::shared_ptr<EgressDoor::State>& door, uint64_t id,
                        const std::string& host) {
    resolver_->Submit([this, door, id, name = Unbracketed(host)] {
      auto found = options_.resolve ? options_.resolve(name) : ResolveWithSystem(name);
      std::vector<IpAddress> addresses;
      std::string error;
      if (found.ok()) {
        addresses = std::move(*found);
        if (addresses.size() > kMaxAddresses) addresses.resize(kMaxAddresses);
      } else {
        error = found.status().message();
      }
      Post([this, door, id, addresses = std::move(addresses), error = std::move(error)] {
        ResolutionDone(door);
        Conn* c = Find(id);
        if (c == nullptr || c->phase != Conn::Phase::kResolving) return;
        if (!Current(*c)) return Close(id);
        Resolved(*c, addresses, error);
      });
    });
  }

  void Resolved(Conn& c, const std::vector<IpAddress>& addresses, const std::string& error) {
    if (addresses.empty()) {
      CountRequest("failed");
      return AnswerAndClose(c, Failure(502, "cannot resolve " + Unbracketed(c.host) + ": " +
                                                (error.empty() ? "no address" : error)));
    }
    // Every address, not only the one connected to: a name that also points inside is refused.
    for (const IpAddress& address : addresses) {
      std::string why = gateway_.RefusalFor(address, c.port);
      if (why.empty()) continue;
      std::string shown =
          why == "a platform address" ? address.ToString(c.port) : address.ToString();
      UpdateRecord(c, [&](EgressRecord& r) { r.refused = why; });
      CloseRecord(c);
      CountRequest("refused");
      return AnswerAndClose(c, Refusal("egress to " + shown + " is blocked: " + why));
    }
    c.addresses = addresses;
    c.next_address = 0;
    ConnectNext(c, "");
  }

  void ConnectNext(Conn& c, const std::string& last_error) {
    if (c.upstream >= 0) {
      ::epoll_ctl(epoll_, EPOLL_CTL_DEL, c.upstream, nullptr);
      ::close(c.upstream);
      c.upstream = -1;
      c.upstream_events = 0;
    }
    while (c.next_address < c.addresses.size()) {
      const IpAddress& address = c.addresses[c.next_address++];
      sockaddr_storage storage;
      socklen_t length = address.ToSockaddr(c.port, storage);
      int fd = ::socket(storage.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
      if (fd < 0) continue;
      int one = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      int rc = ::connect(fd, reinterpret_cast<sockaddr*>(&storage), length);
      if (rc != 0 && errno != EINPROGRESS) {
        ::close(fd);
        continue;
      }
      c.upstream = fd;
      UpdateRecord(c, [&](EgressRecord& r) { r.address = address.ToString(); });
      c.phase = Conn::Phase::kConnecting;
      Watch(c);
      return;
    }
    CountRequest("failed");
    AnswerAndClose(
        c, Failure(502, "cannot connect to " + Unbracketed(c.host) + ":" + std::to_string(c.port) +
                            (last_error.empty() ? "" : ": " + last_error)));
  }

  void Connected(Conn& c) {
    int error = 0;
    socklen_t length = sizeof error;
    ::getsockopt(c.upstream, SOL_SOCKET, SO_ERROR, &error, &length);
    if (error != 0) return ConnectNext(c, std::strerror(error));
    CountRequest("allowed");
    c.phase = Conn::Phase::kRelay;
    if (c.tunnel) {
      c.to_client = "HTTP/1.1 200 Connection Established\r\n\r\n";
      c.answered = true;
    }
    Watch(c);
    Relay(c);
  }

  // --- Moving bytes -------------------------------------------------------------------------

  // Adds n bytes to the call's count; false (and the connection answered or closed) when the
  // call went past its byte limit.
  bool Account(Conn& c, size_t n, bool sent) {
    bool over = false;
    {
      std::lock_guard lock(c.door->mu);
      if (c.door->generation != c.generation) return false;
      c.door->bytes += static_cast<int64_t>(n);
      if (c.request >= 0) {
        EgressRecord& r = c.door->requests[static_cast<size_t>(c.request)].record;
        (sent ? r.bytes_sent : r.bytes_received) += static_cast<int64_t>(n);
      }
      over = c.door->bytes > options_.max_bytes_per_call;
    }
    CountBytes(sent ? "sent" : "received", n);
    return !over;
  }

  void Relay(Conn& c) {
    const uint64_t id = c.id;
    // Handler -> upstream.
    if (!c.client_eof && c.to_upstream.size() < kBufferBytes) {
      if (!ReadInto(c.client, c.to_upstream, c.client_eof)) return Close(id);
    }
    if (!c.to_upstream.empty()) {
      ssize_t n = ::send(c.upstream, c.to_upstream.data(), c.to_upstream.size(), MSG_NOSIGNAL);
      if (n < 0 && errno != EAGAIN && errno != EINTR) return Close(id);
      if (n > 0) {
        c.to_upstream.erase(0, static_cast<size_t>(n));
        if (!Account(c, static_cast<size_t>(n), true)) return OverLimit(c);
      }
    }
    if (c.client_eof && c.to_upstream.empty() && !c.upstream_shut) {
      ::shutdown(c.upstream, SHUT_WR);
      c.upstream_shut = true;
    }
    // Upstream -> handler.
    if (!c.upstream_eof && c.to_client.size() < kBufferBytes) {
      size_t before = c.to_client.size();
      if (!ReadInto(c.upstream, c.to_client, c.upstream_eof)) return Close(id);
      size_t got = c.to_client.size() - before;
      if (got > 0) {
        if (!c.tunnel) NoteStatus(c, std::string_view(c.to_client).substr(before, got));
        if (!Account(c, got, false)) return OverLimit(c);
      }
    }
    if (!c.to_client.empty()) {
      ssize_t n = ::send(c.client, c.to_client.data(), c.to_client.size(), MSG_NOSIGNAL);
      if (n < 0 && errno != EAGAIN && errno != EINTR) return Close(id);
      if (n > 0) {
        c.to_client.erase(0, static_cast<size_t>(n));
        c.answered = true;
      }
    }
    if (c.upstream_eof && c.to_client.empty()) return Close(id);
    if (c.client_eof && c.upstream_eof) return Close(id);
    Watch(c);
  }

  // Reads what fd has into buffer, up to kBufferBytes; false on an error.
  static bool ReadInto(int fd, std::string& buffer, bool& eof) {
    char buf[16384];
    while (buffer.size() < kBufferBytes) {
      size_t want = std::min(sizeof buf, kBufferBytes - buffer.size());
      ssize_t n = ::recv(fd, buf, want, 0);
      if (n > 0) {
        buffer.append(buf, static_cast<size_t>(n));
        continue;
      }
      if (n == 0) {
        eof = true;
        return true;
      }
      if (errno == EINTR) continue;
      return errno == EAGAIN;
    }
    return true;
  }

  void NoteStatus(Conn& c, std::string_view bytes) {
    if (c.status_prefix.size() >= 32) return;
    c.status_prefix.append(bytes.substr(0, 32 - c.status_prefix.size()));
    // "HTTP/1.1 200 ..."
    if (c.status_prefix.size() < 12 || !c.status_prefix.starts_with("HTTP/")) return;
    size_t sp = c.status_prefix.find(' ');
    if (sp == std::string::npos || sp + 4 > c.status_prefix.size()) return;
    int status = 0;
    for (size_t i = sp + 1; i < sp + 4; ++i) {
      char ch = c.status_prefix[i];
      if (ch < '0' || ch > '9') return;
      status = status * 10 + (ch - '0');
    }
    UpdateRecord(c, [&](EgressRecord& r) { r.status = status; });
    c.status_prefix.resize(32);  // done: no more parsing
  }

  void OverLimit(Conn& c) {
    UpdateRecord(c, [&](EgressRecord& r) { r.refused = "over the call's egress byte limit"; });
    CountRequest("failed");
    if (!c.answered && !c.tunnel) {
      return AnswerAndClose(
          c, Failure(502, "the call passed its egress limit of " +
                              std::to_string(options_.max_bytes_per_call) + " bytes"));
    }
    Close(c.id);
  }

  void ExpireDeadlines() {
    int64_t now = MonotonicUs();
    std::vector<uint64_t> expired;
    for (auto& [id, conn] : conns_) {
      if (conn->deadline_us > 0 && now >= conn->deadline_us &&
          conn->phase != Conn::Phase::kAnswering) {
        expired.push_back(id);
      }
    }
    for (uint64_t id : expired) {
      Conn* c = Find(id);
      if (c == nullptr) continue;
      c->deadline_us = 0;
      CountRequest("failed");
      {
        std::lock_guard lock(c->door->mu);
        if (c->door->in_call && c->door->generation == c->generation) {
          c->door->cut_at_deadline = true;
        }
      }
      if (!c->answered && c->phase != Conn::Phase::kHead) {
        AnswerAndClose(*c, Failure(504, "the call's deadline passed"));
      } else {
        Close(id);
      }
    }
  }

  // --- Ending -------------------------------------------------------------------------------

  template <typename F>
  void UpdateRecord(Conn& c, F&& update) {
    if (c.request < 0) return;
    std::lock_guard lock(c.door->mu);
    if (c.door->generation != c.generation) return;
    update(c.door->requests[static_cast<size_t>(c.request)].record);
  }

  void CloseRecord(Conn& c) {
    if (c.request < 0) return;
    std::lock_guard lock(c.door->mu);
    if (c.door->generation == c.generation) {
      auto& request = c.door->requests[static_cast<size_t>(c.request)];
      if (request.open) {
        request.record.ms = (MonotonicUs() - request.started_us) / 1000;
        request.open = false;
      }
    }
    c.request = -1;
  }

  // Sends answer to the handler, then closes (the upstream at once).
  void AnswerAndClose(Conn& c, std::string answer) {
    CloseRecord(c);
    if (c.upstream >= 0) {
      ::epoll_ctl(epoll_, EPOLL_CTL_DEL, c.upstream, nullptr);
      ::close(c.upstream);
      c.upstream = -1;
    }
    c.to_client = std::move(answer);
    c.phase = Conn::Phase::kAnswering;
    c.answered = true;
    FlushAnswer(c);
  }

  void FlushAnswer(Conn& c) {
    while (!c.to_client.empty()) {
      ssize_t n = ::send(c.client, c.to_client.data(), c.to_client.size(), MSG_NOSIGNAL);
      if (n > 0) {
        c.to_client.erase(0, static_cast<size_t>(n));
        continue;
      }
      if (n < 0 && (errno == EAGAIN || errno == EINTR)) return Watch(c);
      break;
    }
    Close(c.id);
  }

  void Close(uint64_t id) {
    auto it = conns_.find(id);
    if (it == conns_.end()) return;
    Conn& c = *it->second;
    CloseRecord(c);
    for (int fd : {c.client, c.upstream}) {
      if (fd < 0) continue;
      ::epoll_ctl(epoll_, EPOLL_CTL_DEL, fd, nullptr);
      ::close(fd);
    }
    conns_.erase(it);
  }

  EgressGateway& gateway_;
  const EgressOptions& options_;
  int epoll_ = -1;
  int wake_ = -1;
  bool stopping_ = false;  // loop thread only
  std::thread thread_;
  std::mutex posted_mu_;
  std::vector<std::function<void()>> posted_;  // guarded by posted_mu_
  // Loop thread only:
  std::map<int, std::shared_ptr<EgressDoor::State>> doors_;  // by listening fd
  std::unordered_map<uint64_t, std::unique_ptr<Conn>> conns_;
  uint64_t next_id_ = 1;
  std::unique_ptr<ThreadPool> resolver_;  // getaddrinfo blocks: never on the loop thread
  struct DoorResolutions {
    int running = 0;                                       // on the resolver threads
    std::deque<std::pair<uint64_t, std::string>> waiting;  // connection id, host
  };
  // Loop thread only. A door's entry lives while it has names running or waiting.
  std::map<std::shared_ptr<EgressDoor::State>, DoorResolutions> resolutions_;
};

// ---------------------------------------------------------------------------------------------

EgressDoor::~EgressDoor() {
  gateway_.loop_->RemoveDoor(state_);
}

int EgressDoor::port() const {
  return state_->port;
}

void EgressDoor::BeginCall(const core::EgressList& list, int64_t deadline_us) {
  std::lock_guard lock(state_->mu);
  state_->in_call = true;
  state_->list = list;
  state_->deadline_us = deadline_us;
  state_->bytes = 0;
  state_->cut_at_deadline = false;
  state_->requests.clear();
}

CallEgress EgressDoor::EndCall() {
  CallEgress out;
  bool had_requests;
  {
    std::lock_guard lock(state_->mu);
    const int64_t now = MonotonicUs();
    for (auto& request : state_->requests) {
      if (request.open) request.record.ms = (now - request.started_us) / 1000;
      out.requests.push_back(std::move(request.record));
    }
    out.bytes = state_->bytes;
    out.cut_at_deadline = state_->cut_at_deadline;
    had_requests = !state_->requests.empty();
    state_->requests.clear();
    state_->in_call = false;
    state_->list = core::EgressList();
    state_->bytes = 0;
    ++state_->generation;
  }
  // The call's connections end with it. Those the loop has not closed yet are stale and move
  // no more bytes (every step checks the generation); closing them now frees their sockets.
  if (had_requests) {
    auto state = state_;
    EgressGateway::Loop* loop = gateway_.loop_.get();
    loop->Post([loop, state] { loop->CloseConnections(state.get(), /*stale_only=*/true); });
  }
  return out;
}

Result<std::unique_ptr<EgressGateway>> EgressGateway::Start(EgressOptions options) {
  std::unique_ptr<EgressGateway> gateway(new EgressGateway(std::move(options)));
  gateway->loop_ = std::make_unique<Loop>(*gateway);
  Status started = gateway->loop_->Start();
  if (!started.ok()) return started;
  return gateway;
}

EgressGateway::EgressGateway(EgressOptions options) : options_(std::move(options)) {}

EgressGateway::~EgressGateway() = default;

Result<std::unique_ptr<EgressDoor>> EgressGateway::Adopt(int listen_fd) {
  sockaddr_in bound{};
  socklen_t length = sizeof bound;
  ::getsockname(listen_fd, reinterpret_cast<sockaddr*>(&bound), &length);
  auto state = std::make_shared<EgressDoor::State>();
  state->listen_fd = listen_fd;
  state->port = ntohs(bound.sin_port);
  loop_->AddDoor(state);
  return std::unique_ptr<EgressDoor>(new EgressDoor(*this, std::move(state)));
}

Result<std::unique_ptr<EgressDoor>> EgressGateway::OpenDoorOnLoopback(int port) {
  auto fd = Listen(port);
  if (!fd.ok()) return fd.status();
  return Adopt(*fd);
}

Result<std::unique_ptr<EgressDoor>> EgressGateway::OpenDoorIn(pid_t pid) {
  // A thread of its own enters the sandbox's network namespace and ends there: no thread of
  // the executor ever has to find its way back.
  Result<int> made = Status::Internal("not run");
  std::thread enter([&] {
    std::string path = "/proc/" + std::to_string(pid) + "/ns/net";
    int ns = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (ns < 0) {
      made = Status::Internal("cannot open " + path + ": " + std::strerror(errno));
      return;
    }
    int rc = ::setns(ns, CLONE_NEWNET);
    int err = errno;
    ::close(ns);
    if (rc != 0) {
      made = Status::Internal(std::string("cannot enter the sandbox's network: ") +
                              std::strerror(err));
      return;
    }
    Status up = LoopbackUp();
    if (!up.ok()) {
      made = up;
      return;
    }
    made = Listen(kEgressProxyPort);
  });
  enter.join();
  if (!made.ok()) return made.status();
  return Adopt(*made);
}

bool IsThisHostsAddress(const IpAddress& address) {
  const core::AddressClass kind = core::ClassifyAddress(address);
  if (kind == core::AddressClass::kLoopback || kind == core::AddressClass::kUnspecified) {
    return true;
  }
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return true;  // unknown: refuse rather than guess
  bool found = false;
  for (ifaddrs* i = list; i != nullptr && !found; i = i->ifa_next) {
    if (i->ifa_addr == nullptr) continue;
    const socklen_t length =
        i->ifa_addr->sa_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
    auto mine = IpAddress::FromSockaddr(i->ifa_addr, length);
    found = mine.has_value() && *mine == address;
  }
  ::freeifaddrs(list);
  return found;
}

std::string EgressGateway::RefusalFor(const IpAddress& address, int port) const {
  const IpAddress plain = address.MappedV4().value_or(address);
  for (const EgressEndpoint& endpoint : options_.deny_endpoints) {
    if (endpoint.port != port) continue;
    const bool any =
        endpoint.address == IpAddress::V4({0, 0, 0, 0}) || endpoint.address == IpAddress::V6({});
    if (endpoint.address == plain || any) {
      return "a platform address";
    }
  }
  for (const core::Cidr& cidr : options_.deny_cidrs) {
    if (cidr.Contains(address)) return "blocked by the operator";
  }
  for (const EgressEndpoint& endpoint : options_.allow_endpoints) {
    if (endpoint.port == port && endpoint.address == plain) return "";
  }
  bool allowed = false;
  for (const core::Cidr& cidr : options_.allow_cidrs) allowed = allowed || cidr.Contains(address);
  const core::AddressClass kind = core::ClassifyAddress(address);
  if (!allowed && kind != core::AddressClass::kPublic) {
    return std::string(core::AddressClassName(kind));
  }
  // Allowed, or public: still never the host itself. No allow list opens it.
  const bool host =
      options_.is_host_address ? options_.is_host_address(plain) : IsThisHostsAddress(plain);
  return host ? "an address of this host" : "";
}

}  // namespace toolgate::executor
