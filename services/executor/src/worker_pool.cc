#include "toolgate/executor/worker_pool.h"

#include <algorithm>
#include <chrono>

#include "toolgate/base/log.h"
#include "toolgate/base/time.h"

namespace toolgate::executor {
namespace {

// After a spare failed to start, how long its shape waits before another try: a sandbox that
// cannot be set up fails the same way each time.
constexpr int64_t kSpareRetryMs = 1000;

}  // namespace

WorkerPool::WorkerPool(WorkerPoolOptions options, Clock clock)
    : options_(options),
      clock_(clock ? std::move(clock) : Clock([] { return MonotonicUs() / 1000; })) {
  // Slots are handed out lowest first, so uids stay in a small, predictable range.
  for (size_t i = options_.max_workers; i > 0; --i) free_slots_.push_back(static_cast<int>(i - 1));
  if (options_.upkeep_interval_ms > 0) upkeep_ = std::thread([this] { UpkeepLoop(); });
}

WorkerPool::~WorkerPool() {
  IdleList idle;
  Doomed spares;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    idle.splice(idle.end(), idle_);
    by_key_.clear();
    for (auto& [name, shape] : shapes_) {
      for (Spare& spare : shape.ready) spares.push_back(std::move(spare.worker));
      shape.ready.clear();
    }
  }
  upkeep_cv_.notify_all();
  if (upkeep_.joinable()) upkeep_.join();
  // The workers stop here, outside the lock.
}

void WorkerPool::KeepSpares(const std::string& shape, Factory start) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto [it, added] = shapes_.try_emplace(shape);
    if (added) it->second.start = std::move(start);
  }
  upkeep_cv_.notify_one();
}

void WorkerPool::Unindex(IdleList::iterator it) {
  auto k = by_key_.find(it->key);
  auto& list = k->second;
  list.erase(std::find(list.begin(), list.end(), it));
  if (list.empty()) by_key_.erase(k);
}

bool WorkerPool::TakeIdle(Lease& lease) {
  auto k = by_key_.find(lease.key);
  if (k == by_key_.end()) return false;
  IdleList::iterator it = k->second.back();  // the most recently used
  Unindex(it);
  lease.worker = std::move(it->worker);
  lease.slot = it->slot;
  lease.calls = it->calls;
  idle_.erase(it);
  --stats_.idle;
  ++stats_.reused;
  return true;
}

bool WorkerPool::TakeSpare(std::string_view shape, Lease& lease, Doomed& doomed) {
  auto s = shapes_.find(shape);
  if (s == shapes_.end()) return false;
  std::vector<Spare>& ready = s->second.ready;
  while (!ready.empty()) {
    Spare spare = std::move(ready.back());
    ready.pop_back();
    --stats_.spare;
    if (!spare.worker->Alive()) {
      free_slots_.push_back(spare.slot);
      doomed.push_back(std::move(spare.worker));
      ++stats_.spares_lost;
      continue;
    }
    lease.worker = std::move(spare.worker);
    lease.slot = spare.slot;
    lease.fresh = true;
    ++stats_.spares_taken;
    return true;
  }
  return false;
}

int WorkerPool::TakeSlot(Doomed& doomed, bool stop_spares) {
  if (!free_slots_.empty()) {
    int slot = free_slots_.back();
    free_slots_.pop_back();
    return slot;
  }
  // A spare is only a guess at what a call will need; an idle worker served one already.
  for (auto& [name, shape] : shapes_) {
    if (!stop_spares || shape.ready.empty()) continue;
    Spare& spare = shape.ready.back();
    int slot = spare.slot;
    doomed.push_back(std::move(spare.worker));
    shape.ready.pop_back();
    --stats_.spare;
    ++stats_.spares_evicted;
    return slot;
  }
  if (!idle_.empty()) {
    IdleList::iterator it = std::prev(idle_.end());  // the least recently used
    Unindex(it);
    int slot = it->slot;
    doomed.push_back(std::move(it->worker));
    idle_.erase(it);
    --stats_.idle;
    ++stats_.evicted;
    return slot;
  }
  return -1;
}

Result<WorkerPool::Lease> WorkerPool::Acquire(const std::string& key, std::string_view shape,
                                              const Factory& start, int64_t deadline_ms) {
  Lease lease;
  lease.key = key;
  Doomed doomed;  // stopped outside the lock
  bool spare_taken = false;
  {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      if (TakeIdle(lease)) {
        ++stats_.busy;
        return lease;
      }
      spare_taken = TakeSpare(shape, lease, doomed);
      if (spare_taken) break;
      lease.slot = TakeSlot(doomed, /*stop_spares=*/true);
      if (lease.slot >= 0) break;
      int64_t left_ms = deadline_ms - clock_();
      ++waiting_;
      bool timed_out =
          left_ms <= 0 || returned_cv_.wait_for(lock, std::chrono::milliseconds(left_ms)) ==
                              std::cv_status::timeout;
      --waiting_;
      if (timed_out && clock_() >= deadline_ms) {
        return Status::Unavailable("every worker of this executor is busy");
      }
    }
    ++stats_.busy;
    if (!spare_taken) ++stats_.started;
  }
  doomed.clear();
  if (spare_taken) return lease;
  auto worker = start(lease.slot);
  if (!worker.ok()) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      free_slots_.push_back(lease.slot);
      --stats_.busy;
      --stats_.started;
    }
    returned_cv_.notify_one();
    return worker.status();
  }
  lease.worker = std::move(*worker);
  lease.fresh = true;
  return lease;
}

