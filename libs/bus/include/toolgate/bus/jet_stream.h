// JetStream: NATS's durable queue, on the connection of a Bus.
//
// A stream stores what is published to its subjects on the server's disk (file storage) and
// keeps it across restarts of nats-server; a durable pull consumer hands the stored messages to
// whoever fetches them, each to one fetcher at a time, and delivers one again when it is not
// acknowledged within the consumer's ack wait. Billing queues its asynchronous executions this
// way (stream "TG_ASYNC" on "tg.async.queue.*", consumer "dispatch").
//
//   auto js = bus::JetStream::Open(bus);                     // bus outlives js
//   Status s = (*js)->EnsureStream({"TG_ASYNC", {"tg.async.queue.*"}});
//   s = (*js)->Publish("tg.async.queue.e1", bytes, /*msg_id=*/"e1", traceparent);
//   auto consumer = (*js)->Consumer({"TG_ASYNC", "dispatch"});
//   auto batch = (*consumer)->Fetch(/*max=*/16, /*timeout_ms=*/1000);  // empty: nothing came
//   for (bus::QueuedMessage& m : *batch) { ...; m.Ack(); }
//
// Streams are created with work-queue retention: a message stays stored until a consumer
// acknowledges it (Ack or Term), then the server removes it; max_age_ms, when set, drops what
// waited longer. So the queue holds exactly the work not yet done, and a stream has one consumer
// (the server refuses a second one whose subjects overlap the first's); any number of
// PullConsumer objects, in any number of processes, may bind to that one durable and share its
// messages.
//
// Delivery is at least once: a message is delivered again after Nak, after its ack wait without
// any acknowledgement (a dispatcher that died), and when an Ack's confirmation was lost. A
// publish is stored at most once per Nats-Msg-Id within the stream's duplicate window, so a
// publisher that got Unavailable (it cannot know whether the message was stored) publishes
// again with the same msg_id.
//
// Failures are Status values: Unavailable for timeouts, a lost or closed connection, and "no
// responders" (no stream captures the subject, or the server runs without JetStream); Internal
// for everything else (what the server refused, e.g. a stream whose configuration cannot be
// changed that way), with the client library's or the server's error text. Message data is
// never logged nor put into a Status: it may hold sealed secrets.
//
// Permissions: every JetStream API call is a request on "$JS.API.>", a publish a request on its
// subject, an acknowledgement a publish (or request) on the message's "$JS.ACK.>" reply subject.
// Their replies, and the messages a fetch brings, arrive on inboxes under the connection's
// BusOptions.inbox_prefix, so a user needs publish on those three and subscribe on its own
// "_INBOX.<user>.>" (core/bus_permissions.h).
//
// Lifetimes: the Bus must outlive the JetStream and every PullConsumer and QueuedMessage made
// from it. A PullConsumer and its messages may outlive the JetStream; a QueuedMessage may
// outlive its PullConsumer (it keeps the subscription it was delivered on, which its
// acknowledgements go through). The pull subscription is not one of the Bus's: Bus::Drain does
// not stop it (stop fetching first; what was fetched and not acknowledged comes back after its
// ack wait), and no Bus::Subscribe with Delivery::kReaderThread may cover the connection's
// inboxes ("<inbox_prefix>.*"), or it would take the fetched messages.
#pragma once

#include <nats/nats.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "toolgate/base/status.h"

namespace toolgate::bus {

class Bus;

// A stream: where the server stores what is published to subjects.
struct StreamSpec {
  std::string name;                      // "TG_ASYNC"
  std::vector<std::string> subjects;     // {"tg.async.queue.*"}
  int replicas = 1;                      // >1 when NATS is a cluster
  int64_t max_age_ms = 0;                // 0: unlimited
  int64_t duplicate_window_ms = 120000;  // Nats-Msg-Id dedupe window
};

// A durable pull consumer of a stream: acknowledgements explicit, one by one; starts with the
// oldest message stored.
struct ConsumerSpec {
  std::string stream;
  std::string durable;          // "dispatch"
  int64_t ack_wait_ms = 30000;  // redelivered when not acked within this
  int max_ack_pending = 1000;   // at most this many delivered and not yet acknowledged
};

// One message fetched from a pull consumer. Move-only; owns the natsMsg. Ack/Nak/InProgress/Term
// are each an acknowledgement sent to the server (Ack and Term wait for the server's
// confirmation: AckSync, up to JetStream::kApiTimeoutMs). After Ack, Nak or Term, every further
// acknowledgement does nothing and returns Ok; InProgress may be sent any number of times before.
// A moved-from message answers InvalidArgument.
//
// Thread-compatible: one thread at a time per message (different messages on any threads).
class QueuedMessage {
 public:
  QueuedMessage(QueuedMessage&& other) noexcept;
  QueuedMessage& operator=(QueuedMessage&& other) noexcept;
  QueuedMessage(const QueuedMessage&) = delete;
  QueuedMessage& operator=(const QueuedMessage&) = delete;
  // Without an acknowledgement, the server delivers the message again after the ack wait.
  ~QueuedMessage();

