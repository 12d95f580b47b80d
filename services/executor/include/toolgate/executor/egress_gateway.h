// EgressGateway: the only way out of a sandbox, an HTTP/1.1 forward proxy owned by the executor.
//
// A sandbox has a network namespace of its own with no route anywhere. At spawn the executor
// gives it one door: a TCP socket listening on the sandbox's own loopback, 127.0.0.1:
// kEgressProxyPort, made by a short-lived executor thread that enters the sandbox's network
// namespace (setns on /proc/<pid>/ns/net), brings `lo` up, binds and listens, and ends. The
// socket belongs to the executor; the sandbox can connect to it and to nothing else. Its
// environment names it (EgressProxyEnv: HTTP_PROXY and friends), so standard clients such as
// Python's urllib use it without being told.
//
// One event loop thread (epoll, non-blocking sockets, no thread per connection) serves every
// door. It speaks two forms of proxy request, one request per connection:
//   - `CONNECT host:port`: a tunnel; TLS runs end to end between the handler and the upstream,
//     so the gateway never sees plaintext and certificate checks stay in the handler's client;
//   - an absolute-form request (`GET http://host/path HTTP/1.1`): forwarded in origin form with
//     `Connection: close`, the answer's status line recorded.
// Each request is checked, in order: egress turned off on the platform; a call running in the
// sandbox (a door's policy is set when a call starts and cleared when it ends, and the call's
// connections are then closed); the host against the calling version's EgressList. The gateway
// then resolves the name itself (on a resolver thread, off the loop) and checks EVERY address it
// got: the platform's own endpoints (deny_endpoints) first, then the operator's deny CIDRs, the
// operator's allow CIDRs, and finally the built-in address classes (core::ClassifyAddress). It
// connects only to addresses it checked, never resolving again, so a name cannot be re-pointed
// between the check and the connection (DNS rebinding). A redirect is a new request from the
// handler's client and is checked like any other.
//
// Refusals are `403 Forbidden` with `X-Toolgate-Egress-Refused: <message>` and the message as
// the body ("egress to 10.0.0.5 is blocked: private address", "api.x.com is not in this version's
// egress list"); upstream failures are 502 and the call's deadline 504, with
// `X-Toolgate-Egress-Error: <message>`. The runtimes' HTTP facilities read these headers.
//
// Per call, the bytes through all its connections are capped (max_bytes_per_call) and every
// connection ends at the call's deadline. Each request becomes an EgressRecord: method, host,
// port, address, status, bytes, ms, and the rule that refused it; never a path, query string,
// header or body, which can carry secrets.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "toolgate/base/status.h"
#include "toolgate/core/egress_policy.h"

