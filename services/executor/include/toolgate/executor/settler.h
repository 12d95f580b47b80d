// Settling results with billing.
//
// Every v1::ExecutionResult goes to tg.billing.settle.<execution_id> as a request and is sent
// again until a billing replica acks it with SettleAck{ok}: billing may be restarting, its ledger
// insert is idempotent per execution (a duplicate is harmless), and giving up would lose a charge
// and leave a hold. So there is no giving up while the process runs: an attempt that fails (no
// responders, a refusal) is retried after a backoff of 100 ms doubling to 5 s, and one with no
// answer within the ack timeout is sent again.
//
// Results travel together when they finish close together: a result whose slot goes straight on
// to another queued job may be held (SettleSoon) and leaves with a later result, in one message:
// the next one sent at once, or the first to finish after the oldest held has waited hold_us
// (the retry thread sends those that waited that long when none finishes). One message per result
// cost a NATS routing and a wake-up of billing's reader per call; under load the executor's results
// were most of the bus's traffic.
#pragma once

#include <climits>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "toolgate/base/status.h"
#include "toolgate/bus/bus.h"
#include "toolgate/v1/toolgate.pb.h"

namespace toolgate::executor {

struct SettleTiming {
  int64_t ack_timeout_ms = 5000;   // an attempt unanswered this long is sent again
  int64_t first_backoff_ms = 100;  // the wait after a first failed attempt; it doubles...
  int64_t max_backoff_ms = 5000;   // ...up to this
  // The longest a held result (SettleSoon) waits for others to travel with.
  int64_t hold_us = 1000;
};

// The results held back to travel with the next ones (SettleSoon), in the order they came.
// Bounded: kMaxHeld results, and none older than hold_us. Time (µs) is passed in. Not
// thread-safe.
template <typename T>
class HeldResults {
 public:
  static constexpr size_t kMaxHeld = 64;

  explicit HeldResults(int64_t hold_us) : hold_us_(hold_us) {}

  // Holds item at now_us; true when everything held must be sent now (Take): the holder is
  // full, or its oldest result has waited hold_us.
  bool Hold(T item, int64_t now_us) {
    if (items_.empty()) first_us_ = now_us;
    items_.push_back(std::move(item));
    return items_.size() >= kMaxHeld || Due(now_us);
  }
  // Everything held, oldest first; the holder is empty afterwards.
  std::vector<T> Take() { return std::exchange(items_, {}); }
  // True when something has been held hold_us or longer at now_us.
  bool Due(int64_t now_us) const { return !items_.empty() && now_us - first_us_ >= hold_us_; }
  // When the oldest held result falls due; nullopt when nothing is held.
  std::optional<int64_t> due_us() const {
    if (items_.empty()) return std::nullopt;
    return first_us_ + hold_us_;
  }
  size_t size() const { return items_.size(); }

 private:
  int64_t hold_us_;
  int64_t first_us_ = 0;
  std::vector<T> items_;
};

// The results awaiting an ack and when each is next due. Time is passed in, so tests drive it.
// Not thread-safe.
class PendingSettlements {
 public:
  struct Attempt {
    uint64_t id;
    std::string subject;
    std::string payload;
    std::string traceparent;
    std::string execution_id;
  };

  explicit PendingSettlements(SettleTiming timing) : timing_(timing) {}

  // Records a result whose first attempt is sent at now_ms; returns its id.
  uint64_t Add(Attempt attempt, int64_t now_ms);
  // Billing acked id. False when id is not pending (a second ack).
  bool Ack(uint64_t id);
  // Billing acked a batch (the attempts are decimal ids); returns how many were pending.
  size_t Ack(const v1::SettleAcks& acks);
  // The attempt in flight for id failed: the next is due after the backoff, which then doubles
  // up to its cap. False, and nothing changes, when id is not in flight (acked, or a late answer
  // to an older attempt).
  bool Fail(uint64_t id, int64_t now_ms);
  // The attempts due at now_ms (unanswered past the ack timeout, or backoff over), each
  // recorded as sent at now_ms.
  std::vector<Attempt> TakeDue(int64_t now_ms);
  // When the next attempt falls due; nullopt when nothing is pending.
  std::optional<int64_t> next_due_ms() const;
  // The execution id of a pending result, or "" when id is not pending.
  std::string execution_id(uint64_t id) const;
  // The execution ids of every pending result.
  std::vector<std::string> execution_ids() const;
  size_t size() const { return items_.size(); }

