// DispatchNotices: tells the edge that a job reached an executor, but only for jobs that take a
// while.
//
// The edge waits --chain-timeout-ms (15 s by default) for an invocation to be answered, so that a
// stage that dies holding a job costs the caller seconds rather than the version's whole timeout.
// A job still queued or running here notice_after_ms after it arrived gets an interim
// InvokeReply{dispatched{timeout_ms}} on its edge reply subject, and the edge then extends its
// wait to the version's timeout plus its settle margin. A job that finishes sooner (nearly all of
// them) costs no message at all. notice_after_ms must stay well below the edges' chain timeout.
//
// Due times follow arrival order (a fixed delay after each arrival), so the pending notices are
// kept in ticket order and the timer thread only ever looks at the first one. The timer is a
// deadline table: it sleeps until the earliest due time it knows of, and an arrival wakes it only
// when it brings an earlier one (the timer waits for nothing). A job that finishes leaves the
// timer asleep; it wakes at the old due time, finds the next one and sleeps again. So under load
// the timer wakes about once per notice_after_ms, not once per call.
//
// Thread-safe.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include "toolgate/v1/toolgate.pb.h"

namespace toolgate::executor {

class DispatchNotices {
 public:
  // Publishes an InvokeReply to an edge reply subject (in production, Bus::Publish).
  using Send = std::function<void(const std::string& edge_reply, const std::string& reply_bytes,
                                  const std::string& traceparent)>;

  // Waits until the server has taken everything Send published so far (in production,
  // Bus::Flush): what the executor sends to billing on its other connection then cannot
  // overtake it.
  using Flush = std::function<void()>;

  // Starts the timer thread, which calls send for each notice that falls due. flush may be
  // empty (nothing to wait for).
  DispatchNotices(Send send, int64_t notice_after_ms, Flush flush = {});
  // Stops the timer thread; notices not yet due are not sent.
  ~DispatchNotices();
  DispatchNotices(const DispatchNotices&) = delete;
  DispatchNotices& operator=(const DispatchNotices&) = delete;

  // A job arrived; returns the ticket to pass to Done() once its result is sent.
  uint64_t Arrived(const v1::InvokeJob& job, const std::string& traceparent);
  // The job's result is on its way: no notice is needed any more (a no-op after the notice).
  void Done(uint64_t ticket);

  // Publishes reply (an InvokeReply) to edge_reply now, on the calling thread, through the same
  // send as the dispatch notices: a running handler's notices (JobExecutor).
  void SendNow(const std::string& edge_reply, const std::string& reply_bytes,
               const std::string& traceparent) const {
    send_(edge_reply, reply_bytes, traceparent);
  }
  // Returns once what SendNow published has reached the server (see Flush).
  void FlushSent() const {
    if (flush_) flush_();
  }

  // Notices sent so far (for tests and metrics).
  uint64_t sent() const;
  // Times an arrival woke the timer thread (for tests: the cost a call may add).
  uint64_t wakeups() const;

 private:
  struct Notice {
    int64_t due_us;
    std::string edge_reply;
    std::string traceparent;
    int64_t timeout_ms;
  };
  void Loop();

  const Send send_;
  const Flush flush_;
  const int64_t notice_after_us_;
  mutable std::mutex mu_;
  std::condition_variable cv_;          // a first notice was added, or stopping_
  uint64_t next_ticket_ = 1;            // guarded by mu_
  std::map<uint64_t, Notice> pending_;  // guarded by mu_; ticket order is due order
  uint64_t sent_ = 0;                   // guarded by mu_
  uint64_t wakeups_ = 0;                // guarded by mu_
  // The time the timer thread will look at pending_ next; INT64_MAX while it waits for an
  // arrival. Guarded by mu_.
  int64_t armed_until_us_ = INT64_MAX;
  bool stopping_ = false;  // guarded by mu_
  std::thread thread_;
};

}  // namespace toolgate::executor
