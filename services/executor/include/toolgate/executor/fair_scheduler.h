// FairScheduler: the executor's execution slots, shared fairly between organizations.
//
// Jobs wait in one FIFO queue per organization. A free slot takes the first job of the next
// organization in round-robin order that runs fewer than max_per_org jobs, so an organization
// that floods the executor waits behind its own jobs, never in front of another's: with N
// organizations waiting, each gets every Nth free slot, and none ever holds more than its cap
// while others wait or not. A job that has waited queue_timeout_ms without a slot is expired
// (its expire callback answers it: 503 no_capacity, nothing charged) instead of run late.
//
// Slots are threads of the scheduler's own; the job's run callback runs on one, and may block
// (it waits for a worker process). Waiting time is the scheduler's, not the job's: a job's own
// deadline starts when its run callback does.
//
// Thread-safe. Callbacks run without the scheduler's lock, on its threads.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <list>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace toolgate::executor {

struct FairSchedulerOptions {
  size_t slots = 4;        // jobs running at once
  size_t max_per_org = 2;  // jobs of one organization running at once (1..slots)
  int64_t queue_timeout_ms = 10000;
};

// Slots for this machine: two per core (handlers wait on I/O too), at most one per 256 MiB of
// memory (a slot runs a sandbox of up to its memory limit; most keep the default), at least 2.
size_t DefaultSlots(unsigned cores, uint64_t memory_bytes);

class FairScheduler {
 public:
  using Callback = std::function<void()>;
  // Milliseconds from a monotonic clock.
  using Clock = std::function<int64_t()>;

  // Starts options.slots threads and one that expires jobs waiting too long.
  explicit FairScheduler(FairSchedulerOptions options, Clock clock = {});
  // Drain()s, then stops the threads.
  ~FairScheduler();
  FairScheduler(const FairScheduler&) = delete;
  FairScheduler& operator=(const FairScheduler&) = delete;

  // Queues a job of org: run() when it gets a slot, or expire() when it waited
  // queue_timeout_ms without one (exactly one of the two is called, once).
  void Submit(const std::string& org, Callback run, Callback expire);
  // Waits until no job is queued or running. Jobs submitted meanwhile are waited for too.
  void Drain();

  struct Stats {
    size_t queued = 0;
    size_t running = 0;
    uint64_t ran = 0;
    uint64_t expired = 0;
    size_t idle = 0;             // slots waiting for a job
    uint64_t empty_wakeups = 0;  // times a waiting slot woke and found no job it could take
  };
  Stats stats() const;
  const FairSchedulerOptions& options() const { return options_; }

 private:
  struct Job {
    Callback run;
    Callback expire;
    int64_t expires_at_ms;
  };
  struct Org {
    std::deque<Job> queue;
    size_t running = 0;
  };

  void SlotLoop();
  void ExpiryLoop();
  // The next job to run, in round-robin order among organizations under their cap; false when
  // none may run now. Requires mu_.
  bool TakeNext(std::string* org, Job* job);
  // Moves every job past its expiry into out. Requires mu_.
  void TakeExpired(int64_t now_ms, std::vector<Job>* out);
  // The earliest expiry among queued jobs, or -1. Requires mu_.
  int64_t EarliestExpiry() const;
  // Drops org's entry when it has nothing queued or running. Requires mu_.
  void Forget(const std::string& org);

  const FairSchedulerOptions options_;
  const Clock clock_;
  mutable std::mutex mu_;
  std::condition_variable work_cv_;    // a job was queued, a slot came free, or stopping_
  std::condition_variable expiry_cv_;  // the earliest expiry may have changed, or stopping_
  std::condition_variable idle_cv_;    // nothing is queued or running
  std::map<std::string, Org> orgs_;    // guarded by mu_
  std::list<std::string> turn_;        // guarded by mu_: organizations with jobs queued, in turn
  size_t queued_ = 0;                  // guarded by mu_
  size_t running_ = 0;                 // guarded by mu_
  size_t idle_slots_ = 0;              // guarded by mu_: slots waiting for a job
  uint64_t empty_wakeups_ = 0;         // guarded by mu_
  uint64_t ran_ = 0;                   // guarded by mu_
  uint64_t expired_ = 0;               // guarded by mu_
  bool stopping_ = false;              // guarded by mu_
  std::vector<std::thread> slots_;
  std::thread expiry_;
};

}  // namespace toolgate::executor