 private:
  struct Item {
    Attempt attempt;
    int64_t due_ms;
    int64_t backoff_ms;
    bool in_flight;
  };
  SettleTiming timing_;
  uint64_t next_id_ = 1;
  std::map<uint64_t, Item> items_;
};

// The last token of the subject on which billing acks a whole batch (v1::SettleAcks); an
// attempt's own reply subject ends in its decimal id instead.
inline constexpr std::string_view kBatchAckToken = "acks";

// Sends results and re-sends them from a thread of its own until acked. It uses a NATS
// connection of its own, so that draining the service's subscriptions at shutdown leaves the
// acks flowing. Thread-safe.
class Settler {
 public:
  // Connects and subscribes to a private reply inbox.
  static Result<std::unique_ptr<Settler>> Start(const bus::BusOptions& options,
                                                SettleTiming timing = {});
  // Stops retrying and closes the connection; what is still pending is abandoned, each logged
  // with its execution id (Drain first).
  ~Settler();
  Settler(const Settler&) = delete;
  Settler& operator=(const Settler&) = delete;

  // Sends result to subject now, with every result held so far, and keeps it until acked.
  // Never blocks on billing.
  void Settle(const std::string& subject, const v1::ExecutionResult& result,
              const std::string& traceparent);
  // Like Settle, for a caller that will finish another result shortly (its slot goes on to a
  // queued job): result is held to travel with a later one, hold_us at most, or goes at once
  // with those held when the oldest waited that long or HeldResults::kMaxHeld are held.
  void SettleSoon(const std::string& subject, const v1::ExecutionResult& result,
                  const std::string& traceparent);
  // Waits until every result is acked or timeout_ms has passed; returns how many remain.
  size_t Drain(int timeout_ms);

 private:
  explicit Settler(std::unique_ptr<bus::Bus> bus, SettleTiming timing);
  // Records result as pending (sent now, as far as the ack timeout is concerned); hold: keep it
  // in held_ when there is room. Returns what must be sent now.
  std::vector<PendingSettlements::Attempt> Add(const std::string& subject,
                                               const v1::ExecutionResult& result,
                                               const std::string& traceparent, bool hold);
  // Publishes attempts as one message (several when they exceed a batch's bounds).
  void Send(std::vector<PendingSettlements::Attempt> attempts);
  void OnReply(bus::Message&& m);
  void Failed(uint64_t id, const std::string& why);
  void Loop();

  std::unique_ptr<bus::Bus> bus_;  // destroyed last
  std::string prefix_;             // "<inbox>."; an attempt's reply subject is prefix_ + id
  SettleTiming timing_;
  std::mutex mu_;
  std::condition_variable wake_cv_;     // an attempt fell due earlier than wake_at_, or stopping
  std::condition_variable drained_cv_;  // nothing is pending any more
  PendingSettlements pending_;          // guarded by mu_
  HeldResults<PendingSettlements::Attempt> held_;  // guarded by mu_
  // Guarded by mu_: a result was held since the retry thread last looked. While results are
  // being held the thread looks every hold_us, so that holding one never needs to wake it.
  bool held_since_look_ = false;
  int64_t wake_at_us_ = INT64_MAX;  // guarded by mu_; when the retry thread next looks
  bool stopping_ = false;           // guarded by mu_
  std::thread retry_thread_;
};

}  // namespace toolgate::executor
