// WorkerPool: the executor's worker processes, grouped by pool key.
//
// A key names everything a worker may be shared across: the runtime, the function version and
// the caller's organization (and, on a GPU executor, the device). A worker serves one call at a
// time and only calls of its own key, so state and secrets never cross organizations. A call
// takes an idle worker of its key (the most recently used, whose caches are warmest), or a spare
// (below), or starts a new one; afterwards the worker goes back idle, or is stopped when it has
// served its last call (recycling bounds what a long-lived process accumulates) or when the call
// left it unfit.
//
// Spares. A worker holds nothing of its key until its first call, which brings the module's code
// (the Invocation): until then it depends only on its shape, what its sandbox and process are
// made of (the language, the memory limit and, on a GPU executor, the device). So the pool keeps
// options.spares_per_shape workers of each shape a runtime named (KeepSpares) started ahead of
// need: a call that finds no idle worker of its key takes a spare of its shape instead of
// starting a process, which is most of a cold start. The spare becomes a worker of that key for
// the rest of its life, exactly like one started for the call: it never goes back to the spares
// nor serves another key. The pool's own thread starts a replacement, never a caller's, once
// the call that took the spare is over (or at its next pass, for a long call): a start that ran
// beside the cold call would compete with it for the CPU. Spares are not stopped for being idle
// (waiting is their job); one found dead is dropped and replaced.
//
// The pool holds at most max_workers processes: busy, idle, spare, or being started. When a new
// worker is needed at the cap, a spare is stopped to make room, else the least recently used
// idle worker of any key (so a burst of one organization's calls cannot keep others' warm
// workers forever, nor be refused while idle ones exist); with none of either the call waits for
// a worker to come back. A spare missing at the cap stops the least recently used idle worker
// too (the one the next cold call would stop, only sooner, so that call finds a spare; a busy
// executor is full of idle workers, and without this would soon have no spares), as long as the
// spares then hold at most a quarter of the slots: keyed workers keep the rest, and a small
// pool does not trade its warm workers for spares. No spare is started while a call waits for
// a slot. Idle workers are stopped after max_idle_ms.
//
// Each worker holds a slot, a number in [0, max_workers) no other live worker holds: the
// sandbox turns it into the worker's host uid. A spare keeps its slot when a key takes it.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
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
    kCancelled,     // the call was cancelled (Invocation::cancel); the worker was killed
  };
  Kind kind = Kind::kCrashed;
  std::string value;
  std::string error_type;
  std::string error_message;
  std::string logs;            // bounded, valid UTF-8
  int64_t runtime_ms = 0;      // from the handler's start to its reply
  int64_t cpu_ms = 0;          // CPU time of the whole sandbox during the call (0: unknown)
  int64_t memory_used_mb = 1;  // peak during the call
  // The tool's code had started (its module, or the handler): a failure before it is the
  // platform's, and is not charged.
  bool started = false;
  bool reusable = false;  // the worker may serve another call
  std::string failure;    // kCrashed: how it died, for the operator's log
  CallEgress egress;      // the call's requests through its sandbox's egress door
};

// One worker process, as the pool sees it. Destroying it stops the process.
class Worker {
 public:
  virtual ~Worker() = default;
  // Runs one call, to a reply or until deadline_us (MonotonicUs). The first call also loads
  // invocation.code, the module every later call of the worker runs. Never throws.
  virtual WorkerReply Call(const Invocation& invocation, int64_t deadline_us) = 0;
  // False once the process has died. The pool asks its spares, under its lock, so it must be
  // cheap; never called during a Call.
  virtual bool Alive() { return true; }
  // Shows bundle's files in the worker's sandbox (at /bundle) before its first call, for a
  // worker started before its version was known (bundle_views.h). Internal when it cannot.
  virtual Status ShowBundle(BundleRef) {
    return Status::Internal("this worker cannot be shown a bundle");
  }
};

struct WorkerPoolOptions {
  size_t max_workers = 64;
  int64_t max_calls_per_worker = 10000;
  int64_t max_idle_ms = 60000;
  // Spares kept started for each shape named by KeepSpares; 0: none (every worker is started
  // for the call that needs it).
  size_t spares_per_shape = 1;
  // How often a thread of the pool stops workers idle past max_idle_ms and starts the spares
  // missing (it also does when a shape is named or a call ends with spares missing). 0: no such
  // thread (tests call CloseIdle and StartSpares themselves).
  int64_t upkeep_interval_ms = 1000;
};

class WorkerPool {
 public:
  // Starts a worker holding slot: for a key (Acquire), or a spare of a shape (KeepSpares).
  // Called without the pool's lock held, so starts run in parallel; Acquire returns a failure
  // as is.
  using Factory = std::function<Result<std::unique_ptr<Worker>>(int slot)>;
  // Milliseconds from a monotonic clock.
  using Clock = std::function<int64_t()>;

  // A worker taken for one call. Give it back with Release.
  struct Lease {
    std::string key;
    std::unique_ptr<Worker> worker;
    int slot = -1;
    int64_t calls = 0;   // calls it served before this one
    bool fresh = false;  // serves its first call: started for it, or a spare until now
  };

