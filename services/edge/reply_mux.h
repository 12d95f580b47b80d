// ReplyMux: many outstanding bus requests on one wildcard inbox subscription.
//
// The edge never blocks a thread on a reply. Expect() registers a callback and returns a unique
// reply subject under this edge's inbox; the caller publishes its request with that reply
// subject (often to a stage that forwards it down the chain; whoever answers, the answer lands
// here). The callback runs exactly once: with the first message on the subject (a "no
// responders" notice included), or with Timeout when none arrived in time, or with the status
// passed to Cancel(). Callbacks run on the thread that reads the bus connection or on the timer
// thread: they must not block, nor make a blocking bus Request(). Thread-safe.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>

#include "toolgate/base/status.h"
#include "toolgate/bus/bus.h"

namespace toolgate::edge {

class ReplyMux {
 public:
  using Callback = std::function<void(Result<bus::Message>)>;
  // Looks at a message before the callback does: a positive return value means "interim, keep
  // waiting this many more milliseconds" and the callback is not run; 0 means it is the answer.
  using Interim = std::function<int(const bus::Message&)>;

  explicit ReplyMux(bus::Bus& bus);
  // Fails every pending callback with Unavailable and joins the timer thread.
  ~ReplyMux();
  ReplyMux(const ReplyMux&) = delete;
  ReplyMux& operator=(const ReplyMux&) = delete;

  // Subscribes to the inbox. Call once before Expect().
  Status Start();
  // Returns the reply subject to publish with. interim may be empty.
  std::string Expect(int timeout_ms, Callback callback, Interim interim = {});
  // Completes the callback for reply_subject with status (e.g. when the publish failed).
  void Cancel(const std::string& reply_subject, const Status& status);
  // Whether reply_subject is one of this mux's.
  bool Owns(const std::string& reply_subject) const;
  // Completes the callback for reply_subject with data as if it had arrived on the bus (an
  // answer another replica relayed); nothing when it is not pending here.
  void Deliver(const std::string& reply_subject, std::string data);
  // Publishes data to subject and routes the answer to callback.
  void Request(const std::string& subject, const std::string& data, const std::string& traceparent,
               int timeout_ms, Callback callback);

 private:
  struct Pending {
    Callback callback;
    Interim interim;
    int64_t deadline_us;
  };
  void OnReply(bus::Message&& m);
  void TimerLoop();
  // Removes and returns the pending entry for id; empty callback when absent.
  Callback Take(uint64_t id);
  // Moves id's deadline to now + timeout_ms; false when id is no longer pending.
  bool Extend(uint64_t id, int timeout_ms);

  bus::Bus& bus_;
  std::string prefix_;  // "<inbox>." ; reply subjects are prefix_ + decimal id
  std::mutex mu_;
  std::condition_variable cv_;                     // earliest deadline changed or stopping
  uint64_t next_id_ = 1;                           // guarded by mu_
  std::unordered_map<uint64_t, Pending> pending_;  // guarded by mu_
  std::multimap<int64_t, uint64_t> deadlines_;     // guarded by mu_
  bool stopping_ = false;                          // guarded by mu_
  std::thread timer_;
};

}  // namespace toolgate::edge