namespace toolgate::executor {

// The port of every sandbox's door, on the sandbox's own loopback. The same in every sandbox:
// each has a loopback of its own, and a fixed port lets the environment be fixed before spawn.
constexpr int kEgressProxyPort = 3128;

// The headers of the gateway's own answers, which the runtimes' HTTP facilities turn into errors
// a handler can catch: a rule refused the request (403), or the upstream failed (502) or the
// call's deadline passed (504). The value is the message, also the answer's body.
constexpr char kEgressRefusedHeader[] = "X-Toolgate-Egress-Refused";
constexpr char kEgressErrorHeader[] = "X-Toolgate-Egress-Error";

// HTTP_PROXY, HTTPS_PROXY, http_proxy, https_proxy (http://127.0.0.1:3128), NO_PROXY and
// no_proxy (empty) and TOOLGATE_EGRESS_PROXY (127.0.0.1:3128), as "NAME=value".
std::vector<std::string> EgressProxyEnv();

// An address of the platform itself: a handler may not reach it whatever the operator allows.
// An unspecified address (0.0.0.0, ::) stands for every address on that port.
struct EgressEndpoint {
  core::IpAddress address;
  int port = 0;
};

// A name's addresses from the system's resolver (getaddrinfo: /etc/hosts, then DNS), each once,
// at most 16. Blocking. Unavailable with the resolver's message when it has none.
Result<std::vector<core::IpAddress>> ResolveWithSystem(const std::string& name);

// The addresses of "host:port", "[v6]:port" or a URL such as "nats://host:port" (scheme and
// user info ignored), resolved now: every address the name has. Blocking; for start-up.
// InvalidArgument when it is not of that form or the name does not resolve.
Result<std::vector<EgressEndpoint>> ResolveEgressEndpoints(std::string_view text);

struct EgressOptions {
  bool enabled = true;                         // false: every request is refused (--no-egress)
  std::vector<core::Cidr> allow_cidrs;         // allowed although a built-in class blocks them
  std::vector<core::Cidr> deny_cidrs;          // blocked; wins over allow_cidrs
  std::vector<EgressEndpoint> deny_endpoints;  // the platform's NATS, Redis, PostgreSQL, edge
  // Whether an address belongs to this host (or the pod it shares a network with). Such an
  // address is refused on every port, whatever allow_cidrs say: the platform's services listen
  // there, some on every address (an admin port on 0.0.0.0), and so do the host's own (the
  // kubelet, sshd). Empty: IsThisHostsAddress (egress_gateway.h).
  std::function<bool(const core::IpAddress&)> is_host_address;
  // Single endpoints handlers may reach although they are on this host (the demo's own weather
  // service): an exact address and port, never a range, and never a platform endpoint.
  std::vector<EgressEndpoint> allow_endpoints;
  int64_t max_bytes_per_call = 64 << 20;  // both directions, all of a call's requests
  size_t resolver_threads = 2;
  // How names are resolved: blocking, on a resolver thread, exactly once per request (the
  // gateway connects only to what this returned and it checked). Empty: ResolveWithSystem.
  std::function<Result<std::vector<core::IpAddress>>(const std::string& name)> resolve;
  size_t max_connections_per_door = 32;
};

// One outbound request of a call.
struct EgressRecord {
  std::string method;  // "GET", "CONNECT", ...
  std::string host;    // as the handler named it
  int port = 0;
  std::string address;         // the address connected to; empty when refused before connecting
  int status = 0;              // the upstream's HTTP status; 0 for a tunnel or a refusal
  int64_t bytes_sent = 0;      // handler -> upstream
  int64_t bytes_received = 0;  // upstream -> handler
  int64_t ms = 0;
  std::string refused;  // the rule that refused it ("private address"); empty: allowed
};

// What a call did through its door.
struct CallEgress {
  std::vector<EgressRecord> requests;
  int64_t bytes = 0;  // sent and received, all requests
  // The call's deadline cut one of its requests (answered 504): the call has timed out, whatever
  // its handler made of that answer in the moment it had left.
  bool cut_at_deadline = false;
};

class EgressGateway;

// True for an address of this host: loopback, unspecified (0.0.0.0, ::, which connect to the
// host), or assigned to one of the interfaces of the caller's network namespace, read anew on
// each call (getifaddrs), so that an address added since the gateway started counts too.
// Thread-safe; an interface list that cannot be read counts every address as the host's.
bool IsThisHostsAddress(const core::IpAddress& address);

// One sandbox's door: its listening socket and the policy of the call running there. Owned by
// the worker whose sandbox it serves; must be destroyed before the gateway. BeginCall/EndCall
// are called by the thread running the call, one call at a time; thread-safe against the loop.
class EgressDoor {
 public:
  // Closes the listener and every connection through it (waits for the loop to do so).
  ~EgressDoor();
  EgressDoor(const EgressDoor&) = delete;
  EgressDoor& operator=(const EgressDoor&) = delete;

  // The port the door listens on (kEgressProxyPort in a sandbox).
  int port() const;
  // From now until EndCall, requests are checked against list (copied) and end at deadline_us
  // (MonotonicUs).
  void BeginCall(const core::EgressList& list, int64_t deadline_us);
  // Ends the call: its policy is cleared, its connections are closed, and what it did returns.
  CallEgress EndCall();

 private:
  friend class EgressGateway;
  struct State;
  EgressDoor(EgressGateway& gateway, std::shared_ptr<State> state)
      : gateway_(gateway), state_(std::move(state)) {}
  EgressGateway& gateway_;
  std::shared_ptr<State> state_;
};

class EgressGateway {
 public:
  // Starts the loop and resolver threads. Internal when epoll or eventfd cannot be made.
  static Result<std::unique_ptr<EgressGateway>> Start(EgressOptions options);
  // Stops the threads and closes every socket. Every door must be gone already.
  ~EgressGateway();
  EgressGateway(const EgressGateway&) = delete;
  EgressGateway& operator=(const EgressGateway&) = delete;

  // A door on 127.0.0.1:kEgressProxyPort in the network namespace of process pid, whose
  // loopback it brings up. Needs CAP_SYS_ADMIN and CAP_NET_ADMIN over that namespace (the
  // executor is root). Internal with the failing step. Thread-safe.
  Result<std::unique_ptr<EgressDoor>> OpenDoorIn(pid_t pid);
  // A door on 127.0.0.1:port in the executor's own namespace (0: any free port; see port()):
  // for tests and benchmarks, which have no sandbox. Thread-safe.
  Result<std::unique_ptr<EgressDoor>> OpenDoorOnLoopback(int port = 0);

  // Why address:port may not be reached, in the words of a refusal ("private address",
  // "a platform address", "blocked by the operator"); empty when it may. Pure; thread-safe.
  std::string RefusalFor(const core::IpAddress& address, int port) const;

  const EgressOptions& options() const { return options_; }

 private:
  friend class EgressDoor;
  class Loop;
  explicit EgressGateway(EgressOptions options);
  Result<std::unique_ptr<EgressDoor>> Adopt(int listen_fd);

  EgressOptions options_;
  std::unique_ptr<Loop> loop_;
};

}  // namespace toolgate::executor
