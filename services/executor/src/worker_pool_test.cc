#include "toolgate/executor/worker_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "toolgate/base/time.h"

namespace toolgate::executor {
namespace {

// A worker that records its life in counters the test reads.
struct Census {
  int started = 0;
  int stopped = 0;
};

class FakeWorker : public Worker {
 public:
  FakeWorker(Census& census, int id, int slot) : census_(census), id_(id), slot_(slot) {
    ++census_.started;
  }
  ~FakeWorker() override { ++census_.stopped; }
  WorkerReply Call(const Invocation&, int64_t) override { return {}; }
  bool Alive() override { return alive_; }
  int id() const { return id_; }
  int slot() const { return slot_; }
  void Die() { alive_ = false; }

 private:
  Census& census_;
  int id_;
  int slot_;
  bool alive_ = true;
};

class WorkerPoolTest : public ::testing::Test {
 protected:
  std::unique_ptr<WorkerPool> MakePool(size_t max_workers, int64_t max_calls = 1000,
                                       int64_t max_idle_ms = 60000, size_t spares = 0) {
    WorkerPoolOptions options;
    options.max_workers = max_workers;
    options.max_calls_per_worker = max_calls;
    options.max_idle_ms = max_idle_ms;
    options.spares_per_shape = spares;
    options.upkeep_interval_ms = 0;
    return std::make_unique<WorkerPool>(options, [this] { return now_ms_.load(); });
  }
  // Makes fake workers and remembers them by id (valid while census_ says they live).
  WorkerPool::Factory Factory() {
    return [this](int slot) -> Result<std::unique_ptr<Worker>> {
      auto worker = std::make_unique<FakeWorker>(census_, ++next_id_, slot);
      made_.push_back(worker.get());
      return std::unique_ptr<Worker>(std::move(worker));
    };
  }
  FakeWorker& Made(int id) { return *made_.at(static_cast<size_t>(id - 1)); }
  static int Id(const WorkerPool::Lease& lease) {
    return static_cast<FakeWorker&>(*lease.worker).id();
  }
  // Takes a worker for key and gives it straight back; returns its id.
  int CallOnce(WorkerPool& pool, const std::string& key, bool reusable = true,
               std::string_view shape = "") {
    auto lease = pool.Acquire(key, shape, Factory(), now_ms_ + 1000);
    EXPECT_TRUE(lease.ok());
    int id = Id(*lease);
    pool.Release(std::move(*lease), reusable);
    return id;
  }