  struct Stats {
    size_t idle = 0;
    size_t busy = 0;
    uint64_t started = 0;         // workers started
    uint64_t reused = 0;          // calls given an idle worker
    uint64_t evicted = 0;         // idle workers stopped to make room at the cap
    uint64_t recycled = 0;        // workers stopped after their last call
    uint64_t expired = 0;         // idle workers stopped after max_idle_ms
    size_t spare = 0;             // spares ready now
    uint64_t spares_started = 0;  // spares started
    uint64_t spares_taken = 0;    // calls given a spare
    uint64_t spares_evicted = 0;  // spares stopped to make room at the cap
    uint64_t spares_lost = 0;     // spares found dead and dropped
  };

  explicit WorkerPool(WorkerPoolOptions options, Clock clock = {});
  // Stops the pool's thread, every idle worker and every spare. Every lease must have been
  // released.
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Keeps spares of shape, started by start (which may be called on the pool's thread at any
  // time until the pool is destroyed, so it must own what it uses). A shape named again keeps
  // its first factory. Thread-safe.
  void KeepSpares(const std::string& shape, Factory start);

  // A worker for key: an idle one; else a spare of shape (a shape no KeepSpares named, such as
  // "", has none); else one start() makes, after stopping a spare or the least recently used
  // idle worker when the pool is full. When the pool is full of busy workers, waits for one to
  // come back until deadline_ms (on the clock): Unavailable then. Thread-safe.
  Result<Lease> Acquire(const std::string& key, std::string_view shape, const Factory& start,
                        int64_t deadline_ms);
  // Gives lease's worker back after a call. It goes idle when reusable and it has calls left,
  // else it is stopped. Thread-safe.
  void Release(Lease lease, bool reusable);
  // Stops the workers idle for max_idle_ms or longer; returns how many. Thread-safe.
  size_t CloseIdle();
  // Drops the spares that died, then starts the spares missing, one at a time on the calling
  // thread, into free slots or (within a quarter of the slots) those of the least recently used
  // idle workers, while no call waits for a slot; returns how many it started. A shape whose
  // start failed is not tried again for a second (the failure is logged once, until a start
  // succeeds). Thread-safe. Sandboxed processes die with the thread that started them: call it
  // only from a thread that outlives the spares (the pool's own, or a test's).
  size_t StartSpares();

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
  struct Spare {
    std::unique_ptr<Worker> worker;
    int slot;
  };
  struct Shape {
    Factory start;  // set once, so read without mu_
    std::vector<Spare> ready;
    size_t starting = 0;      // starts under way
    int64_t retry_at_ms = 0;  // after a failed start: no other start before this
    bool failing = false;     // the last start failed (and was logged)
  };
  // A std::map: a Shape never moves, so StartSpares may call its start without mu_.
  using ShapeMap = std::map<std::string, Shape, std::less<>>;
  // Workers to stop once mu_ is released.
  using Doomed = std::vector<std::unique_ptr<Worker>>;

  // The helpers down to ShapeLackingSpare require mu_.
  // Unlinks an idle worker from the per-key index.
  void Unindex(IdleList::iterator it);
  // Fills lease with the most recently used idle worker of its key; false when none.
  bool TakeIdle(Lease& lease);
  // Fills lease with a live spare of shape (dropping dead ones into doomed); false when none.
  bool TakeSpare(std::string_view shape, Lease& lease, Doomed& doomed);
  // A slot for a new worker: a free one, else (when stop_spares) a spare's, else the least
  // recently used idle worker's (the worker goes to doomed); -1 when none.
  int TakeSlot(Doomed& doomed, bool stop_spares);
  // Moves every dead spare to doomed, freeing its slot.
  void DropDeadSpares(Doomed& doomed);
  // A shape to start a spare of now, or shapes_.end(): none lacks one, no slot is free nor may
  // be taken from an idle worker, a call waits for a slot, or the pool is stopping.
  ShapeMap::iterator ShapeLackingSpare(int64_t now_ms);
  // The pool's thread: CloseIdle and StartSpares every upkeep_interval_ms, and as soon as a
  // spare may be started.
  void UpkeepLoop();

  const WorkerPoolOptions options_;
  const Clock clock_;
  mutable std::mutex mu_;
  std::condition_variable returned_cv_;  // a worker came back, was stopped, or a spare started
  IdleList idle_;                        // guarded by mu_; most recently used first
  std::unordered_map<std::string, std::vector<IdleList::iterator>> by_key_;  // guarded by mu_
  ShapeMap shapes_;                                                          // guarded by mu_
  std::vector<int> free_slots_;                                              // guarded by mu_
  size_t waiting_ = 0;                 // guarded by mu_; Acquire calls waiting for a slot
  Stats stats_;                        // guarded by mu_
  bool stopping_ = false;              // guarded by mu_
  std::condition_variable upkeep_cv_;  // stopping, or spares may be missing
  std::thread upkeep_;
};

}  // namespace toolgate::executor
