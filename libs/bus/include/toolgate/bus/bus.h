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
// Batches: messages bound for the same subscriber can travel as one NATS message (PublishBatch,
// PublishCoalesced, and bus::Batch in batch.h). A lone message is always sent plainly on its own
// subject, so an idle system pays nothing for batching; several go as one envelope (a v1::BusBatch
// marked by the NATS header "Tg-Batch") on a destination subject of the same subscription. The
// receiving Bus opens the envelope and runs the subscription's handler once per entry, as if each
// had arrived alone; an entry whose subject the subscription would not have received is dropped
// (logged), so an envelope carries nothing its sender could not have published directly. The
// server's "no responders" notice for an envelope reaches the handler once per entry, on each
// entry's reply subject.
//
// Reads where they are used: a subscription made with Delivery::kReaderThread has its messages
// handled on the thread that reads the connection's socket, as they are parsed, instead of being
// handed to a delivery thread (one wake-up and context switch per message saved). The hook is the
// client library's message filter (natsConn_setFilterWithClosure: exported by libnats, declared
// only in its private headers; the build checks that it exists). A message goes to the reader
// thread only when exactly one of this Bus's subscriptions matches its subject and that one asked
// for it; everything else (request replies, overlapping subscriptions, messages while draining)
// takes the library's usual path.
//
// Thread-safe: every method may be called from any thread. Handlers run on the client library's
// delivery thread of their subscription, or on its reader thread (kReaderThread); long work
// belongs on a ThreadPool (see Service).
#pragma once

#include <nats/nats.h>

#include <atomic>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
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

// A message to send.
struct Outgoing {
  Outgoing() = default;
  Outgoing(std::string subject_, std::string data_, std::string reply_ = {},
           std::string traceparent_ = {})
      : subject(std::move(subject_)),
        data(std::move(data_)),
        reply(std::move(reply_)),
        traceparent(std::move(traceparent_)) {}
  std::string subject;
  std::string data;
  std::string reply;        // empty: none
  std::string traceparent;  // empty: none
  // PublishCoalesced only: called, on the sending thread, when the message was queued and then
  // could not be sent (its sender had already been told Ok).
  std::function<void(const Status&)> unsent;
};

// The destination on which messages to subject may be batched when their subscriber receives
// them through "<prefix>.*" (subject is "<prefix>.<token>"): "<prefix>._b". For the reply inboxes
// of edge::ReplyMux and for tg.billing.settle.<execution_id>.
std::string SiblingDestination(std::string_view subject);

// "tg.health.<service>": every service answers "ok" there (Service::Run). core/subjects.h
// re-exports it with the other subjects.
std::string HealthSubject(std::string_view service);

// Whether subject would be delivered to a subscription on pattern (NATS wildcards: "*" one
// token, ">" one or more trailing tokens).
bool SubjectMatches(std::string_view pattern, std::string_view subject);

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

// Where a subscription's handler runs.
enum class Delivery {
  kDeliveryThread,  // the library's delivery thread of the subscription: may block briefly
  // The thread that reads the connection: the handler must not block and must never call
  // Request() (its reply could only be read by this very thread).
  kReaderThread,
};