  const std::string& subject() const { return subject_; }  // as published
  const std::string& data() const { return data_; }
  const std::string& traceparent() const { return traceparent_; }  // empty when none was sent
  uint64_t delivered() const { return delivered_; }                // 1 on first delivery
  uint64_t stream_sequence() const { return stream_sequence_; }    // its place in the stream

  Status Ack();                  // done: never redelivered (removed from the stream)
  Status Nak(int64_t delay_ms);  // redeliver after delay_ms (0: at once); not confirmed
  Status InProgress();           // resets the ack wait; not confirmed
  Status Term();                 // never redeliver (a message that cannot be processed); removed

 private:
  friend class PullConsumer;
  QueuedMessage(std::shared_ptr<natsSubscription> sub, natsMsg* msg);
  void Release();

  std::shared_ptr<natsSubscription> sub_;  // the subscription msg_ came on: acks need it alive
  natsMsg* msg_ = nullptr;                 // null once moved from
  std::string subject_;
  std::string data_;
  std::string traceparent_;
  uint64_t delivered_ = 0;
  uint64_t stream_sequence_ = 0;
};

// A subscription bound to a durable pull consumer (JetStream::Consumer).
//
// Thread-safe; Fetch calls on one PullConsumer run one at a time (the client library allows one
// fetch per subscription at once): dispatchers that fetch concurrently use a PullConsumer each,
// bound to the same durable.
class PullConsumer {
 public:
  ~PullConsumer();  // unsubscribes; the durable consumer stays on the server
  PullConsumer(const PullConsumer&) = delete;
  PullConsumer& operator=(const PullConsumer&) = delete;

  // Up to max messages, waiting up to timeout_ms for the first; an empty vector on timeout (not
  // an error). Returns as soon as the server has handed over what it had (up to max), without
  // waiting for max of them. InvalidArgument for max or timeout_ms < 1; Unavailable when the
  // connection was down at the end of the wait.
  Result<std::vector<QueuedMessage>> Fetch(int max, int timeout_ms);

  const std::string& stream() const { return stream_; }
  const std::string& durable() const { return durable_; }

 private:
  friend class JetStream;
  PullConsumer(natsConnection* nc, natsSubscription* sub, std::string stream, std::string durable);

  natsConnection* nc_;  // the Bus's
  std::shared_ptr<natsSubscription> sub_;
  std::string stream_;
  std::string durable_;
  std::mutex fetch_mu_;  // one Fetch at a time
};

// The JetStream context of a Bus's connection.
//
// Thread-safe: every method may be called from any thread. Each method waits for the server's
// answer, up to kApiTimeoutMs (Publish: its timeout_ms), so none belongs on a thread that reads
// a connection (Delivery::kReaderThread).
class JetStream {
 public:
  // How long an API call (EnsureStream, Consumer) or a confirmed acknowledgement waits.
  static constexpr int kApiTimeoutMs = 5000;

  // The JetStream context of bus's connection; bus must outlive it. Thread-safe.
  static Result<std::unique_ptr<JetStream>> Open(Bus& bus);
  ~JetStream();
  JetStream(const JetStream&) = delete;
  JetStream& operator=(const JetStream&) = delete;

  // Creates the stream (file storage, work-queue retention, discarding the oldest message at a
  // limit) or, when one of that name exists with another configuration, updates its subjects,
  // max age, duplicate window and replicas (Internal when the server refuses the change, e.g.
  // replicas > 1 on a single server). Idempotent: replicas may all call it at start-up.
  Status EnsureStream(const StreamSpec& spec);
  // Publishes and waits up to timeout_ms for the server's ack (the message is stored). msg_id
  // (may be empty) goes as Nats-Msg-Id: a repeat within the duplicate window is stored once (Ok,
  // not an error). traceparent (may be empty) goes as a header like Bus::Publish does.
  Status Publish(std::string_view subject, std::string_view data, std::string_view msg_id,
                 std::string_view traceparent, int timeout_ms = 5000);
  // Binds to (creating when missing) a durable pull consumer. An existing one with another ack
  // wait or max ack pending is updated to spec's (the server allows both changes).
  Result<std::unique_ptr<PullConsumer>> Consumer(const ConsumerSpec& spec);

 private:
  JetStream(natsConnection* nc, jsCtx* js) : nc_(nc), js_(js) {}

  natsConnection* nc_;  // the Bus's
  jsCtx* js_;
};

}  // namespace toolgate::bus
