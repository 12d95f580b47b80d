// Bus: one NATS connection, with the few operations Toolgate services use.
//
// The connection reconnects forever (a NATS restart is survived: subscriptions are restored by
// the client library), sends without coalescing delay (SendAsap: ~0.2 ms round trips on
// loopback instead of ~1 ms), and asks the server for "no responders" notices, so a publish with a
// reply subject to a subject nobody serves yields a Message with no_responders set on that reply
// subject. The W3C `traceparent` travels in a NATS header.
//
// Metrics (metrics::Registry::Global()): messages published and received, reconnects, and
// toolgate_nats_connected{connection=<BusOptions.name>}, 1 while connected and not draining,
// which a service's readiness reads.
//
// Thread-safe: every method may be called from any thread. Handlers run on the client library's
// delivery thread of their subscription; long work belongs on a ThreadPool (see Service).
#pragma once

#include <nats/nats.h>

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "toolgate/base/status.h"

namespace toolgate::metrics {
class Gauge;
}

namespace toolgate::bus {

struct Message {
  std::string subject;
  std::string reply;
  std::string data;
  std::string traceparent;     // empty when the sender set none
  bool no_responders = false;  // the server's notice that the subject had no subscriber
};

struct BusOptions {
  std::string url = "nats://127.0.0.1:4222";  // comma-separated list for a cluster
  std::string name;                           // shown by the server's monitoring
  int connect_timeout_ms = 30000;             // how long Connect keeps retrying at start-up
  // A server that answers no PING for ping_interval_ms * max_pings_out is taken for gone: the
  // connection is dropped and re-established (and /readyz says so meanwhile). The client's
  // default, 2 minutes twice, would keep a replica "ready" on a hung server for four minutes.
  int ping_interval_ms = 5000;
  int max_pings_out = 2;
  // Credentials; empty user: none (or those in the URL, nats://user:password@host:port).
  std::string user;
  std::string password;
  // Prefix of every inbox (NewInbox, Request's replies), e.g. "_INBOX.edge": with per-user
  // subscribe permissions, only this connection's user may read its replies.
  std::string inbox_prefix = "_INBOX";
};

// The toolgate_nats_connected series of connections named name (BusOptions.name): 1 while one
// is up and not draining. Lives for the process; thread-safe.
const metrics::Gauge& ConnectionGauge(const std::string& name);

class Bus {
 public:
  using Handler = std::function<void(Message&&)>;

  // Connects, retrying until options.connect_timeout_ms has passed.
  static Result<std::unique_ptr<Bus>> Connect(const BusOptions& options);
  // Closes the connection without draining; see Drain().
  ~Bus();
  Bus(const Bus&) = delete;
  Bus& operator=(const Bus&) = delete;

  // Publishes data; reply and traceparent may be empty. Unavailable while disconnected beyond
  // the client's reconnect buffer.
  Status Publish(std::string_view subject, std::string_view data, std::string_view reply = {},
                 std::string_view traceparent = {});
  // Sends a request and waits for the reply. Unavailable with "no responders" when nobody
  // serves the subject, Timeout after timeout_ms.
  Result<Message> Request(std::string_view subject, std::string_view data, int timeout_ms,
                          std::string_view traceparent = {});
  // Subscribes; queue empty means every subscriber gets every message (broadcast), otherwise
  // the queue group's members share them. The subscription lives until Drain() or destruction.
  Status Subscribe(const std::string& subject, const std::string& queue, Handler handler);

  // A subject unique to this connection, for replies: "<inbox_prefix>.<unique id>".
  std::string NewInbox();
  // Stops delivery to every subscription, lets handlers finish what was delivered, and flushes.
  void Drain(int timeout_ms);
  bool connected() const;

 private:
  struct Sub {
    natsSubscription* sub = nullptr;
    Handler handler;
    ~Sub();
  };
  Bus() = default;
  static void OnMessage(natsConnection* nc, natsSubscription* sub, natsMsg* msg, void* closure);
  static Message ToMessage(natsMsg* msg);
  static void OnDisconnected(natsConnection* nc, void* closure);
  static void OnReconnected(natsConnection* nc, void* closure);

  natsConnection* nc_ = nullptr;
  std::string inbox_prefix_ = "_INBOX";
  std::atomic<bool> closing_{false};     // set before teardown: a disconnect then is expected
  metrics::Gauge* connected_ = nullptr;  // this connection's series; lives for the process
  std::mutex mu_;
  std::vector<std::unique_ptr<Sub>> subs_;  // guarded by mu_
};

}  // namespace toolgate::bus
