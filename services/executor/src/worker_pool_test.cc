#include "toolgate/executor/worker_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <thread>

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
  int id() const { return id_; }
  int slot() const { return slot_; }

 private:
  Census& census_;
  int id_;
  int slot_;
};

class WorkerPoolTest : public ::testing::Test {
 protected:
  std::unique_ptr<WorkerPool> MakePool(size_t max_workers, int64_t max_calls = 1000,
                                       int64_t max_idle_ms = 60000) {
    WorkerPoolOptions options;
    options.max_workers = max_workers;
    options.max_calls_per_worker = max_calls;
    options.max_idle_ms = max_idle_ms;
    options.reap_interval_ms = 0;
    return std::make_unique<WorkerPool>(options, [this] { return now_ms_.load(); });
  }
  WorkerPool::Factory Factory() {
    return [this](int slot) -> Result<std::unique_ptr<Worker>> {
      return std::unique_ptr<Worker>(new FakeWorker(census_, ++next_id_, slot));
    };
  }
  static int Id(const WorkerPool::Lease& lease) {
    return static_cast<FakeWorker&>(*lease.worker).id();
  }
  // Takes a worker for key and gives it straight back; returns its id.
  int CallOnce(WorkerPool& pool, const std::string& key, bool reusable = true) {
    auto lease = pool.Acquire(key, Factory(), now_ms_ + 1000);
    EXPECT_TRUE(lease.ok());
    int id = Id(*lease);
    pool.Release(std::move(*lease), reusable);
    return id;
  }

  Census census_;
  int next_id_ = 0;
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
  auto one = pool->Acquire("k", Factory(), 2000);
  auto two = pool->Acquire("k", Factory(), 2000);
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
    auto lease = pool->Acquire(key, Factory(), 2000);
    ASSERT_TRUE(lease.ok());
    slots.insert(lease->slot);
    leases.push_back(std::move(*lease));
  }
  EXPECT_EQ(slots, (std::set<int>{0, 1, 2}));
  int freed = leases[1].slot;
  pool->Release(std::move(leases[1]), false);
  auto lease = pool->Acquire("d", Factory(), 2000);
  ASSERT_TRUE(lease.ok());
  EXPECT_EQ(lease->slot, freed);
  pool->Release(std::move(*lease), true);
  pool->Release(std::move(leases[0]), true);
  pool->Release(std::move(leases[2]), true);
}

TEST_F(WorkerPoolTest, FullOfBusyWorkersACallWaitsForOneToComeBack) {
  auto pool = MakePool(1);
  auto held = pool->Acquire("a", Factory(), 2000);
  ASSERT_TRUE(held.ok());
  // Past its deadline, a call gets no worker.
  EXPECT_EQ(pool->Acquire("b", Factory(), now_ms_).status().code(), Status::Code::kUnavailable);
  std::atomic<bool> got{false};
  std::thread waiter([&] {
    auto lease = pool->Acquire("b", Factory(), INT64_MAX);
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
  auto lease = pool->Acquire("a", failing, 2000);
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

}  // namespace
}  // namespace toolgate::executor
