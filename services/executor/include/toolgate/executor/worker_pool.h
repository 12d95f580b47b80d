// WorkerPool: the executor's warm worker processes, grouped by pool key.
//
// A key names everything a worker may be shared across: the runtime, the function version and
// the caller's organization (and, on a GPU executor, the device). A worker serves one call at a
// time and only calls of its own key, so state and secrets never cross organizations. A call
// takes an idle worker of its key (the most recently used, whose caches are warmest) or starts
// a new one; afterwards the worker goes back idle, or is stopped when it has served its last
// call (recycling bounds what a long-lived process accumulates) or when the call left it unfit.
//
// The pool holds at most max_workers processes, busy or idle. When a new worker is needed at
// the cap, the least recently used idle worker of any key is stopped to make room (so a burst
// of one organization's calls cannot keep others' warm workers forever, nor be refused while
// idle ones exist); with none idle the call waits for a worker to come back. Idle workers are
// stopped after max_idle_ms.
//
// Each worker holds a slot, a number in [0, max_workers) no other live worker holds: the
// sandbox turns it into the worker's host uid.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "toolgate/base/status.h"
#include "toolgate/executor/runtime.h"

namespace toolgate::executor {

// What a call through a worker gave. The worker's side of contract section 3: the runtime turns
// it into an ExecutionOutcome.
struct WorkerReply {
  enum class Kind {
    kValue,         // value: the JSON text of the handler's return value
    kError,         // error_type, error_message: an exception, or a result the worker refused
    kTimeout,       // the call ran past its deadline; the worker was killed
    kMemory,        // the worker died, or was killed, for exceeding its memory limit
    kCrashed,       // the worker died by itself during the call
    kNotDelivered,  // the worker was already dead: the call never reached it
  };
  Kind kind = Kind::kCrashed;
  std::string value;
  std::string error_type;
  std::string error_message;
  std::string logs;            // bounded, valid UTF-8
  int64_t runtime_ms = 0;      // from the handler's start to its reply
  int64_t memory_used_mb = 1;  // peak during the call
  bool reusable = false;       // the worker may serve another call
  std::string failure;         // kCrashed: how it died, for the operator's log
};

// One worker process, as the pool sees it. Destroying it stops the process.
class Worker {
 public:
  virtual ~Worker() = default;
  // Runs one call, to a reply or until deadline_us (MonotonicUs). Never throws.
  virtual WorkerReply Call(const Invocation& invocation, int64_t deadline_us) = 0;
};

struct WorkerPoolOptions {
  size_t max_workers = 64;
  int64_t max_calls_per_worker = 1000;
  int64_t max_idle_ms = 60000;
  // How often a thread of the pool stops workers idle past max_idle_ms; 0: no such thread
  // (tests call CloseIdle themselves).
  int64_t reap_interval_ms = 1000;
};

class WorkerPool {
 public:
  // Starts a worker for a key, holding slot. Called without the pool's lock held, so starts
  // run in parallel; a failure is returned from Acquire as is.
  using Factory = std::function<Result<std::unique_ptr<Worker>>(int slot)>;
  // Milliseconds from a monotonic clock.
  using Clock = std::function<int64_t()>;

  // A worker taken for one call. Give it back with Release.
  struct Lease {
    std::string key;
    std::unique_ptr<Worker> worker;
    int slot = -1;
    int64_t calls = 0;   // calls it served before this one
    bool fresh = false;  // started for this call
  };

  struct Stats {
    size_t idle = 0;
    size_t busy = 0;
    uint64_t started = 0;   // workers started
    uint64_t reused = 0;    // calls given an idle worker
    uint64_t evicted = 0;   // idle workers stopped to make room at the cap
    uint64_t recycled = 0;  // workers stopped after their last call
    uint64_t expired = 0;   // idle workers stopped after max_idle_ms
  };

  explicit WorkerPool(WorkerPoolOptions options, Clock clock = {});
  // Stops the reaper and every idle worker. Every lease must have been released.
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // A worker for key: an idle one, or one start() makes (after stopping the least recently
  // used idle worker when the pool is full). When the pool is full of busy workers, waits for
  // one to come back until deadline_ms (on the clock): Unavailable then. Thread-safe.
  Result<Lease> Acquire(const std::string& key, const Factory& start, int64_t deadline_ms);
  // Gives lease's worker back after a call. It goes idle when reusable and it has calls left,
  // else it is stopped. Thread-safe.
  void Release(Lease lease, bool reusable);
  // Stops the workers idle for max_idle_ms or longer; returns how many. Thread-safe.
  size_t CloseIdle();

  Stats stats() const;

 private:
  struct Idle {
    std::string key;
    std::unique_ptr<Worker> worker;
    int slot;
    int64_t calls;
    int64_t idle_since_ms;
  };
  using IdleList = std::list<Idle>;

  // Unlinks an idle worker from the per-key index. Requires mu_.
  void Unindex(IdleList::iterator it);
  void ReapLoop();

  const WorkerPoolOptions options_;
  const Clock clock_;
  mutable std::mutex mu_;
  std::condition_variable returned_cv_;  // a worker came back or was stopped
  IdleList idle_;                        // guarded by mu_; most recently used first
  std::unordered_map<std::string, std::vector<IdleList::iterator>> by_key_;  // guarded by mu_
  std::vector<int> free_slots_;                                              // guarded by mu_
  Stats stats_;                                                              // guarded by mu_
  bool stopping_ = false;                                                    // guarded by mu_
  std::condition_variable stop_cv_;
  std::thread reaper_;
};

}  // namespace toolgate::executor