void WorkerPool::Release(Lease lease, bool reusable) {
  ++lease.calls;
  bool keep = reusable && lease.calls < options_.max_calls_per_worker;
  bool spare_missing = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    --stats_.busy;
    if (keep && !stopping_) {
      idle_.push_front(Idle{lease.key, std::move(lease.worker), lease.slot, lease.calls, clock_()});
      by_key_[lease.key].push_back(idle_.begin());
      ++stats_.idle;
    } else {
      if (reusable) ++stats_.recycled;
      free_slots_.push_back(lease.slot);
    }
    spare_missing = ShapeLackingSpare(clock_()) != shapes_.end();
  }
  returned_cv_.notify_one();
  // A spare taken by a cold call is replaced once that call is over (or at the next upkeep pass,
  // for a long call), so the start does not compete with the call for the CPU. The same goes
  // for a slot this release freed.
  if (spare_missing) upkeep_cv_.notify_one();
  // A worker not kept stops here, as lease goes out of scope, outside the lock.
}

size_t WorkerPool::CloseIdle() {
  IdleList doomed;
  {
    std::lock_guard<std::mutex> lock(mu_);
    int64_t now = clock_();
    while (!idle_.empty() && now - idle_.back().idle_since_ms >= options_.max_idle_ms) {
      IdleList::iterator it = std::prev(idle_.end());
      Unindex(it);
      free_slots_.push_back(it->slot);
      doomed.splice(doomed.begin(), idle_, it);
      --stats_.idle;
      ++stats_.expired;
    }
  }
  if (!doomed.empty()) returned_cv_.notify_all();
  return doomed.size();
}

void WorkerPool::DropDeadSpares(Doomed& doomed) {
  for (auto& [name, shape] : shapes_) {
    auto dead = std::partition(shape.ready.begin(), shape.ready.end(),
                               [](const Spare& spare) { return spare.worker->Alive(); });
    for (auto it = dead; it != shape.ready.end(); ++it) {
      free_slots_.push_back(it->slot);
      doomed.push_back(std::move(it->worker));
      --stats_.spare;
      ++stats_.spares_lost;
    }
    shape.ready.erase(dead, shape.ready.end());
  }
}

WorkerPool::ShapeMap::iterator WorkerPool::ShapeLackingSpare(int64_t now_ms) {
  if (stopping_ || waiting_ > 0) return shapes_.end();
  if (free_slots_.empty()) {
    size_t spares = 1;  // with the one to start
    for (const auto& [name, shape] : shapes_) spares += shape.ready.size() + shape.starting;
    if (idle_.empty() || spares * 4 > options_.max_workers) return shapes_.end();
  }
  return std::find_if(shapes_.begin(), shapes_.end(), [&](const auto& entry) {
    const Shape& shape = entry.second;
    return shape.ready.size() + shape.starting < options_.spares_per_shape &&
           shape.retry_at_ms <= now_ms;
  });
}

size_t WorkerPool::StartSpares() {
  size_t started = 0;
  for (;;) {
    Doomed doomed;  // stopped outside the lock
    ShapeMap::iterator it;
    int slot = -1;
    {
      std::lock_guard<std::mutex> lock(mu_);
      DropDeadSpares(doomed);
      it = ShapeLackingSpare(clock_());
      if (it == shapes_.end()) {
        if (!doomed.empty()) returned_cv_.notify_all();  // their slots are free
        return started;
      }
      slot = TakeSlot(doomed, /*stop_spares=*/false);
      ++it->second.starting;
    }
    doomed.clear();
    const std::string& name = it->first;
    Shape* shape = &it->second;
    auto worker = shape->start(slot);
    bool log_failure = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      --shape->starting;
      if (worker.ok() && !stopping_) {
        shape->ready.push_back(Spare{std::move(*worker), slot});
        shape->failing = false;
        ++stats_.spare;
        ++stats_.spares_started;
        ++started;
      } else {
        free_slots_.push_back(slot);
        if (!worker.ok()) {
          shape->retry_at_ms = clock_() + kSpareRetryMs;
          log_failure = !shape->failing;
          shape->failing = true;
        }
      }
    }
    returned_cv_.notify_all();  // a waiting call can take the spare or its slot
    if (log_failure) {
      log::Warn("cannot start a spare worker")
          .Str("shape", name)
          .Str("error", worker.status().ToString());
    }
    // A spare started while the pool stopped is stopped here, outside the lock.
  }
}

WorkerPool::Stats WorkerPool::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

void WorkerPool::UpkeepLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    upkeep_cv_.wait_for(lock, std::chrono::milliseconds(options_.upkeep_interval_ms), [this] {
      return stopping_ || ShapeLackingSpare(clock_()) != shapes_.end();
    });
    if (stopping_) break;
    lock.unlock();
    CloseIdle();
    StartSpares();
    lock.lock();
  }
}

}  // namespace toolgate::executor
