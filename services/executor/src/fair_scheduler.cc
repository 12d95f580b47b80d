#include "toolgate/executor/fair_scheduler.h"

#include <algorithm>
#include <chrono>

#include "toolgate/base/time.h"

namespace toolgate::executor {

size_t DefaultSlots(unsigned cores, uint64_t memory_bytes) {
  constexpr uint64_t kMemoryPerSlot = uint64_t{256} << 20;
  size_t by_cores = 2 * static_cast<size_t>(std::max(1u, cores));
  size_t by_memory = static_cast<size_t>(memory_bytes / kMemoryPerSlot);
  return std::max<size_t>(2, std::min(by_cores, by_memory));
}

FairScheduler::FairScheduler(FairSchedulerOptions options, Clock clock)
    : options_([&] {
        options.slots = std::max<size_t>(1, options.slots);
        options.max_per_org = std::clamp<size_t>(options.max_per_org, 1, options.slots);
        return options;
      }()),
      clock_(clock ? std::move(clock) : Clock([] { return MonotonicUs() / 1000; })) {
  for (size_t i = 0; i < options_.slots; ++i) slots_.emplace_back([this] { SlotLoop(); });
  expiry_ = std::thread([this] { ExpiryLoop(); });
}

FairScheduler::~FairScheduler() {
  Drain();
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  work_cv_.notify_all();
  expiry_cv_.notify_all();
  for (std::thread& t : slots_) t.join();
  expiry_.join();
}

void FairScheduler::Submit(const std::string& org, Callback run, Callback expire) {
  bool wake = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    Org& o = orgs_[org];
    if (o.queue.empty()) turn_.push_back(org);
    o.queue.push_back({std::move(run), std::move(expire), clock_() + options_.queue_timeout_ms});
    ++queued_;
    // A slot is woken only for a job that may start now: one within its organization's cap
    // counting the jobs queued ahead of it, while a slot waits. Any other job is taken by a slot
    // that finishes one (SlotLoop loops before it waits), so waking a slot for it would wake it
    // for nothing: under load that was one wake-up per arrival.
    wake = idle_slots_ > 0 && o.running + o.queue.size() <= options_.max_per_org;
  }
  // One slot is enough: the job is one. The expiry thread is not woken: it looks at least
  // once per queue timeout (ExpiryLoop), and a job queued now expires one timeout from now.
  if (wake) work_cv_.notify_one();
}

void FairScheduler::Drain() {
  std::unique_lock<std::mutex> lock(mu_);
  idle_cv_.wait(lock, [this] { return queued_ == 0 && running_ == 0; });
}

FairScheduler::Stats FairScheduler::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return Stats{queued_, running_, ran_, expired_, idle_slots_, empty_wakeups_};
}

bool FairScheduler::TakeNext(std::string* org, Job* job) {
  for (auto it = turn_.begin(); it != turn_.end(); ++it) {
    Org& o = orgs_[*it];
    if (o.running >= options_.max_per_org) continue;
    *org = *it;
    *job = std::move(o.queue.front());
    o.queue.pop_front();
    ++o.running;
    --queued_;
    ++running_;
    // Its turn is used: to the back of the line, or out of it with nothing left queued.
    std::string name = std::move(*it);
    turn_.erase(it);
    if (!o.queue.empty()) turn_.push_back(std::move(name));
    return true;
  }
  return false;
}

void FairScheduler::Forget(const std::string& org) {
  auto it = orgs_.find(org);
  if (it != orgs_.end() && it->second.queue.empty() && it->second.running == 0) orgs_.erase(it);
}

void FairScheduler::SlotLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    std::string org;
    Job job;
    if (!stopping_ && !TakeNext(&org, &job)) {
      ++idle_slots_;
      for (;;) {
        work_cv_.wait(lock);
        if (stopping_ || TakeNext(&org, &job)) break;
        ++empty_wakeups_;
      }
      --idle_slots_;
    }
    if (org.empty()) return;  // stopping, with nothing taken
    lock.unlock();
    job.run();
    job = Job{};  // what the callbacks hold goes before the slot is given back
    lock.lock();
    --orgs_[org].running;
    --running_;
    ++ran_;
    Forget(org);
    // No other slot is woken. An idle slot means no job could run (it would have taken it), and
    // this job's end makes at most one more runnable, its organization's next: this slot takes
    // it, or another one, as it loops. Waking the idle slots here woke every one of them on
    // every call, for nothing.
    if (queued_ == 0 && running_ == 0) idle_cv_.notify_all();
  }
}

int64_t FairScheduler::EarliestExpiry() const {
  int64_t earliest = -1;
  for (const std::string& org : turn_) {
    const Org& o = orgs_.at(org);
    if (o.queue.empty()) continue;
    // Same timeout for every job, so each queue's first expires first.
    int64_t at = o.queue.front().expires_at_ms;
    if (earliest < 0 || at < earliest) earliest = at;
  }
  return earliest;
}

void FairScheduler::TakeExpired(int64_t now_ms, std::vector<Job>* out) {
  for (auto it = turn_.begin(); it != turn_.end();) {
    Org& o = orgs_[*it];
    while (!o.queue.empty() && o.queue.front().expires_at_ms <= now_ms) {
      out->push_back(std::move(o.queue.front()));
      o.queue.pop_front();
      --queued_;
    }
    if (o.queue.empty()) {
      std::string org = *it;
      it = turn_.erase(it);
      Forget(org);
    } else {
      ++it;
    }
  }
}

void FairScheduler::ExpiryLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    int64_t earliest = EarliestExpiry();
    int64_t now = clock_();
    if (earliest < 0 || earliest > now) {
      // The clock may be a test's: wake at least every 50 ms to read it again. With nothing
      // queued, at least once per queue timeout: a job queued meanwhile expires no earlier, so
      // Submit need not wake this thread.
      int64_t wait_ms = earliest < 0 ? std::min<int64_t>(1000, options_.queue_timeout_ms)
                                     : std::min<int64_t>(earliest - now, 50);
      expiry_cv_.wait_for(lock, std::chrono::milliseconds(std::max<int64_t>(1, wait_ms)));
      continue;
    }
    std::vector<Job> expired;
    TakeExpired(now, &expired);
    expired_ += expired.size();
    running_ += expired.size();  // answering them is work Drain waits for
    lock.unlock();
    for (Job& job : expired) job.expire();
    size_t answered = expired.size();
    expired.clear();
    lock.lock();
    running_ -= answered;
    if (queued_ == 0 && running_ == 0) idle_cv_.notify_all();
  }
}

}  // namespace toolgate::executor