  Census census_;
  int next_id_ = 0;
  std::vector<FakeWorker*> made_;
  std::atomic<int64_t> now_ms_{1000};
};

TEST_F(WorkerPoolTest, ReusesAnIdleWorkerOfTheSameKey) {
  auto pool = MakePool(4);
  int first = CallOnce(*pool, "python|fn|1.0|org-a");
  EXPECT_EQ(CallOnce(*pool, "python|fn|1.0|org-a"), first);
  EXPECT_EQ(census_.started, 1);
  auto stats = pool->stats();
  EXPECT_EQ(stats.started, 1u);
  EXPECT_EQ(stats.reused, 1u);
  EXPECT_EQ(stats.idle, 1u);
  EXPECT_EQ(stats.busy, 0u);
}

TEST_F(WorkerPoolTest, NeverSharesAWorkerAcrossKeys) {
  auto pool = MakePool(4);
  int a = CallOnce(*pool, "python|fn|1.0|org-a");
  int b = CallOnce(*pool, "python|fn|1.0|org-b");
  int c = CallOnce(*pool, "python|fn|2.0|org-a");
  EXPECT_NE(a, b);
  EXPECT_NE(a, c);
  EXPECT_NE(b, c);
  EXPECT_EQ(CallOnce(*pool, "python|fn|1.0|org-b"), b);
  EXPECT_EQ(CallOnce(*pool, "python|fn|1.0|org-a"), a);
}

TEST_F(WorkerPoolTest, ConcurrentCallsOfOneKeyGetSeparateWorkers) {
  auto pool = MakePool(4);
  auto one = pool->Acquire("k", "", Factory(), 2000);
  auto two = pool->Acquire("k", "", Factory(), 2000);
  ASSERT_TRUE(one.ok() && two.ok());
  EXPECT_NE(Id(*one), Id(*two));
  EXPECT_NE(one->slot, two->slot);
  EXPECT_TRUE(one->fresh);
  EXPECT_EQ(pool->stats().busy, 2u);
  pool->Release(std::move(*one), true);
  pool->Release(std::move(*two), true);
  EXPECT_EQ(pool->stats().idle, 2u);
}

TEST_F(WorkerPoolTest, AnUnfitWorkerIsStoppedAndReplaced) {
  auto pool = MakePool(4);
  int first = CallOnce(*pool, "k", /*reusable=*/false);
  EXPECT_EQ(census_.stopped, 1);
  EXPECT_NE(CallOnce(*pool, "k"), first);
  EXPECT_EQ(pool->stats().recycled, 0u);  // stopped as unfit, not recycled
}

TEST_F(WorkerPoolTest, RecyclesAWorkerAfterItsLastCall) {
  auto pool = MakePool(4, /*max_calls=*/3);
  int first = CallOnce(*pool, "k");
  EXPECT_EQ(CallOnce(*pool, "k"), first);
  EXPECT_EQ(CallOnce(*pool, "k"), first);  // its third and last call
  EXPECT_EQ(census_.stopped, 1);
  EXPECT_EQ(pool->stats().recycled, 1u);
  EXPECT_NE(CallOnce(*pool, "k"), first);
}

TEST_F(WorkerPoolTest, StopsWorkersIdlePastTheLimit) {
  auto pool = MakePool(4, 1000, /*max_idle_ms=*/60000);
  int old_worker = CallOnce(*pool, "old");
  now_ms_ += 30000;
  int young = CallOnce(*pool, "young");
  now_ms_ += 30000;  // "old" idle for 60 s, "young" for 30 s
  EXPECT_EQ(pool->CloseIdle(), 1u);
  EXPECT_EQ(census_.stopped, 1);
  EXPECT_EQ(pool->stats().expired, 1u);
  EXPECT_NE(CallOnce(*pool, "old"), old_worker);
  EXPECT_EQ(CallOnce(*pool, "young"), young);
  EXPECT_EQ(pool->CloseIdle(), 0u);
}

TEST_F(WorkerPoolTest, AtTheCapEvictsTheLeastRecentlyUsedIdleWorker) {
  auto pool = MakePool(3);
  int a = CallOnce(*pool, "a");
  now_ms_ += 1;
  int b = CallOnce(*pool, "b");
  now_ms_ += 1;
  int c = CallOnce(*pool, "c");
  now_ms_ += 1;
  EXPECT_EQ(CallOnce(*pool, "a"), a);  // a is now the most recently used; b the least
  int d = CallOnce(*pool, "d");        // full: b makes room
  EXPECT_EQ(census_.started, 4);
  EXPECT_EQ(census_.stopped, 1);
  EXPECT_EQ(pool->stats().evicted, 1u);
  EXPECT_EQ(CallOnce(*pool, "a"), a);
  EXPECT_EQ(CallOnce(*pool, "c"), c);
  EXPECT_EQ(CallOnce(*pool, "d"), d);
  EXPECT_NE(CallOnce(*pool, "b"), b);  // b was evicted, so it starts again
}

TEST_F(WorkerPoolTest, SlotsAreUniqueAmongLiveWorkersAndReused) {
  auto pool = MakePool(3);
  std::vector<WorkerPool::Lease> leases;
  std::set<int> slots;
  for (const char* key : {"a", "b", "c"}) {
    auto lease = pool->Acquire(key, "", Factory(), 2000);
    ASSERT_TRUE(lease.ok());
    slots.insert(lease->slot);
    leases.push_back(std::move(*lease));
  }
  EXPECT_EQ(slots, (std::set<int>{0, 1, 2}));
  int freed = leases[1].slot;
  pool->Release(std::move(leases[1]), false);
  auto lease = pool->Acquire("d", "", Factory(), 2000);
  ASSERT_TRUE(lease.ok());
  EXPECT_EQ(lease->slot, freed);
  pool->Release(std::move(*lease), true);
  pool->Release(std::move(leases[0]), true);
  pool->Release(std::move(leases[2]), true);
}

TEST_F(WorkerPoolTest, FullOfBusyWorkersACallWaitsForOneToComeBack) {
  auto pool = MakePool(1);
  auto held = pool->Acquire("a", "", Factory(), 2000);
  ASSERT_TRUE(held.ok());
  // Past its deadline, a call gets no worker.
  EXPECT_EQ(pool->Acquire("b", "", Factory(), now_ms_).status().code(), Status::Code::kUnavailable);
  std::atomic<bool> got{false};
  std::thread waiter([&] {
    auto lease = pool->Acquire("b", "", Factory(), INT64_MAX);
    got = lease.ok();
    if (lease.ok()) pool->Release(std::move(*lease), true);
  });
  pool->Release(std::move(*held), true);  // idle now: the waiter evicts it
  waiter.join();
  EXPECT_TRUE(got);
  EXPECT_EQ(pool->stats().evicted, 1u);
}

TEST_F(WorkerPoolTest, AFailedStartGivesItsSlotBack) {
  auto pool = MakePool(1);
  auto failing = [](int) -> Result<std::unique_ptr<Worker>> {
    return Status::Internal("cannot spawn");
  };
  auto lease = pool->Acquire("a", "", failing, 2000);
  EXPECT_EQ(lease.status().code(), Status::Code::kInternal);
  EXPECT_EQ(pool->stats().busy, 0u);
  EXPECT_EQ(pool->stats().started, 0u);
  CallOnce(*pool, "a");  // the slot is free again
}

TEST_F(WorkerPoolTest, DestroyingThePoolStopsIdleWorkers) {
  auto pool = MakePool(4);
  CallOnce(*pool, "a");
  CallOnce(*pool, "b");
  pool.reset();
  EXPECT_EQ(census_.stopped, 2);
}

// Spares. "py" stands for a shape: what a worker depends on before its first call.

TEST_F(WorkerPoolTest, AMissTakesASpareAndItsReplacementIsStartedOffTheCallersPath) {
  auto pool = MakePool(4, 1000, 60000, /*spares=*/1);
  pool->KeepSpares("py", Factory());
  EXPECT_EQ(pool->StartSpares(), 1u);
  EXPECT_EQ(pool->StartSpares(), 0u);  // one per shape
  const int spare = next_id_;

  auto lease = pool->Acquire("k", "py", Factory(), 2000);
  ASSERT_TRUE(lease.ok());
  EXPECT_EQ(Id(*lease), spare);
  EXPECT_TRUE(lease->fresh);
  EXPECT_EQ(lease->calls, 0);
  EXPECT_EQ(census_.started, 1);  // Acquire started nothing: no replacement on this thread
  auto stats = pool->stats();
  EXPECT_EQ(stats.spares_taken, 1u);
  EXPECT_EQ(stats.started, 0u);
  EXPECT_EQ(stats.spare, 0u);
  EXPECT_EQ(stats.busy, 1u);

  EXPECT_EQ(pool->StartSpares(), 1u);  // the replacement, with a slot of its own
  EXPECT_NE(Made(next_id_).slot(), lease->slot);
  pool->Release(std::move(*lease), true);
  EXPECT_EQ(CallOnce(*pool, "k", true, "py"), spare);  // now a warm worker of "k"
  EXPECT_EQ(pool->stats().spare, 1u);
}

TEST_F(WorkerPoolTest, ASpareServesTheKeyThatTookItAndNoOther) {
  auto pool = MakePool(4, 1000, 60000, /*spares=*/1);
  pool->KeepSpares("py", Factory());
  pool->StartSpares();
  const int first = CallOnce(*pool, "org-a", true, "py");
  pool->StartSpares();
  const int second = CallOnce(*pool, "org-b", true, "py");  // the same shape, another key
  EXPECT_NE(first, second);
  EXPECT_EQ(CallOnce(*pool, "org-a", true, "py"), first);
  EXPECT_EQ(CallOnce(*pool, "org-b", true, "py"), second);
  // Stopped after its call, a former spare is gone: it never goes back to the spares.
  EXPECT_EQ(CallOnce(*pool, "org-a", /*reusable=*/false, "py"), first);
  EXPECT_EQ(pool->stats().spare, 0u);
  EXPECT_EQ(census_.stopped, 1);
  EXPECT_NE(CallOnce(*pool, "org-a", true, "py"), first);
}

TEST_F(WorkerPoolTest, ACallOfAnotherShapeStartsItsOwnWorkerAndLeavesTheSpare) {
  auto pool = MakePool(4, 1000, 60000, /*spares=*/1);
  pool->KeepSpares("py", Factory());
  pool->StartSpares();
  const int spare = next_id_;
  EXPECT_NE(CallOnce(*pool, "k", true, "py 256MB"), spare);
  EXPECT_NE(CallOnce(*pool, "j", true, ""), spare);
  auto stats = pool->stats();
  EXPECT_EQ(stats.spare, 1u);
  EXPECT_EQ(stats.started, 2u);
  EXPECT_EQ(stats.spares_taken, 0u);
}

TEST_F(WorkerPoolTest, AtTheCapSparesAreStoppedBeforeIdleWorkers) {
  auto pool = MakePool(3, 1000, 60000, /*spares=*/1);
  const int a = CallOnce(*pool, "a");
  const int b = CallOnce(*pool, "b");
  pool->KeepSpares("py", Factory());
  EXPECT_EQ(pool->StartSpares(), 1u);  // the last free slot
  const int spare = next_id_;
  const int c = CallOnce(*pool, "c");  // full: the spare makes room
  EXPECT_FALSE(c == a || c == b || c == spare);
  EXPECT_EQ(census_.stopped, 1);
  auto stats = pool->stats();
  EXPECT_EQ(stats.spares_evicted, 1u);
  EXPECT_EQ(stats.evicted, 0u);
  EXPECT_EQ(stats.spare, 0u);
  EXPECT_EQ(CallOnce(*pool, "a"), a);
  EXPECT_EQ(CallOnce(*pool, "b"), b);
  EXPECT_EQ(pool->StartSpares(), 0u);  // a pool this small keeps its warm workers
}

TEST_F(WorkerPoolTest, AtTheCapSparesTakeTheLeastRecentlyUsedIdleSlotsUpToAQuarter) {
  auto pool = MakePool(8, 1000, 60000, /*spares=*/1);
  std::vector<int> ids;
  for (int i = 0; i < 8; ++i) {
    ids.push_back(CallOnce(*pool, "k" + std::to_string(i)));
    now_ms_ += 1;
  }
  pool->KeepSpares("js", Factory());
  pool->KeepSpares("lua", Factory());
  pool->KeepSpares("py", Factory());
  EXPECT_EQ(pool->StartSpares(), 2u);  // 2 of 8 slots; the third would pass a quarter
  const int lua_spare = next_id_;      // shapes are filled in name order: js, then lua
  auto stats = pool->stats();
  EXPECT_EQ(stats.evicted, 2u);
  EXPECT_EQ(stats.spare, 2u);
  EXPECT_EQ(census_.stopped, 2);
  for (int i = 2; i < 8; ++i) EXPECT_EQ(CallOnce(*pool, "k" + std::to_string(i)), ids[i]);
  EXPECT_EQ(CallOnce(*pool, "k9", true, "lua"), lua_spare);
}

TEST_F(WorkerPoolTest, SparesAndWorkersNeverShareASlot) {
  auto pool = MakePool(3, 1000, 60000, /*spares=*/1);
  pool->KeepSpares("py", Factory());
  pool->KeepSpares("js", Factory());
  EXPECT_EQ(pool->StartSpares(), 2u);
  std::vector<WorkerPool::Lease> leases;
  std::set<int> slots;
  const std::pair<const char*, const char*> calls[] = {{"a", "py"}, {"b", "js"}, {"c", ""}};
  for (auto [key, shape] : calls) {
    auto lease = pool->Acquire(key, shape, Factory(), 2000);
    ASSERT_TRUE(lease.ok());
    EXPECT_EQ(static_cast<FakeWorker&>(*lease->worker).slot(), lease->slot);
    slots.insert(lease->slot);
    leases.push_back(std::move(*lease));
  }
  EXPECT_EQ(slots, (std::set<int>{0, 1, 2}));
  EXPECT_EQ(pool->StartSpares(), 0u);  // every slot is held
  for (auto& lease : leases) pool->Release(std::move(lease), true);
}

TEST_F(WorkerPoolTest, ADeadSpareIsDroppedAndReplaced) {
  auto pool = MakePool(4, 1000, 60000, /*spares=*/1);
  pool->KeepSpares("py", Factory());
  pool->StartSpares();
  const int spare = next_id_;
  Made(spare).Die();
  EXPECT_EQ(pool->StartSpares(), 1u);
  EXPECT_EQ(census_.stopped, 1);
  EXPECT_EQ(pool->stats().spares_lost, 1u);
  EXPECT_EQ(CallOnce(*pool, "k", true, "py"), next_id_);  // the replacement serves
}

TEST_F(WorkerPoolTest, ACallNeverGetsADeadSpare) {
  auto pool = MakePool(1, 1000, 60000, /*spares=*/1);
  pool->KeepSpares("py", Factory());
  pool->StartSpares();
  const int spare = next_id_;
  Made(spare).Die();
  EXPECT_NE(CallOnce(*pool, "k", true, "py"), spare);  // started in the dead spare's slot
  auto stats = pool->stats();
  EXPECT_EQ(stats.spares_lost, 1u);
  EXPECT_EQ(stats.spares_taken, 0u);
  EXPECT_EQ(stats.started, 1u);
}

TEST_F(WorkerPoolTest, SparesAreNotStoppedForBeingIdle) {
  auto pool = MakePool(4, 1000, /*max_idle_ms=*/60000, /*spares=*/1);
  pool->KeepSpares("py", Factory());
  pool->StartSpares();
  const int spare = next_id_;
  now_ms_ += 10 * 60000;
  EXPECT_EQ(pool->CloseIdle(), 0u);
  EXPECT_EQ(census_.stopped, 0);
  EXPECT_EQ(CallOnce(*pool, "k", true, "py"), spare);
}

TEST_F(WorkerPoolTest, AFailedSpareStartGivesItsSlotBackAndWaitsBeforeTryingAgain) {
  auto pool = MakePool(1, 1000, 60000, /*spares=*/1);
  int tries = 0;
  pool->KeepSpares("py", [&tries](int) -> Result<std::unique_ptr<Worker>> {
    ++tries;
    return Status::Internal("cannot spawn");
  });
  EXPECT_EQ(pool->StartSpares(), 0u);
  EXPECT_EQ(tries, 1);
  EXPECT_EQ(pool->StartSpares(), 0u);
  EXPECT_EQ(tries, 1);                       // not before a second has passed
  CallOnce(*pool, "k", /*reusable=*/false);  // the slot is free again
  now_ms_ += 1000;
  EXPECT_EQ(pool->StartSpares(), 0u);
  EXPECT_EQ(tries, 2);
}

TEST_F(WorkerPoolTest, WithoutSparesNothingIsStartedAhead) {
  auto pool = MakePool(4, 1000, 60000, /*spares=*/0);
  pool->KeepSpares("py", Factory());
  EXPECT_EQ(pool->StartSpares(), 0u);
  EXPECT_EQ(census_.started, 0);
  CallOnce(*pool, "k", true, "py");
  auto stats = pool->stats();
  EXPECT_EQ(stats.started, 1u);
  EXPECT_EQ(stats.spares_started, 0u);
  EXPECT_EQ(stats.spares_taken, 0u);
}

TEST_F(WorkerPoolTest, DestroyingThePoolStopsSpares) {
  auto pool = MakePool(4, 1000, 60000, /*spares=*/2);
  pool->KeepSpares("py", Factory());
  EXPECT_EQ(pool->StartSpares(), 2u);
  pool.reset();
  EXPECT_EQ(census_.stopped, 2);
}

// The pool's own thread starts spares as soon as a shape is named, and replaces one taken once
// the call that took it is over: never on a caller's thread.
TEST(WorkerPoolThreadTest, ThePoolsThreadStartsSparesAndTheirReplacements) {
  Census census;
  std::mutex mu;
  std::condition_variable started_cv;
  std::vector<std::thread::id> starters;  // guarded by mu
  WorkerPoolOptions options;
  options.max_workers = 1;  // a call waits for the spare being started: no race with it
  options.spares_per_shape = 1;
  options.upkeep_interval_ms = 3600 * 1000;  // only what happens in the pool wakes its thread
  WorkerPool pool(options);
  pool.KeepSpares("py", [&](int slot) -> Result<std::unique_ptr<Worker>> {
    std::lock_guard<std::mutex> lock(mu);
    starters.push_back(std::this_thread::get_id());
    started_cv.notify_all();
    return std::unique_ptr<Worker>(new FakeWorker(census, static_cast<int>(starters.size()), slot));
  });
  {
    // The spare's start has begun, and holds the only slot.
    std::unique_lock<std::mutex> lock(mu);
    started_cv.wait(lock, [&] { return starters.size() == 1; });
  }
  auto never = [](int) -> Result<std::unique_ptr<Worker>> {
    ADD_FAILURE() << "the call started a worker of its own";
    return Status::Internal("unexpected");
  };
  auto lease = pool.Acquire("k", "py", never, MonotonicUs() / 1000 + 3600 * 1000);
  ASSERT_TRUE(lease.ok()) << lease.status().ToString();
  EXPECT_EQ(static_cast<FakeWorker&>(*lease->worker).id(), 1);
  pool.Release(std::move(*lease), /*reusable=*/false);  // its slot is free for a replacement
  {
    std::unique_lock<std::mutex> lock(mu);
    started_cv.wait(lock, [&] { return starters.size() == 2; });
    EXPECT_NE(starters[0], std::this_thread::get_id());
    EXPECT_EQ(starters[1], starters[0]);
  }
}

}  // namespace
}  // namespace toolgate::executor