class JetStream;

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
  // Sends messages for the subscription that receives destination, as few NATS messages as
  // their bounds allow (256 entries, 1 MiB of data each): one alone goes plainly on its subject,
  // several in envelopes on destination. Every message must be one the same subscription
  // receives. Returns the first failure; the other envelopes are still tried.
  Status PublishBatch(std::string_view destination, std::vector<Outgoing> messages);
  // Sends m now when no other thread is publishing coalesced messages on this connection;
  // otherwise queues it for that thread, which sends everything that piled up meanwhile as one
  // batch per destination before it returns. A batch is what queued while the previous one was
  // being written: no timer, no added latency when idle. A queued message's failure is logged,
  // counted and reported to its m.unsent, not returned (its sender has moved on).
  Status PublishCoalesced(std::string destination, Outgoing m);
  // For an event loop that decides many messages in one pass (the edge's front): between
  // HoldCoalesced and SendCoalesced, PublishCoalesced only queues, from any thread, and
  // SendCoalesced sends what queued, one batch per destination (or leaves it to a thread that
  // is sending already). So what one pass decided leaves as one NATS message per destination.
  // One holder at a time; the loop must not block between the two.
  void HoldCoalesced();
  void SendCoalesced();

  // Sends a request and waits for the reply. Unavailable with "no responders" when nobody
  // serves the subject, Timeout after timeout_ms.
  Result<Message> Request(std::string_view subject, std::string_view data, int timeout_ms,
                          std::string_view traceparent = {});
  // Subscribes; queue empty means every subscriber gets every message (broadcast), otherwise
  // the queue group's members share them. The subscription lives until Drain() or destruction.
  Status Subscribe(const std::string& subject, const std::string& queue, Handler handler,
                   Delivery delivery = Delivery::kDeliveryThread);

  // A subject unique to this connection, for replies: "<inbox_prefix>.<unique id>".
  std::string NewInbox();
  // Returns once the server has processed everything published on this connection so far (a
  // round trip), so that a message sent afterwards on another connection cannot overtake it.
  // Timeout after timeout_ms; Unavailable when disconnected.
  Status Flush(int timeout_ms);
  // Stops delivery to every subscription, lets handlers finish what was delivered, and flushes.
  void Drain(int timeout_ms);
  bool connected() const;
  // How many times this connection came back after losing the server: a subscriber whose state
  // mirrors broadcasts compares it between uses, since broadcasts sent meanwhile are lost.
  uint64_t reconnects() const { return reconnects_.load(std::memory_order_acquire); }

 private:
  // JetStream (jet_stream.h) makes its context on nc_; that is all it touches.
  friend class JetStream;
  struct Sub {
    natsSubscription* sub = nullptr;
    Bus* bus = nullptr;
    std::string pattern;  // the subject subscribed to: entries of an envelope must match it
    Delivery delivery = Delivery::kDeliveryThread;
    Handler handler;
    ~Sub();
  };
  Bus() = default;
  static void OnMessage(natsConnection* nc, natsSubscription* sub, natsMsg* msg, void* closure);
  // The library's message filter, on its reader thread: takes *msg (sets it to null) when it
  // belongs to exactly one subscription, a kReaderThread one, and handles it there.
  static void OnReaderThread(natsConnection* nc, natsMsg** msg, void* closure);
  static Message ToMessage(natsMsg* msg);
  // Hands each entry of an envelope to sub's handler.
  void DeliverBatch(Sub& sub, natsMsg* msg);
  // Delivers a "no responders" notice for one of this connection's envelopes to each entry's
  // reply subject; false when subject is not such an envelope's reply.
  bool FanOutNoResponders(Sub& sub, const std::string& subject);
  // PublishCoalesced's writer: sends what queued, until nothing is left (then stops being the
  // writer). The caller is the writer (coalescing_ set).
  void SendQueuedCoalesced();
  // Publishes one envelope; reply_prefix non-empty: every entry's reply shares it, and the
  // envelope gets a reply subject under it whose "no responders" notice fans out.
  Status PublishEnvelope(std::string_view destination, std::vector<Outgoing>::iterator first,
                         std::vector<Outgoing>::iterator last);
  static void OnDisconnected(natsConnection* nc, void* closure);
  static void OnReconnected(natsConnection* nc, void* closure);

  natsConnection* nc_ = nullptr;
  std::string inbox_prefix_ = "_INBOX";
  std::atomic<bool> closing_{false};  // set before teardown: a disconnect then is expected
  std::atomic<bool> draining_{false};
  std::atomic<uint64_t> reconnects_{0};  // set by Drain(): the library's path drains properly
  metrics::Gauge* connected_ = nullptr;  // this connection's series; lives for the process
  std::mutex mu_;
  std::vector<std::unique_ptr<Sub>> subs_;  // guarded by mu_

  // PublishCoalesced: the thread that sends, and what queued for it by destination.
  std::mutex coalesce_mu_;
  bool coalescing_ = false;                                       // guarded by coalesce_mu_
  bool coalesce_held_ = false;                                    // guarded by coalesce_mu_
  std::vector<std::pair<std::string, Outgoing>> coalesce_queue_;  // guarded by coalesce_mu_

  // The reply subjects of recent envelopes and their entries' replies, for "no responders"
  // notices, which arrive within a round trip; bounded (oldest forgotten first).
  std::mutex envelopes_mu_;
  uint64_t next_envelope_ = 1;              // guarded by envelopes_mu_
  std::deque<std::string> envelope_order_;  // guarded by envelopes_mu_
  std::unordered_map<std::string, std::vector<std::string>> envelope_replies_;  // guarded

  // libnats frees a message on its garbage-collector thread, and natsMsg_Destroy wakes that
  // thread whenever it sleeps: at low load one wake-up per message sent or received. Messages
  // done with are destroyed in groups instead (Bury), one wake-up per group; a group is at most
  // kGraveyardMessages messages and kGraveyardBytes bytes (a larger message goes at once), and
  // the rest is destroyed with the Bus.
  void Bury(natsMsg* msg);
  static constexpr size_t kGraveyardMessages = 32;
  static constexpr size_t kGraveyardBytes = 256 * 1024;
  std::mutex graveyard_mu_;
  std::vector<natsMsg*> graveyard_;  // guarded by graveyard_mu_
  size_t graveyard_bytes_ = 0;       // guarded by graveyard_mu_
};

}  // namespace toolgate::bus
