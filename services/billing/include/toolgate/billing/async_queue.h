// AsyncQueue: asynchronous executions (Prefer: respond-async) between their hold and their
// executor, in NATS JetStream (docs/architecture.md, "Asynchronous executions").
//
//   InvokeStage ─hold (queued)─► Enqueue: JetStream TG_ASYNC, "tg.async.queue.<org>" ─► 202
//   dispatcher thread: Fetch ─► BalanceStore::Start (the organization's concurrency limit)
//     ─► ExecutionStates::MarkRunning ─► tg.exec.<pool>.<runtime> ─► ack
//   the executor's result settles as any other (Settler), writing the final state.
//
// Durability: a job is acknowledged to the caller only once JetStream stored it (file storage,
// replicated when NATS is a cluster); it leaves the stream only once it has been handed to an
// executor, or found cancelled or expired. Every billing replica's dispatcher reads one durable
// consumer, so each job is delivered to one of them at a time; one that dies before its ack
// leaves the job to be delivered again.
// At most once: Start moves the hold out of the queue in one Redis step, and MarkRunning moves
// the state from queued to running in one PostgreSQL step; a second delivery finds either done
// and never sends the job again. A job sent to no executor (the pool had no subscriber: the
// server's no-responders notice, Unserved) is put back, as its dispatch never reached one. A
// job whose dispatcher died between the two steps and the send ends failed, uncharged, when its
// deadline passes (the sweep), like a job whose executor died.
// The sweep (every reaper interval) also deletes finished states older than the retention.
//
// Thread-safe. Start() before the first Enqueue; Stop() before the stores go.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "toolgate/base/bounded_ttl_cache.h"
#include "toolgate/billing/balance_store.h"
#include "toolgate/billing/config.h"
#include "toolgate/billing/execution_states.h"
#include "toolgate/bus/bus.h"
#include "toolgate/bus/jet_stream.h"
#include "toolgate/net/periodic_task.h"
#include "toolgate/v1/toolgate.pb.h"

namespace toolgate::billing {

class AsyncQueue {
 public:
  // Every reference must outlive the queue. now_ms: the wall clock (Unix ms).
  AsyncQueue(bus::Bus& bus, BalanceStore& balances, ExecutionStates& states, const Config& config,
             std::function<int64_t()> now_ms = {});
  ~AsyncQueue();
  AsyncQueue(const AsyncQueue&) = delete;
  AsyncQueue& operator=(const AsyncQueue&) = delete;

  // Makes sure of the stream and the consumer, then starts the dispatcher and the sweep.
  // Unavailable when JetStream cannot be reached: asynchronous calls are then refused (503)
  // while synchronous ones go on; Start may be called again.
  Status Start();
  // Stops the dispatcher (a job in its hands and unacked is delivered again later).
  void Stop();
  bool started() const { return started_.load(); }

  // Stores an accepted job (its hold placed queued, its state queued) in the stream, waiting
  // for JetStream's ack. Blocks: call from a worker thread. On failure nothing is queued: the
  // caller releases the hold and forgets the state.
  Status Enqueue(const v1::InvokeJob& job);

  // The server's no-responders notice for the job of an asynchronous execution this replica
  // sent: it goes back to its queue (Unstart, MarkQueued, stored again).
  void Unserved(const std::string& execution_id, const std::string& org_id);

  // When a job's hold is presumed abandoned, and when its state is presumed lost, once it has
  // been handed to an executor at now_ms (its timeout and the hold grace).
  int64_t RunningDeadlineMs(const v1::InvokeJob& job, int64_t now_ms) const;

 private:
  void DispatchLoop();
  void Dispatch(bus::QueuedMessage& message);
  // Ends executions past their deadline (failed, lost) and drops finished states past the
  // retention.
  void Sweep();

  bus::Bus& bus_;
  BalanceStore& balances_;
  ExecutionStates& states_;
  const Config& config_;
  std::function<int64_t()> now_ms_;
  std::unique_ptr<bus::JetStream> js_;
  std::unique_ptr<bus::PullConsumer> consumer_;
  // Jobs sent to executors in the last seconds, by execution id, with how often each was put
  // back: what Unserved stores again (the stream no longer has them).
  struct Sent {
    std::string job;  // a serialized v1::InvokeJob
    int requeues = 0;
  };
  BoundedTtlCache<std::string, std::shared_ptr<const Sent>> sent_{4096};
  std::atomic<bool> started_{false};
  std::atomic<bool> stopping_{false};
  int64_t last_retention_ms_ = 0;  // the sweep's thread only
  std::thread dispatcher_;
  std::unique_ptr<net::PeriodicTask> sweep_;
};

// The answer an execution gets whose deadline passed with no result (the sweep).
v1::InvokeReply LostExecutionReply();

}  // namespace toolgate::billing
