// The Redis scripts against a real redis-server, started by each test on a free port.
#include "toolgate/billing/balance_store.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <stdexcept>
#include <thread>
#include <vector>

#include "toolgate/billing/budget_settings.h"
#include "toolgate/net/listen_port.h"

namespace toolgate::billing {
namespace {

int FreePort() {
  Result<int> port = net::PickListenPort();
  if (!port.ok()) throw std::runtime_error(port.status().ToString());
  return *port;
}

// A redis-server child process without persistence, in a directory of its own so that no
// dump.rdb lying in the working directory is loaded.
class RedisServer {
 public:
  ~RedisServer() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }

  // Starts the server and waits until it answers PING. False when it could not be started.
  bool Start() {
    char dir[] = "/tmp/billing-redis-XXXXXX";
    if (!mkdtemp(dir)) return false;
    dir_ = dir;
    for (int attempt = 0; attempt < 5; ++attempt) {
      port_ = FreePort();
      pid_ = fork();
      if (pid_ == 0) {
        int devnull = open("/dev/null", O_WRONLY);
        dup2(devnull, STDOUT_FILENO);
        std::string port = std::to_string(port_);
        execlp("redis-server", "redis-server", "--port", port.c_str(), "--bind", "127.0.0.1",
               "--dir", dir_.c_str(), "--save", "", "--appendonly", "no",
               static_cast<char*>(nullptr));
        _exit(127);
      }
      if (WaitUntilAnswering()) return true;
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
      pid_ = -1;
    }
    return false;
  }

  int port() const { return port_; }

 private:
  bool WaitUntilAnswering() {
    redis::Options options;
    options.port = port_;
    options.pool_size = 1;
    options.timeout_ms = 200;
    redis::Client probe(options);
    // Up to ~5 s in 10 ms steps; stops early when the server has exited (port taken).
    for (int i = 0; i < 500; ++i) {
      auto pong = probe.Command({"PING"});
      if (pong.ok() && pong->str == "PONG") return true;
      if (waitpid(pid_, nullptr, WNOHANG) == pid_) {
        pid_ = -1;
        return false;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  }

  pid_t pid_ = -1;
  int port_ = 0;
  std::string dir_;
};

class BalanceStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(server_.Start()) << "redis-server could not be started";
    redis::Options options;
    options.port = server_.port();
    options.pool_size = 16;
    client_ = std::make_unique<redis::Client>(options);
    limits_.rate_per_key_per_s = 0;
    limits_.concurrency_per_org = 0;
  }

  void TearDown() override { client_.reset(); }  // the server is killed by its destructor

  BalanceStore Store() { return BalanceStore(*client_, limits_); }

  HoldRecord HoldOf(const std::string& execution_id, int64_t amount,
                    const std::string& org = "org-a", const std::string& key_id = "key-1") {
    HoldRecord h;
    h.execution_id = execution_id;
    h.org_id = org;
    h.owner_org_id = "org-b";
    h.key_id = key_id;
    h.key_expires_at_ms = 1'900'000'000'000;
    h.amount_micro_usd = amount;
    h.edge_reply = "_INBOX.edge." + execution_id;
    h.traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    h.runtime = "lua";
    h.compute_type = "CPU";
    h.created_ms = 1000;
    h.expiry_ms = 61000;
    return h;
  }

  int64_t Int(const std::string& key) {
    auto r = client_->Command({"GET", key});
    EXPECT_TRUE(r.ok());
    return r->type == redis::Reply::Type::kNil ? 0 : std::stoll(r->str);
  }

  // How many scripts Redis has run since it started (INFO commandstats).
  int64_t ScriptsRun() {
    auto r = client_->Command({"INFO", "commandstats"});
    EXPECT_TRUE(r.ok());
    int64_t calls = 0;
    for (const char* name : {"cmdstat_evalsha:calls=", "cmdstat_eval:calls="}) {
      auto at = r->str.find(name);
      if (at != std::string::npos) calls += std::stoll(r->str.substr(at + strlen(name)));
    }
    return calls;
  }

  HoldVerdict VerdictOf(BalanceStore& store, const HoldRecord& hold) {
    auto outcome = store.Hold(hold);
    EXPECT_TRUE(outcome.ok()) << outcome.status().ToString();
    return outcome.ok() ? outcome->verdict : HoldVerdict::kBalanceNotLoaded;
  }

  RedisServer server_;
  std::unique_ptr<redis::Client> client_;
  Limits limits_;
};

TEST_F(BalanceStoreTest, HoldNeedsALoadedBalance) {
  BalanceStore store = Store();
  EXPECT_EQ(VerdictOf(store, HoldOf("e1", 10)), HoldVerdict::kBalanceNotLoaded);
  EXPECT_EQ(Int("tg:res:org-a"), 0);
  auto loaded = store.Load("org-a", 100);
  ASSERT_TRUE(loaded.ok());
  EXPECT_TRUE(*loaded);
  EXPECT_FALSE(*store.Load("org-a", 999));  // SET NX: the first load stands
  EXPECT_EQ(VerdictOf(store, HoldOf("e1", 10)), HoldVerdict::kHeld);
  EXPECT_EQ(VerdictOf(store, HoldOf("e1", 10)), HoldVerdict::kAlreadyHeld);
  auto view = store.Read("org-a");
  ASSERT_TRUE(view.ok());
  EXPECT_EQ(view->balance_micro_usd, 100);
  EXPECT_EQ(view->reserved_micro_usd, 10);
  EXPECT_EQ(Int("tg:conc:org-a"), 1);
}

TEST_F(BalanceStoreTest, InsufficientBalanceHoldsNothing) {
  BalanceStore store = Store();
  ASSERT_TRUE(store.Load("org-a", 100).ok());
  ASSERT_EQ(VerdictOf(store, HoldOf("e1", 60)), HoldVerdict::kHeld);
  auto outcome = store.Hold(HoldOf("e2", 41));
  ASSERT_TRUE(outcome.ok());
  EXPECT_EQ(outcome->verdict, HoldVerdict::kInsufficientBalance);
  EXPECT_EQ(outcome->available_micro_usd, 40);
  EXPECT_EQ(Int("tg:res:org-a"), 60);
  EXPECT_EQ(Int("tg:conc:org-a"), 1);
  auto hold = store.GetHold("e2");
  ASSERT_TRUE(hold.ok());
  EXPECT_FALSE(hold->has_value());
  // Exactly the available amount can still be held.
  EXPECT_EQ(VerdictOf(store, HoldOf("e3", 40)), HoldVerdict::kHeld);
  EXPECT_EQ(Int("tg:res:org-a"), 100);
}

TEST_F(BalanceStoreTest, ConcurrentHoldsNeverOverdraw) {
  constexpr int kThreads = 60;
  constexpr int64_t kAmount = 1'000'000'007;  // large, odd amounts: no room for rounding
  BalanceStore store = Store();
  ASSERT_TRUE(store.Load("org-a", 30 * kAmount).ok());

  std::atomic<bool> done{false};
  std::atomic<int> overdrawn{0};
  std::thread watcher([&] {
    while (!done.load()) {
      auto view = store.Read("org-a");
      if (view.ok() && view->reserved_micro_usd > *view->balance_micro_usd) ++overdrawn;
    }
  });
  std::atomic<int> held{0}, refused{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      while (!go.load()) std::this_thread::yield();
      auto outcome = store.Hold(HoldOf("e" + std::to_string(i), kAmount));
      if (!outcome.ok()) return;
      if (outcome->verdict == HoldVerdict::kHeld) ++held;
      if (outcome->verdict == HoldVerdict::kInsufficientBalance) ++refused;
    });
  }
  go = true;
  for (auto& t : threads) t.join();
  done = true;
  watcher.join();

  EXPECT_EQ(held.load(), 30);
  EXPECT_EQ(refused.load(), 30);
  EXPECT_EQ(overdrawn.load(), 0);
  EXPECT_EQ(Int("tg:res:org-a"), 30 * kAmount);
  EXPECT_EQ(Int("tg:conc:org-a"), 30);
  EXPECT_EQ(Int("tg:bal:org-a"), 30 * kAmount);
}

TEST_F(BalanceStoreTest, SettleAppliesOnce) {
  BalanceStore store = Store();
  ASSERT_TRUE(store.Load("org-a", 1000).ok());
  ASSERT_TRUE(store.Load("org-b", 0).ok());
  ASSERT_EQ(VerdictOf(store, HoldOf("e1", 100)), HoldVerdict::kHeld);
  SettleStep step{"e1", "org-a", "org-b", 40, 8};
  auto first = store.Settle(step);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_TRUE(*first);
  auto second = store.Settle(step);
  ASSERT_TRUE(second.ok());
  EXPECT_FALSE(*second);
  EXPECT_EQ(Int("tg:bal:org-a"), 960);
  EXPECT_EQ(Int("tg:res:org-a"), 0);
  EXPECT_EQ(Int("tg:conc:org-a"), 0);
  EXPECT_EQ(Int("tg:bal:org-b"), 8);
  EXPECT_FALSE(store.GetHold("e1")->has_value());
  EXPECT_TRUE(store.DueHolds(1'000'000, 10)->empty());
}

TEST_F(BalanceStoreTest, SettleManyAppliesEachOnceInOneRoundTrip) {
  BalanceStore store = Store();
  ASSERT_TRUE(store.Load("org-a", 1000).ok());
  ASSERT_TRUE(store.Load("org-b", 0).ok());
  for (const char* id : {"e1", "e2", "e3"}) {
    ASSERT_EQ(VerdictOf(store, HoldOf(id, 100)), HoldVerdict::kHeld);
  }
  std::vector<SettleStep> steps = {{"e1", "org-a", "org-b", 10, 1},
                                   {"e2", "org-a", "org-b", 20, 2},
                                   {"e3", "org-a", "org-b", 30, 3}};
  auto first = store.SettleMany(steps);
  ASSERT_EQ(first.size(), 3u);
  for (const auto& r : first) {
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_TRUE(*r);
  }
  // A retried batch (and one with a never-held execution) changes nothing.
  steps.push_back({"e4", "org-a", "org-b", 40, 4});
  auto second = store.SettleMany(steps);
  for (const auto& r : second) {
    ASSERT_TRUE(r.ok());
    EXPECT_FALSE(*r);
  }
  EXPECT_EQ(Int("tg:bal:org-a"), 940);
  EXPECT_EQ(Int("tg:res:org-a"), 0);
  EXPECT_EQ(Int("tg:conc:org-a"), 0);
  EXPECT_EQ(Int("tg:bal:org-b"), 6);
  EXPECT_TRUE(store.SettleMany({}).empty());
}

// The settler answers the callers from SettleMany's written hook: it runs exactly once, after
// the captures are written (a command sent from it on another connection is applied after
// them), and also when Redis cannot be reached, so that no answer is lost.
TEST_F(BalanceStoreTest, SettleManysWrittenHookRunsOnceAfterTheCapturesLeft) {
  BalanceStore store = Store();
  ASSERT_TRUE(store.Load("org-a", 1000).ok());
  ASSERT_TRUE(store.Load("org-b", 0).ok());
  ASSERT_EQ(VerdictOf(store, HoldOf("e1", 100)), HoldVerdict::kHeld);
  // Redis knows the script (a first use loads it; until then the hook runs after the attempt
  // that Redis refused with NOSCRIPT, one round trip before the capture).
  ASSERT_EQ(store.SettleMany({{"e0", "org-a", "org-b", 10, 1}}).size(), 1u);
  redis::Options options;
  options.port = server_.port();
  options.pool_size = 1;
  redis::Client other(options);
  int runs = 0;
  std::optional<int64_t> in_flight_seen_after;
  auto results = store.SettleMany({{"e1", "org-a", "org-b", 10, 1}}, [&] {
    ++runs;
    // Redis serves connections in the order their bytes arrived: this read, sent after the
    // capture left, sees the capture applied (the caller's next hold would too).
    auto r = other.Command({"GET", "tg:conc:org-a"});
    ASSERT_TRUE(r.ok());
    in_flight_seen_after = r->type == redis::Reply::Type::kNil ? 0 : std::stoll(r->str);
  });
  ASSERT_EQ(results.size(), 1u);
  EXPECT_TRUE(results[0].ok() && *results[0]);
  EXPECT_EQ(runs, 1);
  EXPECT_EQ(in_flight_seen_after, 0);

  redis::Options gone;
  gone.port = 1;  // nothing listens there
  gone.timeout_ms = 200;
  redis::Client unreachable(gone);
  BalanceStore cut(unreachable, limits_);
  runs = 0;
  auto failed = cut.SettleMany({{"e2", "org-a", "org-b", 10, 1}}, [&] { ++runs; });
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_FALSE(failed[0].ok());
  EXPECT_EQ(runs, 1);
}

TEST_F(BalanceStoreTest, HoldManyAppliesEachInOrderInOneRoundTrip) {
  BalanceStore store = Store();
  ASSERT_TRUE(store.Load("org-a", 100).ok());
  // In order: e1 and e2 fit, e3 no longer does, e1 again is a duplicate, org-c is not loaded.
  auto outcomes = store.HoldMany({HoldOf("e1", 50), HoldOf("e2", 40), HoldOf("e3", 20),
                                  HoldOf("e1", 50), HoldOf("e4", 1, "org-c")});
  ASSERT_EQ(outcomes.size(), 5u);
  for (const auto& o : outcomes) ASSERT_TRUE(o.ok()) << o.status().ToString();
  EXPECT_EQ(outcomes[0]->verdict, HoldVerdict::kHeld);
  EXPECT_EQ(outcomes[1]->verdict, HoldVerdict::kHeld);
  EXPECT_EQ(outcomes[2]->verdict, HoldVerdict::kInsufficientBalance);
  EXPECT_EQ(outcomes[2]->available_micro_usd, 10);
  EXPECT_EQ(outcomes[3]->verdict, HoldVerdict::kAlreadyHeld);
  EXPECT_EQ(outcomes[4]->verdict, HoldVerdict::kBalanceNotLoaded);
  EXPECT_EQ(Int("tg:res:org-a"), 90);
  EXPECT_EQ(Int("tg:conc:org-a"), 2);
  EXPECT_TRUE(store.HoldMany(std::vector<HoldRecord>{}).empty());
}

TEST_F(BalanceStoreTest, ABatchIsOneScriptHoweverManyItCarries) {
  BalanceStore store = Store();
  ASSERT_TRUE(store.Load("org-a", 1000).ok());
  ASSERT_TRUE(store.Load("org-c", 1000).ok());
  std::vector<HoldRecord> holds;
  for (int i = 0; i < 40; ++i) holds.push_back(HoldOf("e" + std::to_string(i), 10, "org-a"));
  holds.push_back(HoldOf("c1", 10, "org-c"));
  // Redis learns each script on its first use (NOSCRIPT, then EVAL): count from the second.
  ASSERT_EQ(VerdictOf(store, HoldOf("warm", 10)), HoldVerdict::kHeld);
  ASSERT_TRUE(store.Settle({"warm", "org-a", "org-b", 10, 0}).ok());
  int64_t before = ScriptsRun();
  for (const auto& o : store.HoldMany(holds)) ASSERT_EQ(o->verdict, HoldVerdict::kHeld);
  EXPECT_EQ(ScriptsRun() - before, 1);

  std::vector<SettleStep> steps;
  for (const auto& h : holds) steps.push_back({h.execution_id, h.org_id, "org-b", 7, 0});
  before = ScriptsRun();
  for (const auto& c : store.SettleMany(steps)) ASSERT_TRUE(*c);
  EXPECT_EQ(ScriptsRun() - before, 1);
  EXPECT_EQ(Int("tg:bal:org-a"), 1000 - 10 - 40 * 7);
  EXPECT_EQ(Int("tg:bal:org-c"), 1000 - 7);
  EXPECT_EQ(Int("tg:res:org-a"), 0);
  EXPECT_EQ(Int("tg:conc:org-c"), 0);
}

TEST_F(BalanceStoreTest, ACaptureRepeatedWithinOneBatchChargesOnce) {
  BalanceStore store = Store();
  ASSERT_TRUE(store.Load("org-a", 1000).ok());
  ASSERT_EQ(VerdictOf(store, HoldOf("e1", 100)), HoldVerdict::kHeld);
  auto captured =
      store.SettleMany({{"e1", "org-a", "org-b", 40, 0}, {"e1", "org-a", "org-b", 40, 0}});
  ASSERT_TRUE(captured[0].ok() && captured[1].ok());
  EXPECT_TRUE(*captured[0]);
  EXPECT_FALSE(*captured[1]);
  EXPECT_EQ(Int("tg:bal:org-a"), 960);
  EXPECT_EQ(Int("tg:res:org-a"), 0);
  EXPECT_EQ(Int("tg:conc:org-a"), 0);
}

TEST_F(BalanceStoreTest, ABatchLargerThanOneRunOfTheDueListIsWhole) {
  BalanceStore store = Store();
  ASSERT_TRUE(store.Load("org-a", 1'000'000).ok());
  std::vector<HoldRecord> holds;
  for (int i = 0; i < 1200; ++i) holds.push_back(HoldOf("e" + std::to_string(i), 1));
  for (const auto& o : store.HoldMany(holds)) ASSERT_EQ(o->verdict, HoldVerdict::kHeld);
  EXPECT_EQ(client_->Command({"ZCARD", "tg:holds"})->integer, 1200);
  auto due = store.DueHolds(holds[0].expiry_ms, 2000);
  ASSERT_TRUE(due.ok());
  EXPECT_EQ(due->size(), 1200u);
  std::vector<SettleStep> steps;
  for (const auto& h : holds) steps.push_back({h.execution_id, "org-a", "org-b", 1, 0});
  for (const auto& c : store.SettleMany(steps)) ASSERT_TRUE(*c);
  EXPECT_EQ(client_->Command({"ZCARD", "tg:holds"})->integer, 0);
  EXPECT_EQ(client_->Command({"EXISTS", "tg:hold:e0", "tg:hold:e1199"})->integer, 0);
  EXPECT_EQ(Int("tg:bal:org-a"), 1'000'000 - 1200);
  EXPECT_EQ(Int("tg:conc:org-a"), 0);
}

TEST_F(BalanceStoreTest, AnotherOrganizationsHoldFailsOnlyItsOwnItem) {
  BalanceStore store = Store();
  ASSERT_TRUE(store.Load("org-a", 1000).ok());
  ASSERT_EQ(VerdictOf(store, HoldOf("e1", 100)), HoldVerdict::kHeld);
  ASSERT_EQ(VerdictOf(store, HoldOf("e2", 100)), HoldVerdict::kHeld);
  ASSERT_EQ(VerdictOf(store, HoldOf("e3", 100)), HoldVerdict::kHeld);
  auto captured = store.SettleMany({{"e1", "org-a", "org-b", 40, 0},
                                    {"e2", "org-x", "org-b", 40, 0},
                                    {"e3", "org-a", "org-b", 40, 0}});
  ASSERT_EQ(captured.size(), 3u);
  EXPECT_TRUE(captured[0].ok() && *captured[0]);
  EXPECT_FALSE(captured[1].ok());
  EXPECT_TRUE(captured[2].ok() && *captured[2]);
  EXPECT_EQ(Int("tg:bal:org-a"), 1000 - 80);
  EXPECT_EQ(Int("tg:res:org-a"), 100);  // e2's hold stands
  EXPECT_FALSE(store.Release("e2", "org-x", ReleaseMode::kDelete).ok());
  EXPECT_TRUE(*store.Release("e2", "org-a", ReleaseMode::kDelete));
  EXPECT_EQ(Int("tg:res:org-a"), 0);
}

TEST_F(BalanceStoreTest, AHoldWrittenFieldByFieldIsStillReadAndCaptured) {
  // The record as holds were written before their detail became one field.
  ASSERT_TRUE(client_
                  ->Command({"HSET",
                             "tg:hold:old",
                             "state",
                             "held",
                             "org",
                             "org-a",
                             "owner",
                             "org-b",
                             "amount",
                             "100",
                             "key_id",
                             "key-1",
                             "key_expires_at_ms",
                             "1900000000000",
                             "edge_reply",
                             "_INBOX.edge.old",
                             "traceparent",
                             "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
                             "runtime",
                             "lua",
                             "compute_type",
                             "CPU",
                             "created_ms",
                             "1000",
                             "expiry_ms",
                             "61000"})
                  .ok());
  ASSERT_TRUE(client_->Command({"SET", "tg:res:org-a", "100"}).ok());
  ASSERT_TRUE(client_->Command({"SET", "tg:conc:org-a", "1"}).ok());
  BalanceStore store = Store();
  ASSERT_TRUE(store.Load("org-a", 1000).ok());
  auto hold = store.GetHold("old");
  ASSERT_TRUE(hold.ok() && hold->has_value());
  EXPECT_EQ((*hold)->owner_org_id, "org-b");
  EXPECT_EQ((*hold)->amount_micro_usd, 100);
  EXPECT_EQ((*hold)->edge_reply, "_INBOX.edge.old");
  EXPECT_EQ((*hold)->expiry_ms, 61000);
  EXPECT_TRUE(*store.Settle({"old", "org-a", "org-b", 40, 0}));
  EXPECT_EQ(Int("tg:bal:org-a"), 960);
  EXPECT_EQ(Int("tg:res:org-a"), 0);
  EXPECT_EQ(Int("tg:conc:org-a"), 0);
}

TEST_F(BalanceStoreTest, ReleaseManyUndoesHoldsInOneRoundTrip) {
  BalanceStore store = Store();
  ASSERT_TRUE(store.Load("org-a", 100).ok());
  HoldRecord e1 = HoldOf("e1", 30), e2 = HoldOf("e2", 20), never = HoldOf("never", 5);
  ASSERT_EQ(VerdictOf(store, e1), HoldVerdict::kHeld);
  ASSERT_EQ(VerdictOf(store, e2), HoldVerdict::kHeld);
  auto released = store.ReleaseMany({&e1, &never, &e2});
  ASSERT_EQ(released.size(), 3u);
  for (const auto& r : released) ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(*released[0]);
  EXPECT_FALSE(*released[1]);  // nothing was held: a no-op
  EXPECT_TRUE(*released[2]);
  EXPECT_EQ(Int("tg:res:org-a"), 0);
  EXPECT_EQ(Int("tg:conc:org-a"), 0);
  EXPECT_TRUE(store.ReleaseMany({}).empty());
}

TEST_F(BalanceStoreTest, SettleLeavesAnUnloadedOwnerToItsLoad) {
  BalanceStore store = Store();
  ASSERT_TRUE(store.Load("org-a", 1000).ok());
  ASSERT_EQ(VerdictOf(store, HoldOf("e1", 100)), HoldVerdict::kHeld);
  ASSERT_TRUE(*store.Settle({"e1", "org-a", "org-b", 40, 8}));
  auto owner = store.Balance("org-b");
  ASSERT_TRUE(owner.ok());
  EXPECT_FALSE(owner->has_value());  // its load will sum the revenue from the ledger
}

TEST_F(BalanceStoreTest, SettleRefusesAnotherOrganizationsHold) {
  BalanceStore store = Store();
  ASSERT_TRUE(store.Load("org-a", 1000).ok());
  ASSERT_EQ(VerdictOf(store, HoldOf("e1", 100)), HoldVerdict::kHeld);
  EXPECT_FALSE(store.Settle({"e1", "org-x", "org-b", 40, 0}).ok());
  EXPECT_EQ(Int("tg:res:org-a"), 100);
}

TEST_F(BalanceStoreTest, ReleaseReturnsTheHoldOnce) {
  BalanceStore store = Store();
  ASSERT_TRUE(store.Load("org-a", 1000).ok());
  ASSERT_EQ(VerdictOf(store, HoldOf("e1", 100)), HoldVerdict::kHeld);
  ASSERT_EQ(VerdictOf(store, HoldOf("e2", 100)), HoldVerdict::kHeld);
  EXPECT_TRUE(*store.Release("e1", "org-a", ReleaseMode::kDelete));
  EXPECT_FALSE(*store.Release("e1", "org-a", ReleaseMode::kDelete));
  EXPECT_EQ(Int("tg:bal:org-a"), 1000);
  EXPECT_EQ(Int("tg:res:org-a"), 100);
  EXPECT_EQ(Int("tg:conc:org-a"), 1);
  EXPECT_FALSE(store.GetHold("e1")->has_value());
  // A settle after the release charges nothing: the hold is gone.
  EXPECT_FALSE(*store.Settle({"e1", "org-a", "org-b", 40, 0}));
  EXPECT_EQ(Int("tg:bal:org-a"), 1000);
}

TEST_F(BalanceStoreTest, LateChargeAfterTheReaperReleasedIsAppliedOnce) {
  BalanceStore store = Store();
  ASSERT_TRUE(store.Load("org-a", 1000).ok());
  ASSERT_TRUE(store.Load("org-b", 0).ok());
  ASSERT_EQ(VerdictOf(store, HoldOf("e1", 100)), HoldVerdict::kHeld);
  EXPECT_TRUE(*store.Release("e1", "org-a", ReleaseMode::kKeepTombstone));
  EXPECT_FALSE(*store.Release("e1", "org-a", ReleaseMode::kKeepTombstone));
  EXPECT_EQ(Int("tg:res:org-a"), 0);
  EXPECT_EQ(Int("tg:conc:org-a"), 0);
  auto tombstone = store.GetHold("e1");
  ASSERT_TRUE(tombstone.ok() && tombstone->has_value());
  EXPECT_TRUE((*tombstone)->released);
  EXPECT_TRUE(store.DueHolds(1'000'000, 10)->empty());

  EXPECT_TRUE(*store.Settle({"e1", "org-a", "org-b", 40, 8}));
  EXPECT_FALSE(*store.Settle({"e1", "org-a", "org-b", 40, 8}));
  EXPECT_EQ(Int("tg:bal:org-a"), 960);
  EXPECT_EQ(Int("tg:res:org-a"), 0);  // released already: not taken twice
  EXPECT_EQ(Int("tg:conc:org-a"), 0);
  EXPECT_EQ(Int("tg:bal:org-b"), 8);
}

TEST_F(BalanceStoreTest, HoldRecordKeepsWhatAnyReplicaNeeds) {
  BalanceStore store = Store();
  ASSERT_TRUE(store.Load("org-a", 1000).ok());
  HoldRecord sent = HoldOf("e1", 100);
  ASSERT_EQ(VerdictOf(store, sent), HoldVerdict::kHeld);
  auto got = store.GetHold("e1");
  ASSERT_TRUE(got.ok() && got->has_value());
  const HoldRecord& h = **got;
  EXPECT_EQ(h.org_id, sent.org_id);
  EXPECT_EQ(h.owner_org_id, sent.owner_org_id);
  EXPECT_EQ(h.key_id, sent.key_id);
  EXPECT_EQ(h.key_expires_at_ms, 1'900'000'000'000);
  EXPECT_EQ(h.amount_micro_usd, 100);
  EXPECT_EQ(h.edge_reply, sent.edge_reply);
  EXPECT_EQ(h.traceparent, sent.traceparent);
  EXPECT_EQ(h.runtime, "lua");
  EXPECT_EQ(h.compute_type, "CPU");
  EXPECT_EQ(h.created_ms, 1000);
  EXPECT_EQ(h.expiry_ms, 61000);
  EXPECT_FALSE(h.released);
}

TEST_F(BalanceStoreTest, DueHoldsAreThoseExpired) {
  BalanceStore store = Store();
  ASSERT_TRUE(store.Load("org-a", 1000).ok());
  ASSERT_EQ(VerdictOf(store, HoldOf("e1", 100)), HoldVerdict::kHeld);  // expiry 61000
  EXPECT_TRUE(store.DueHolds(60999, 10)->empty());
  EXPECT_EQ(*store.DueHolds(61000, 10), std::vector<std::string>{"e1"});
  ASSERT_TRUE(store.ForgetDue("e1").ok());  // the hold exists: left alone
  EXPECT_EQ(store.DueHolds(61000, 10)->size(), 1u);
}

TEST_F(BalanceStoreTest, RateLimitPerKey) {
  limits_.rate_per_key_per_s = 1;
  limits_.rate_burst = 3;
  BalanceStore store = Store();
  ASSERT_TRUE(store.Load("org-a", 1000).ok());
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(VerdictOf(store, HoldOf("e" + std::to_string(i), 1)), HoldVerdict::kHeld);
  }
  auto limited = store.Hold(HoldOf("e3", 1));
  ASSERT_TRUE(limited.ok());
  EXPECT_EQ(limited->verdict, HoldVerdict::kRateLimited);
  EXPECT_EQ(limited->retry_after_s, 1);
  EXPECT_EQ(Int("tg:res:org-a"), 3);  // the refused call held nothing
  EXPECT_EQ(Int("tg:conc:org-a"), 3);
  // Another key of the same organization has its own bucket.
  EXPECT_EQ(VerdictOf(store, HoldOf("e4", 1, "org-a", "key-2")), HoldVerdict::kHeld);
}

TEST_F(BalanceStoreTest, LimitsHoldWithinOneBatchAsAcrossBatches) {
  limits_.rate_per_key_per_s = 1;
  limits_.rate_burst = 3;
  limits_.concurrency_per_org = 4;
  BalanceStore store = Store();
  ASSERT_TRUE(store.Load("org-a", 1000).ok());
  // key-1 has 3 tokens: its fourth and fifth calls are refused; key-2 has a bucket of its own,
  // until the organization's fourth call in flight fills its concurrency.
  auto outcomes = store.HoldMany({HoldOf("e1", 1), HoldOf("e2", 1), HoldOf("e3", 1),
                                  HoldOf("e4", 1), HoldOf("k1", 1, "org-a", "key-2"),
                                  HoldOf("e5", 1), HoldOf("k2", 1, "org-a", "key-2")});
  std::vector<HoldVerdict> verdicts;
  for (const auto& o : outcomes) verdicts.push_back(o->verdict);
  EXPECT_EQ(verdicts,
            (std::vector<HoldVerdict>{HoldVerdict::kHeld, HoldVerdict::kHeld, HoldVerdict::kHeld,
                                      HoldVerdict::kRateLimited, HoldVerdict::kHeld,
                                      HoldVerdict::kRateLimited, HoldVerdict::kConcurrencyLimit}));
  EXPECT_EQ(Int("tg:conc:org-a"), 4);
  EXPECT_EQ(Int("tg:res:org-a"), 4);
  // The buckets were written back: key-1 is still empty in the next batch, and key-2 spent a
  // token on the call refused for concurrency.
  ASSERT_TRUE(*store.Settle({"e1", "org-a", "org-b", 1, 0}));
  outcomes = store.HoldMany({HoldOf("e6", 1), HoldOf("k3", 1, "org-a", "key-2")});
  EXPECT_EQ(outcomes[0]->verdict, HoldVerdict::kRateLimited);
  EXPECT_EQ(outcomes[1]->verdict, HoldVerdict::kHeld);
  EXPECT_EQ(VerdictOf(store, HoldOf("k4", 1, "org-a", "key-2")), HoldVerdict::kRateLimited);
}

TEST_F(BalanceStoreTest, ABatchMovesEveryBalanceItTouchesExactly) {
  BalanceStore store = Store();
  // Beyond 2^53, where a double loses digits: every figure must still be exact.
  const int64_t big = 9'007'199'254'740'993;  // 2^53 + 1
  ASSERT_TRUE(store.Load("org-a", 4 * big).ok());
  ASSERT_TRUE(store.Load("org-b", 1000).ok());
  ASSERT_TRUE(store.Load("org-c", 1000).ok());
  std::vector<HoldRecord> holds = {HoldOf("a1", big), HoldOf("a2", big), HoldOf("b1", 300, "org-b"),
                                   HoldOf("c1", 200, "org-c")};
  // Fifteen-digit amounts whose sum passes 2^53 part way through the batch.
  for (int i = 0; i < 10; ++i)
    holds.push_back(HoldOf("m" + std::to_string(i), 999'999'999'999'999));
  holds.push_back(HoldOf("over", big));  // reserved would pass the balance
  auto held = store.HoldMany(holds);
  for (size_t i = 0; i + 1 < held.size(); ++i) ASSERT_EQ(held[i]->verdict, HoldVerdict::kHeld) << i;
  ASSERT_EQ(held.back()->verdict, HoldVerdict::kInsufficientBalance);
  EXPECT_EQ(held.back()->available_micro_usd, 4 * big - 2 * big - 10 * 999'999'999'999'999);
  // org-b pays org-c and earns from org-a within one batch; org-a pays past 2^53.
  std::vector<SettleStep> steps = {{"a1", "org-a", "org-b", big, 7},
                                   {"b1", "org-b", "org-c", 250, 11},
                                   {"a2", "org-a", "org-c", big - 1, 13},
                                   {"c1", "org-c", "org-b", 200, 5}};
  for (int i = 0; i < 10; ++i) {
    steps.push_back({"m" + std::to_string(i), "org-a", "org-a", 999'999'999'999'999, 0});
  }
  for (const auto& c : store.SettleMany(steps)) ASSERT_TRUE(*c);
  auto exact = [&](const std::string& key) {
    auto r = client_->Command({"GET", key});
    return r.ok() ? r->str : std::string("error");
  };
  EXPECT_EQ(exact("tg:bal:org-a"),
            std::to_string(4 * big - big - (big - 1) - 10 * 999'999'999'999'999));
  EXPECT_EQ(exact("tg:bal:org-b"), std::to_string(1000 + 7 - 250 + 5));
  EXPECT_EQ(exact("tg:bal:org-c"), std::to_string(1000 + 11 + 13 - 200));
  for (const char* org : {"org-a", "org-b", "org-c"}) {
    EXPECT_EQ(exact(std::string("tg:res:") + org), "0") << org;
    EXPECT_EQ(exact(std::string("tg:conc:") + org), "0") << org;
  }
}

TEST_F(BalanceStoreTest, ConcurrencyLimitPerOrganization) {
  limits_.concurrency_per_org = 2;
  BalanceStore store = Store();
  ASSERT_TRUE(store.Load("org-a", 1000).ok());
  ASSERT_TRUE(store.Load("org-c", 1000).ok());
  EXPECT_EQ(VerdictOf(store, HoldOf("e1", 1)), HoldVerdict::kHeld);
  EXPECT_EQ(VerdictOf(store, HoldOf("e2", 1)), HoldVerdict::kHeld);
  auto busy = store.Hold(HoldOf("e3", 1));
  ASSERT_TRUE(busy.ok());
  EXPECT_EQ(busy->verdict, HoldVerdict::kConcurrencyLimit);
  EXPECT_GE(busy->retry_after_s, 1);
  EXPECT_EQ(Int("tg:res:org-a"), 2);
  EXPECT_EQ(VerdictOf(store, HoldOf("e4", 1, "org-c")), HoldVerdict::kHeld);  // per organization
  ASSERT_TRUE(*store.Release("e1", "org-a", ReleaseMode::kDelete));
  EXPECT_EQ(VerdictOf(store, HoldOf("e3", 1)), HoldVerdict::kHeld);
}

// Redis's clock, in microseconds: the scripts' clock.
int64_t RedisNowUs(redis::Client& client) {
  auto t = client.Command({"TIME"});
  EXPECT_TRUE(t.ok() && t->elements.size() == 2);
  return std::stoll(t->elements[0].str) * 1'000'000 + std::stoll(t->elements[1].str);
}

// A call that spins until its timeout kills it is not charged (408); its sandbox time is spent
// from its organization's allowance, and once that is gone the organization's calls are refused
// on every replica until it refills. Another organization, and calls that do not time out, are
// not concerned.
TEST_F(BalanceStoreTest, UnchargedTimeoutsSpendTheAllowanceThenCallsAreRefused) {
  limits_.uncharged_timeout_s_per_hour = 2;  // 2,000 ms
  BalanceStore store = Store();
  BalanceStore replica = Store();
  ASSERT_TRUE(store.Load("org-a", 1000).ok());
  ASSERT_TRUE(store.Load("org-c", 1000).ok());
  auto release = [&](const std::string& id, const std::string& org, int64_t timeout_ms) {
    auto out = store.ReleaseUnrun({{id, org, timeout_ms}});
    EXPECT_EQ(out.size(), 1u);
    EXPECT_TRUE(out[0].ok()) << out[0].status().ToString();
    return out[0].ok() ? *out[0] : ReleaseOutcome{};
  };

  // Calls that finish (charged) or fail on the platform (not a timeout) spend nothing.
  ASSERT_EQ(VerdictOf(store, HoldOf("ran", 10)), HoldVerdict::kHeld);
  ASSERT_TRUE(*store.Settle({"ran", "org-a", "org-b", 5, 0}));
  ASSERT_EQ(VerdictOf(store, HoldOf("failed", 10)), HoldVerdict::kHeld);
  EXPECT_TRUE(release("failed", "org-a", 0).released);
  EXPECT_EQ(client_->Command({"EXISTS", "tg:tmo:org-a"})->integer, 0);

  ASSERT_EQ(VerdictOf(store, HoldOf("t1", 10)), HoldVerdict::kHeld);
  ReleaseOutcome first = release("t1", "org-a", 1500);
  EXPECT_TRUE(first.released);
  EXPECT_FALSE(first.allowance_spent);  // 500 ms left
  ASSERT_EQ(VerdictOf(replica, HoldOf("t2", 10)), HoldVerdict::kHeld);
  ReleaseOutcome second = release("t2", "org-a", 1500);
  EXPECT_TRUE(second.released);
  EXPECT_TRUE(second.allowance_spent);  // 1,000 ms past it
  // The result delivered again releases nothing, so it spends nothing either.
  ReleaseOutcome again = release("t2", "org-a", 1500);
  EXPECT_FALSE(again.released);
  EXPECT_FALSE(again.allowance_spent);

  // Refused on any replica, holding nothing, until 1,000 ms have refilled at 2,000 ms an hour:
  // 1,800 s.
  for (BalanceStore* s : {&store, &replica}) {
    auto refused = s->Hold(HoldOf("t3", 10));
    ASSERT_TRUE(refused.ok()) << refused.status().ToString();
    EXPECT_EQ(refused->verdict, HoldVerdict::kTimeoutBudgetExhausted);
    EXPECT_GE(refused->retry_after_s, 1790);
    EXPECT_LE(refused->retry_after_s, 1801);
  }
  EXPECT_EQ(Int("tg:res:org-a"), 0);
  EXPECT_EQ(Int("tg:conc:org-a"), 0);
  EXPECT_FALSE(store.GetHold("t3")->has_value());
  // Another organization's allowance is its own.
  EXPECT_EQ(VerdictOf(store, HoldOf("c1", 10, "org-c", "key-c")), HoldVerdict::kHeld);
  // The spent allowance lives only until it would have refilled: then an absent key is full.
  auto ttl = client_->Command({"PTTL", "tg:tmo:org-a"});
  ASSERT_TRUE(ttl.ok());
  EXPECT_GT(ttl->integer, 5'300'000);  // (2,000 + 1,000) ms to refill at 2,000 ms an hour
  EXPECT_LE(ttl->integer, 5'400'000);
}

// What was spent past the allowance is owed: the organization's calls are let through again
// only once the allowance has refilled past it, not when an hour has gone by.
TEST_F(BalanceStoreTest, TimeSpentPastTheAllowanceIsPaidBackBeforeCallsRunAgain) {
  limits_.uncharged_timeout_s_per_hour = 2;  // refills 2,000 ms per hour: 1 ms per 1.8 s
  BalanceStore store = Store();
  ASSERT_TRUE(store.Load("org-a", 1000).ok());
  auto spent_at = [&](int64_t ms, int64_t seconds_ago) {
    int64_t at = RedisNowUs(*client_) - seconds_ago * 1'000'000;
    ASSERT_TRUE(
        client_
            ->Command({"HSET", "tg:tmo:org-a", "ms", std::to_string(ms), "at", std::to_string(at)})
            .ok());
  };
  // 100,000 ms owed (calls in flight when it ran out), 2 hours ago: 4,000 ms refilled since.
  spent_at(-100'000, 7200);
  auto owed = store.Hold(HoldOf("e1", 10));
  ASSERT_TRUE(owed.ok());
  EXPECT_EQ(owed->verdict, HoldVerdict::kTimeoutBudgetExhausted);
  // 96,000 ms still owed: 96,000 × 1.8 s.
  EXPECT_GE(owed->retry_after_s, 172'790);
  EXPECT_LE(owed->retry_after_s, 172'801);
  // 100 ms owed, 200 s ago: 111 ms refilled, so 11 ms are left.
  spent_at(-100, 200);
  EXPECT_EQ(VerdictOf(store, HoldOf("e2", 10)), HoldVerdict::kHeld);
  // Refilled for ever so long: never more than the allowance.
  spent_at(-100, 1'000'000);
  ASSERT_EQ(VerdictOf(store, HoldOf("e3", 10)), HoldVerdict::kHeld);
  EXPECT_TRUE(store.ReleaseUnrun({{"e3", "org-a", 1999}})[0]->released);
  EXPECT_EQ(VerdictOf(store, HoldOf("e4", 10)), HoldVerdict::kHeld);  // 1 ms left
  EXPECT_TRUE(store.ReleaseUnrun({{"e4", "org-a", 2}})[0]->allowance_spent);
  EXPECT_EQ(VerdictOf(store, HoldOf("e5", 10)), HoldVerdict::kTimeoutBudgetExhausted);
}

// Within one batch the allowance is spent release by release, in order, and a hold batch sees
// what the releases before it left.
TEST_F(BalanceStoreTest, ABatchSpendsTheAllowanceInOrder) {
  limits_.uncharged_timeout_s_per_hour = 2;
  BalanceStore store = Store();
  ASSERT_TRUE(store.Load("org-a", 1000).ok());
  ASSERT_TRUE(store.Load("org-c", 1000).ok());
  auto held =
      store.HoldMany({HoldOf("a1", 1), HoldOf("a2", 1), HoldOf("c1", 1, "org-c"), HoldOf("a3", 1)});
  for (const auto& h : held) ASSERT_EQ(h->verdict, HoldVerdict::kHeld);
  auto released = store.ReleaseUnrun(
      {{"a1", "org-a", 1000}, {"c1", "org-c", 1500}, {"a2", "org-a", 1000}, {"a3", "org-a", 1000}});
  ASSERT_EQ(released.size(), 4u);
  std::vector<bool> spent;
  for (const auto& r : released) {
    ASSERT_TRUE(r.ok() && r->released);
    spent.push_back(r->allowance_spent);
  }
  EXPECT_EQ(spent, (std::vector<bool>{false, false, true, false}));
  auto verdicts = store.HoldMany({HoldOf("a4", 1), HoldOf("c2", 1, "org-c")});
  EXPECT_EQ(verdicts[0]->verdict, HoldVerdict::kTimeoutBudgetExhausted);
  EXPECT_EQ(verdicts[1]->verdict, HoldVerdict::kHeld);  // 500 ms left
}

// 0 turns the allowance off: timeouts are not counted and nothing is refused.
TEST_F(BalanceStoreTest, NoAllowanceCountsNothing) {
  limits_.uncharged_timeout_s_per_hour = 0;
  BalanceStore store = Store();
  ASSERT_TRUE(store.Load("org-a", 1000).ok());
  for (int i = 0; i < 3; ++i) {
    std::string id = "e" + std::to_string(i);
    ASSERT_EQ(VerdictOf(store, HoldOf(id, 1)), HoldVerdict::kHeld);
    auto released = store.ReleaseUnrun({{id, "org-a", 900'000}});
    ASSERT_TRUE(released[0].ok() && released[0]->released);
    EXPECT_FALSE(released[0]->allowance_spent);
  }
  EXPECT_EQ(client_->Command({"EXISTS", "tg:tmo:org-a"})->integer, 0);
}

TEST_F(BalanceStoreTest, CreditAppliesOncePerLedgerEntry) {
  BalanceStore store = Store();
  EXPECT_FALSE(*store.Credit("org-a", 7, 50));  // not loaded: its load sums the ledger
  EXPECT_FALSE(store.Balance("org-a")->has_value());
  ASSERT_TRUE(store.Load("org-a", 10).ok());
  EXPECT_TRUE(*store.Credit("org-a", 7, 50));
  EXPECT_FALSE(*store.Credit("org-a", 7, 50));
  EXPECT_TRUE(*store.Credit("org-a", 8, 5));
  EXPECT_EQ(Int("tg:bal:org-a"), 65);
}

TEST_F(BalanceStoreTest, NotLoadedListsMissingBalances) {
  BalanceStore store = Store();
  ASSERT_TRUE(store.Load("org-b", 0).ok());
  auto missing = store.NotLoaded({"org-a", "org-b", "org-c"});
  ASSERT_TRUE(missing.ok());
  EXPECT_EQ(*missing, (std::vector<std::string>{"org-a", "org-c"}));
  EXPECT_TRUE(store.NotLoaded({})->empty());
}

TEST_F(BalanceStoreTest, RepairIsACompareAndSet) {
  BalanceStore store = Store();
  ASSERT_TRUE(store.Load("org-a", 10).ok());
  EXPECT_FALSE(*store.Repair("org-a", 11, 99));
  EXPECT_EQ(Int("tg:bal:org-a"), 10);
  EXPECT_TRUE(*store.Repair("org-a", 10, 99));
  EXPECT_EQ(Int("tg:bal:org-a"), 99);
}

// A payout (payout.lua) takes only what no call in flight holds, so every capture still finds
// its hold's money; and it is taken, and given back, once.
TEST_F(BalanceStoreTest, APayoutTakesOnlyWhatNoHoldReservesAndOnlyOnce) {
  BalanceStore store = Store();
  auto unloaded = store.TakePayout("org-a", 7, 10);
  ASSERT_TRUE(unloaded.ok()) << unloaded.status().ToString();
  EXPECT_EQ(unloaded->verdict, PayoutTake::Verdict::kNotLoaded);
  ASSERT_TRUE(store.Load("org-a", 100).ok());
  ASSERT_EQ(VerdictOf(store, HoldOf("e1", 60)), HoldVerdict::kHeld);

  auto held = store.TakePayout("org-a", 7, 41);
  ASSERT_TRUE(held.ok());
  EXPECT_EQ(held->verdict, PayoutTake::Verdict::kNotAvailable);
  EXPECT_EQ(held->available_micro_usd, 40);
  EXPECT_EQ(Int("tg:bal:org-a"), 100);

  auto taken = store.TakePayout("org-a", 7, 40);
  ASSERT_TRUE(taken.ok());
  EXPECT_EQ(taken->verdict, PayoutTake::Verdict::kTaken);
  EXPECT_EQ(Int("tg:bal:org-a"), 60);
  EXPECT_EQ(store.TakePayout("org-a", 7, 40)->verdict, PayoutTake::Verdict::kTakenBefore);
  EXPECT_EQ(Int("tg:bal:org-a"), 60);
  // Nothing is left to take while the hold stands, and its capture still finds its money.
  EXPECT_EQ(store.TakePayout("org-a", 8, 1)->verdict, PayoutTake::Verdict::kNotAvailable);
  SettleStep step;
  step.execution_id = "e1";
  step.org_id = "org-a";
  step.owner_org_id = "org-b";
  step.total_micro_usd = 60;
  ASSERT_TRUE(*store.Settle(step));
  EXPECT_EQ(Int("tg:bal:org-a"), 0);

  // Given back once (its ledger row did not commit); never one that was not taken.
  EXPECT_TRUE(*store.ReturnPayout("org-a", 7, 40));
  EXPECT_FALSE(*store.ReturnPayout("org-a", 7, 40));
  EXPECT_FALSE(*store.ReturnPayout("org-a", 8, 1));
  EXPECT_EQ(Int("tg:bal:org-a"), 40);
}

TEST_F(BalanceStoreTest, APayoutStaysExactBeyondDoublePrecision) {
  BalanceStore store = Store();
  ASSERT_TRUE(store.Load("org-a", 9'007'199'254'740'993).ok());
  EXPECT_EQ(store.TakePayout("org-a", 1, 9'007'199'254'740'994)->verdict,
            PayoutTake::Verdict::kNotAvailable);
  EXPECT_EQ(store.TakePayout("org-a", 1, 9'007'199'254'740'993)->verdict,
            PayoutTake::Verdict::kTaken);
  EXPECT_EQ(Int("tg:bal:org-a"), 0);
}

TEST_F(BalanceStoreTest, LoadedBalancesListsEveryLoadedOrganizationOnce) {
  BalanceStore store = Store();
  EXPECT_TRUE(store.LoadedBalances()->empty());
  for (int i = 0; i < 2500; ++i) ASSERT_TRUE(store.Load("org-" + std::to_string(i), i).ok());
  ASSERT_TRUE(client_->Command({"SET", "tg:res:org-1", "5"}).ok());  // not a balance
  auto balances = store.LoadedBalances();
  ASSERT_TRUE(balances.ok()) << balances.status().ToString();
  ASSERT_EQ(balances->size(), 2500u);
  int64_t sum = 0;
  for (const auto& [org, balance] : *balances) {
    EXPECT_EQ("org-" + std::to_string(balance), org);
    sum += balance;
  }
  EXPECT_EQ(sum, 2499LL * 2500 / 2);
}

TEST_F(BalanceStoreTest, AmountsBeyondDoublePrecisionStayExact) {
  BalanceStore store = Store();
  const int64_t big = (int64_t{1} << 53) + 1;  // not representable as a double
  ASSERT_TRUE(store.Load("org-a", big).ok());
  auto refused = store.Hold(HoldOf("e1", big + 1));
  ASSERT_TRUE(refused.ok());
  EXPECT_EQ(refused->verdict, HoldVerdict::kInsufficientBalance);
  EXPECT_EQ(VerdictOf(store, HoldOf("e2", big)), HoldVerdict::kHeld);
  ASSERT_TRUE(*store.Settle({"e2", "org-a", "org-b", big - 2, 0}));
  EXPECT_EQ(Int("tg:bal:org-a"), 2);
}

// OAuth grants' budgets (tg:budget:grant:<id>): a cap of their own, held atomically with the
// balance.
class GrantBudgetTest : public BalanceStoreTest {
 protected:
  static constexpr const char* kGrant = "5f0c2b7e-9a41-4d3c-8e2b-1a0f4c3d2e1f";
  static constexpr const char* kBudgetKey = "tg:budget:grant:5f0c2b7e-9a41-4d3c-8e2b-1a0f4c3d2e1f";

  static Budget Grant(int64_t cap) { return Budget{BudgetKind::kGrant, kGrant, cap, {}, {}}; }

  HoldRecord GrantHoldOf(const std::string& execution_id, int64_t amount, int64_t cap) {
    HoldRecord h = HoldOf(execution_id, amount);
    h.budgets = {Grant(cap)};
    return h;
  }

  // A field of the grant's budget, exactly as Redis keeps it ("" when absent).
  std::string BudgetField(const std::string& field) {
    auto r = client_->Command({"HGET", kBudgetKey, field});
    EXPECT_TRUE(r.ok());
    return r.ok() && r->type == redis::Reply::Type::kString ? r->str : "";
  }
  int64_t Reserved() { return std::stoll("0" + BudgetField("reserved")); }
  int64_t Spent() { return std::stoll("0" + BudgetField("spent")); }
};

TEST_F(GrantBudgetTest, AHoldWaitsForItsGrantsBudgetToBeLoaded) {
  limits_.rate_per_key_per_s = 1;
  limits_.rate_burst = 1;
  BalanceStore store = Store();
  ASSERT_TRUE(store.Load("org-a", 1000).ok());
  auto outcome = store.Hold(GrantHoldOf("e1", 10, 100));
  ASSERT_TRUE(outcome.ok()) << outcome.status().ToString();
  EXPECT_EQ(outcome->verdict, HoldVerdict::kBudgetNotLoaded);
  EXPECT_EQ(outcome->budget, 0u);
  EXPECT_EQ(Int("tg:res:org-a"), 0);
  EXPECT_EQ(Int("tg:conc:org-a"), 0);
  EXPECT_EQ(client_->Command({"EXISTS", kBudgetKey})->integer, 0);

  auto loaded = store.LoadBudget(Grant(100), 70);
  ASSERT_TRUE(loaded.ok());
  EXPECT_TRUE(*loaded);
  EXPECT_FALSE(*store.LoadBudget(Grant(100), 5));  // the first load stands
  // The refusal took no token of the key's bucket (burst 1): the call comes back and is held.
  EXPECT_EQ(VerdictOf(store, GrantHoldOf("e1", 10, 100)), HoldVerdict::kHeld);
  auto view = store.ReadBudget(Grant(100));
  ASSERT_TRUE(view.ok());
  EXPECT_EQ(view->spent_micro_usd, 70);
  EXPECT_EQ(view->reserved_micro_usd, 10);
}

// 60 calls at once against a cap that covers 25 of them: exactly 25 are held, and at no moment
// does what the grant holds and spent pass its cap.
TEST_F(GrantBudgetTest, ConcurrentHoldsNeverPassTheGrantsCap) {
  constexpr int kThreads = 60;
  constexpr int64_t kAmount = 1'000'000'007;  // large, odd amounts: no room for rounding
  constexpr int64_t kCap = 26 * kAmount - 1;  // 25 holds, and not quite a 26th
  BalanceStore store = Store();
  ASSERT_TRUE(store.Load("org-a", 100 * kAmount).ok());
  ASSERT_TRUE(store.LoadBudget(Grant(kCap), 0).ok());

  std::atomic<bool> done{false};
  std::atomic<int> over_cap{0};
  std::thread watcher([&] {
    while (!done.load()) {
      auto view = store.ReadBudget(Grant(kCap));
      if (view.ok() && view->reserved_micro_usd + view->spent_micro_usd.value_or(0) > kCap) {
        ++over_cap;
      }
    }
  });
  std::atomic<int> held{0}, capped{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> threads;
  std::vector<HoldVerdict> verdicts(kThreads, HoldVerdict::kBalanceNotLoaded);
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      while (!go.load()) std::this_thread::yield();
      auto outcome = store.Hold(GrantHoldOf("e" + std::to_string(i), kAmount, kCap));
      if (!outcome.ok()) return;
      verdicts[i] = outcome->verdict;
      if (outcome->verdict == HoldVerdict::kHeld) ++held;
      if (outcome->verdict == HoldVerdict::kBudgetExceeded) ++capped;
    });
  }
  go = true;
  for (auto& t : threads) t.join();
  done = true;
  watcher.join();

  EXPECT_EQ(held.load(), 25);
  EXPECT_EQ(capped.load(), 35);
  EXPECT_EQ(over_cap.load(), 0);
  EXPECT_EQ(Reserved(), 25 * kAmount);
  EXPECT_EQ(Spent(), 0);
  // The balance holds exactly the calls the grant let through.
  EXPECT_EQ(Int("tg:res:org-a"), 25 * kAmount);
  EXPECT_EQ(Int("tg:conc:org-a"), 25);

  // Each charge is below its hold: spent becomes what was charged, and nothing stays reserved.
  std::vector<SettleStep> steps;
  int64_t charged = 0;
  for (int i = 0; i < kThreads; ++i) {
    if (verdicts[i] != HoldVerdict::kHeld) continue;
    int64_t total = kAmount - 1000 - i;
    charged += total;
    steps.push_back({"e" + std::to_string(i), "org-a", "org-a", total, 0});
  }
  for (const auto& c : store.SettleMany(steps)) ASSERT_TRUE(c.ok() && *c);
  EXPECT_EQ(Spent(), charged);
  EXPECT_EQ(Reserved(), 0);
  EXPECT_EQ(Int("tg:res:org-a"), 0);
  EXPECT_EQ(Int("tg:bal:org-a"), 100 * kAmount - charged);
}

// A hold answers what it left: the available balance (this hold counted) and the tightest
// capped budget's remainder; an uncapped budget (cap 0) is counted, never the tightest.
TEST_F(GrantBudgetTest, AHoldSaysWhatItLeft) {
  BalanceStore store = Store();
  ASSERT_TRUE(store.Load("org-a", 1000).ok());
  ASSERT_TRUE(store.LoadBudget(Grant(100), 30).ok());
  Budget uncapped{BudgetKind::kOrg, "org-a", 0, ParsePeriod(PeriodUnit::kDay, "2026-12-02"), {}};
  ASSERT_TRUE(store.LoadBudget(uncapped, 0).ok());
  HoldRecord first = GrantHoldOf("e1", 20, 100);
  first.budgets.push_back(uncapped);
  auto held = store.Hold(first);
  ASSERT_TRUE(held.ok()) << held.status().ToString();
  ASSERT_EQ(held->verdict, HoldVerdict::kHeld);
  EXPECT_EQ(held->available_after_micro_usd, 980);
  ASSERT_TRUE(held->tightest_budget.has_value());
  EXPECT_EQ(*held->tightest_budget, 0u);
  EXPECT_EQ(held->budget_remaining_micro_usd, 50);  // 100 - 30 spent - 20 held

  HoldRecord plain = HoldOf("e2", 5);
  auto second = store.Hold(plain);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second->available_after_micro_usd, 975);
  EXPECT_FALSE(second->tightest_budget.has_value());
  EXPECT_EQ(BudgetLimitName(Grant(1)), "grant");
  EXPECT_EQ(BudgetLimitName(uncapped), "org_daily");
}

// An estimate is checked exactly as the hold and changes nothing: no reservation, no count in
// flight, no rate token, no hold record, no budget reservation.
TEST_F(GrantBudgetTest, AnEstimateChecksAsAHoldAndChangesNothing) {
  limits_.rate_per_key_per_s = 1;
  limits_.rate_burst = 1;
  limits_.concurrency_per_org = 1;
  BalanceStore store = Store();
  ASSERT_TRUE(store.Load("org-a", 1000).ok());
  ASSERT_TRUE(store.LoadBudget(Grant(100), 30).ok());
  HoldRecord estimate = GrantHoldOf("e1", 20, 100);
  estimate.estimate = true;
  for (int i = 0; i < 3; ++i) {  // the bucket of 1 is never used up by estimates
    auto outcome = store.Hold(estimate);
    ASSERT_TRUE(outcome.ok()) << outcome.status().ToString();
    ASSERT_EQ(outcome->verdict, HoldVerdict::kHeld);
    EXPECT_EQ(outcome->available_after_micro_usd, 980);
    EXPECT_EQ(outcome->budget_remaining_micro_usd, 50);
  }
  EXPECT_EQ(Int("tg:res:org-a"), 0);
  EXPECT_EQ(Int("tg:conc:org-a"), 0);
  EXPECT_EQ(Reserved(), 0);
  EXPECT_EQ(client_->Command({"EXISTS", "tg:hold:e1"})->integer, 0);
  EXPECT_EQ(client_->Command({"ZCARD", "tg:holds"})->integer, 0);
  EXPECT_EQ(client_->Command({"EXISTS", "tg:rl:key-1"})->integer, 0);

  // What a hold would be refused, the estimate is refused the same way.
  HoldRecord over_cap = GrantHoldOf("e2", 71, 100);
  over_cap.estimate = true;
  auto capped = store.Hold(over_cap);
  ASSERT_TRUE(capped.ok());
  EXPECT_EQ(capped->verdict, HoldVerdict::kBudgetExceeded);
  HoldRecord too_much = HoldOf("e3", 1001);
  too_much.estimate = true;
  auto poor = store.Hold(too_much);
  ASSERT_TRUE(poor.ok());
  EXPECT_EQ(poor->verdict, HoldVerdict::kInsufficientBalance);
  EXPECT_EQ(poor->available_micro_usd, 1000);
  // The real hold, then: it takes the only slot in flight, and the estimate sees that.
  ASSERT_EQ(VerdictOf(store, GrantHoldOf("e4", 20, 100)), HoldVerdict::kHeld);
  auto busy = store.Hold(estimate);
  ASSERT_TRUE(busy.ok());
  EXPECT_EQ(busy->verdict, HoldVerdict::kRateLimited);  // the hold took the bucket's token
}

TEST_F(GrantBudgetTest, ACaptureBelowTheHoldFreesTheRestOfTheCap) {
  BalanceStore store = Store();
  ASSERT_TRUE(store.Load("org-a", 1000).ok());
  ASSERT_TRUE(store.LoadBudget(Grant(100), 0).ok());
  ASSERT_EQ(VerdictOf(store, GrantHoldOf("e1", 60, 100)), HoldVerdict::kHeld);
  auto refused = store.Hold(GrantHoldOf("e2", 60, 100));
  ASSERT_TRUE(refused.ok());
  EXPECT_EQ(refused->verdict, HoldVerdict::kBudgetExceeded);
  EXPECT_EQ(refused->budget, 0u);
  EXPECT_EQ(refused->budget_used_micro_usd, 60);

  ASSERT_TRUE(*store.Settle({"e1", "org-a", "org-b", 25, 0}));
  EXPECT_EQ(Spent(), 25);
  EXPECT_EQ(Reserved(), 0);
  EXPECT_EQ(VerdictOf(store, GrantHoldOf("e2", 60, 100)), HoldVerdict::kHeld);  // 85 of 100
  auto over = store.Hold(GrantHoldOf("e3", 16, 100));
  ASSERT_TRUE(over.ok());
  EXPECT_EQ(over->verdict, HoldVerdict::kBudgetExceeded);
  EXPECT_EQ(over->budget_used_micro_usd, 85);
  EXPECT_EQ(VerdictOf(store, GrantHoldOf("e3", 15, 100)), HoldVerdict::kHeld);  // exactly 100
  // A cap raised since (it travels with each call) counts what was spent under the old one.
  EXPECT_EQ(VerdictOf(store, GrantHoldOf("e4", 20, 120)), HoldVerdict::kHeld);
  EXPECT_EQ(Reserved(), 95);
  EXPECT_EQ(Spent(), 25);
}

TEST_F(GrantBudgetTest, AHoldRefusedByTheCapHoldsNothing) {
  BalanceStore store = Store();
  ASSERT_TRUE(store.Load("org-a", 1000).ok());
  ASSERT_TRUE(store.LoadBudget(Grant(50), 45).ok());
  // In one batch, in order: the grant's call over its cap is refused, one that fits is held, and
  // a call of the same organization without the grant is not concerned.
  auto outcomes =
      store.HoldMany({GrantHoldOf("over", 10, 50), GrantHoldOf("fits", 5, 50), HoldOf("key", 500)});
  ASSERT_EQ(outcomes.size(), 3u);
  for (const auto& o : outcomes) ASSERT_TRUE(o.ok()) << o.status().ToString();
  EXPECT_EQ(outcomes[0]->verdict, HoldVerdict::kBudgetExceeded);
  EXPECT_EQ(outcomes[1]->verdict, HoldVerdict::kHeld);
  EXPECT_EQ(outcomes[2]->verdict, HoldVerdict::kHeld);
  EXPECT_FALSE(store.GetHold("over")->has_value());
  EXPECT_EQ(Int("tg:res:org-a"), 505);
  EXPECT_EQ(Int("tg:conc:org-a"), 2);
  EXPECT_EQ(Reserved(), 5);
  EXPECT_EQ(Spent(), 45);
  EXPECT_EQ(store.DueHolds(INT64_MAX, 10)->size(), 2u);
  // The balance is checked after the cap and refuses for itself: the grant holds nothing then.
  auto poor = store.Hold(GrantHoldOf("poor", 600, 0));
  ASSERT_TRUE(poor.ok());
  EXPECT_EQ(poor->verdict, HoldVerdict::kInsufficientBalance);
  EXPECT_EQ(Reserved(), 5);
}

TEST_F(GrantBudgetTest, ReleaseReturnsTheGrantsReservation) {
  BalanceStore store = Store();
  ASSERT_TRUE(store.Load("org-a", 1000).ok());
  ASSERT_TRUE(store.LoadBudget(Grant(100), 10).ok());
  HoldRecord e1 = GrantHoldOf("e1", 40, 100), e2 = GrantHoldOf("e2", 30, 100),
             e3 = GrantHoldOf("e3", 20, 100);
  for (const HoldRecord* h : {&e1, &e2, &e3}) ASSERT_EQ(VerdictOf(store, *h), HoldVerdict::kHeld);
  EXPECT_EQ(Reserved(), 90);
  // An executor that never got the job, a failed batch undone, a handler that did not run.
  EXPECT_TRUE(*store.Release("e1", "org-a", ReleaseMode::kDelete));
  EXPECT_TRUE(*store.ReleaseMany({&e2})[0]);
  EXPECT_TRUE(store.ReleaseUnrun({{"e3", "org-a", 0}})[0]->released);
  EXPECT_EQ(Reserved(), 0);
  EXPECT_EQ(Spent(), 10);
  // Released once: again changes nothing.
  EXPECT_FALSE(*store.Release("e1", "org-a", ReleaseMode::kDelete));
  EXPECT_EQ(Reserved(), 0);
  EXPECT_EQ(VerdictOf(store, GrantHoldOf("e4", 90, 100)), HoldVerdict::kHeld);
}

TEST_F(GrantBudgetTest, ALateChargeAfterTheReaperReleasedIsSpentOnce) {
  BalanceStore store = Store();
  ASSERT_TRUE(store.Load("org-a", 1000).ok());
  ASSERT_TRUE(store.LoadBudget(Grant(500), 0).ok());
  ASSERT_EQ(VerdictOf(store, GrantHoldOf("e1", 100, 500)), HoldVerdict::kHeld);
  EXPECT_TRUE(*store.Release("e1", "org-a", ReleaseMode::kKeepTombstone));
  EXPECT_EQ(Reserved(), 0);
  auto tombstone = store.GetHold("e1");
  ASSERT_TRUE(tombstone.ok() && tombstone->has_value());
  ASSERT_EQ((*tombstone)->budgets.size(), 1u);
  EXPECT_EQ((*tombstone)->budgets[0].id, kGrant);

  EXPECT_TRUE(*store.Settle({"e1", "org-a", "org-a", 40, 0}));
  EXPECT_FALSE(*store.Settle({"e1", "org-a", "org-a", 40, 0}));
  EXPECT_EQ(Spent(), 40);
  EXPECT_EQ(Reserved(), 0);  // released already: not taken twice
  EXPECT_EQ(Int("tg:bal:org-a"), 960);
}

TEST_F(GrantBudgetTest, AGrantWithoutACapIsCountedAllTheSame) {
  BalanceStore store = Store();
  const int64_t big = (int64_t{1} << 53) + 1;
  ASSERT_TRUE(store.Load("org-a", 4 * big).ok());
  ASSERT_TRUE(store.LoadBudget(Grant(0), 0).ok());
  ASSERT_EQ(VerdictOf(store, GrantHoldOf("e1", big, 0)), HoldVerdict::kHeld);
  ASSERT_EQ(VerdictOf(store, GrantHoldOf("e2", big, 0)), HoldVerdict::kHeld);
  EXPECT_EQ(BudgetField("reserved"), std::to_string(2 * big));
  ASSERT_TRUE(*store.Settle({"e1", "org-a", "org-a", big, 0}));
  ASSERT_TRUE(*store.Settle({"e2", "org-a", "org-a", big - 2, 0}));
  EXPECT_EQ(BudgetField("spent"), std::to_string(2 * big - 2));
  EXPECT_EQ(BudgetField("reserved"), "0");
  // A cap set now counts what the grant spent before it.
  auto capped = store.Hold(GrantHoldOf("e3", 3, 2 * big));
  ASSERT_TRUE(capped.ok());
  EXPECT_EQ(capped->verdict, HoldVerdict::kBudgetExceeded);
  EXPECT_EQ(capped->budget_used_micro_usd, 2 * big - 2);
  EXPECT_EQ(VerdictOf(store, GrantHoldOf("e3", 2, 2 * big)), HoldVerdict::kHeld);
}

TEST_F(GrantBudgetTest, CapsStayExactBeyondDoublePrecision) {
  BalanceStore store = Store();
  const int64_t big = (int64_t{1} << 53) + 1;  // not representable as a double
  ASSERT_TRUE(store.Load("org-a", 4 * big).ok());
  ASSERT_TRUE(store.LoadBudget(Grant(2 * big), big - 1).ok());
  // big - 1 spent and big + 1 held reach the cap exactly; one more micro-USD does not fit.
  ASSERT_EQ(VerdictOf(store, GrantHoldOf("e1", big + 1, 2 * big)), HoldVerdict::kHeld);
  auto over = store.Hold(GrantHoldOf("e2", 1, 2 * big));
  ASSERT_TRUE(over.ok());
  EXPECT_EQ(over->verdict, HoldVerdict::kBudgetExceeded);
  EXPECT_EQ(over->budget_used_micro_usd, 2 * big);
  EXPECT_EQ(BudgetField("reserved"), std::to_string(big + 1));
}

TEST_F(GrantBudgetTest, ABatchCountsEachHoldAgainstWhatTheOnesBeforeItReserved) {
  BalanceStore store = Store();
  ASSERT_TRUE(store.Load("org-a", 1000).ok());
  ASSERT_TRUE(store.LoadBudget(Grant(100), 0).ok());
  std::vector<HoldRecord> holds;
  for (int i = 0; i < 12; ++i) holds.push_back(GrantHoldOf("e" + std::to_string(i), 9, 100));
  int held = 0;
  for (const auto& o : store.HoldMany(holds)) held += o->verdict == HoldVerdict::kHeld;
  EXPECT_EQ(held, 11);
  EXPECT_EQ(Reserved(), 99);
  std::vector<SettleStep> steps;
  for (int i = 0; i < 11; ++i) steps.push_back({"e" + std::to_string(i), "org-a", "org-a", i, 0});
  for (const auto& c : store.SettleMany(steps)) ASSERT_TRUE(c.ok() && *c);
  EXPECT_EQ(Spent(), 55);
  EXPECT_EQ(Reserved(), 0);
}

TEST_F(GrantBudgetTest, ABudgetRepairIsACompareAndSet) {
  BalanceStore store = Store();
  ASSERT_TRUE(store.LoadBudget(Grant(0), 10).ok());
  EXPECT_FALSE(*store.RepairBudget(Grant(0), 11, 99));
  EXPECT_EQ(Spent(), 10);
  EXPECT_TRUE(*store.RepairBudget(Grant(0), 10, 99));
  EXPECT_EQ(Spent(), 99);
  auto absent = store.ReadBudget(
      Budget{BudgetKind::kGrant, "0b9d7c1e-8f3a-4e55-9d2a-6c1b2e3f4a5b", 0, {}, {}});
  ASSERT_TRUE(absent.ok());
  EXPECT_FALSE(absent->spent_micro_usd.has_value());
}

// Spending limits: a key's and an organization's budgets for one UTC day or month
// (tg:budget:key:<id>:d:<day>, tg:budget:org:<org>:m:<month>). The caller's clock names the
// period, so these tests drive the day by the time they pass.
class PeriodBudgetTest : public BalanceStoreTest {
 protected:
  // 2026-12-01T10:00:00Z.
  static constexpr int64_t kDec1 = 1'796'119'200'000;
  static constexpr int64_t kDayMs = 24 * 3600 * 1000LL;

  static CallBudgetSettings KeyDaily(int64_t cap) {
    CallBudgetSettings s;
    s.key = BudgetSettings{cap, std::nullopt};
    return s;
  }
  static CallBudgetSettings OrgDaily(int64_t cap) {
    CallBudgetSettings s;
    s.org = BudgetSettings{cap, std::nullopt};
    return s;
  }

  // A hold as the invoke stage builds it at now_ms for these settings.
  HoldRecord LimitedHoldOf(const std::string& execution_id, int64_t amount,
                           const CallBudgetSettings& settings, int64_t now_ms,
                           const std::string& key_id = "key-1") {
    HoldRecord h = HoldOf(execution_id, amount, "org-a", key_id);
    h.budgets = PeriodBudgetsFor(settings, "org-a", key_id, now_ms);
    return h;
  }

  // Loads every budget of the hold that is not loaded, with nothing spent.
  void LoadAll(BalanceStore& store, const HoldRecord& hold) {
    for (const Budget& b : hold.budgets) ASSERT_TRUE(store.LoadBudget(b, 0).ok());
  }

  std::string Field(const std::string& key, const std::string& field) {
    auto r = client_->Command({"HGET", key, field});
    EXPECT_TRUE(r.ok());
    return r.ok() && r->type == redis::Reply::Type::kString ? r->str : "";
  }

  // 60 calls at once against a budget that covers 25: exactly 25 are held.
  void ExpectExactly25Of60(const CallBudgetSettings& settings, int64_t amount,
                           const std::string& capped_key, bool many_keys) {
    constexpr int kThreads = 60;
    BalanceStore store = Store();
    ASSERT_TRUE(store.Load("org-a", 1000 * amount).ok());
    for (int i = 0; i < kThreads; ++i) {
      LoadAll(store, LimitedHoldOf("load", amount, settings, kDec1,
                                   many_keys ? "key-" + std::to_string(i) : "key-1"));
    }
    std::atomic<int> held{0}, refused{0};
    std::atomic<bool> go{false};
    std::vector<std::thread> threads;
    for (int i = 0; i < kThreads; ++i) {
      threads.emplace_back([&, i] {
        while (!go.load()) std::this_thread::yield();
        auto outcome = store.Hold(LimitedHoldOf("e" + std::to_string(i), amount, settings, kDec1,
                                                many_keys ? "key-" + std::to_string(i) : "key-1"));
        if (!outcome.ok()) return;
        if (outcome->verdict == HoldVerdict::kHeld) ++held;
        if (outcome->verdict == HoldVerdict::kBudgetExceeded) ++refused;
      });
    }
    go = true;
    for (auto& t : threads) t.join();
    EXPECT_EQ(held.load(), 25);
    EXPECT_EQ(refused.load(), 35);
    EXPECT_EQ(Field(capped_key, "reserved"), std::to_string(25 * amount));
    EXPECT_EQ(Int("tg:res:org-a"), 25 * amount);
    EXPECT_EQ(Int("tg:conc:org-a"), 25);
  }
};

TEST(BudgetPeriodTest, DaysAndMonthsAreUtcCalendarPeriods) {
  BudgetPeriod day = PeriodAt(PeriodUnit::kDay, 1'796'119'200'000);  // 2026-12-01T10:00Z
  EXPECT_EQ(day.name, "2026-12-01");
  EXPECT_EQ(day.start_ms, 1'796'083'200'000);
  EXPECT_EQ(day.end_ms - day.start_ms, 24 * 3600 * 1000LL);
  BudgetPeriod month = PeriodAt(PeriodUnit::kMonth, 1'796'119'200'000);
  EXPECT_EQ(month.name, "2026-12");
  EXPECT_EQ(month.start_ms, day.start_ms);
  EXPECT_EQ(PeriodAt(PeriodUnit::kMonth, month.end_ms).name, "2027-01");
  EXPECT_EQ(PeriodAt(PeriodUnit::kDay, month.end_ms - 1).name, "2026-12-31");
  // February of a leap year has 29 days.
  BudgetPeriod feb = *ParsePeriod(PeriodUnit::kMonth, "2028-02");
  EXPECT_EQ(PeriodAt(PeriodUnit::kDay, feb.end_ms - 1).name, "2028-02-29");
  EXPECT_EQ(ParsePeriod(PeriodUnit::kDay, "2026-12-01")->start_ms, day.start_ms);
  EXPECT_FALSE(ParsePeriod(PeriodUnit::kDay, "2026-02-30"));
  EXPECT_FALSE(ParsePeriod(PeriodUnit::kDay, "2026-12"));
  EXPECT_FALSE(ParsePeriod(PeriodUnit::kMonth, "2026-13"));
  EXPECT_FALSE(ParsePeriod(PeriodUnit::kMonth, "20x6-12"));
}

TEST_F(PeriodBudgetTest, KeysNameTheirPeriodAndExpireAfterIt) {
  CallBudgetSettings settings;
  settings.key = BudgetSettings{100, 1000};
  settings.org = BudgetSettings{std::nullopt, 5000};
  std::vector<Budget> budgets = PeriodBudgetsFor(settings, "org-a", "key-1", kDec1);
  ASSERT_EQ(budgets.size(), 4u);
  EXPECT_EQ(BudgetKey(budgets[0]), "tg:budget:key:key-1:d:2026-12-01");
  EXPECT_EQ(budgets[0].cap_micro_usd, 100);
  EXPECT_EQ(BudgetKey(budgets[1]), "tg:budget:key:key-1:m:2026-12");
  EXPECT_EQ(budgets[1].cap_micro_usd, 1000);
  EXPECT_EQ(BudgetKey(budgets[2]), "tg:budget:org:org-a:d:2026-12-01");
  EXPECT_EQ(budgets[2].cap_micro_usd, 0);  // counted, not capped
  EXPECT_EQ(BudgetKey(budgets[3]), "tg:budget:org:org-a:m:2026-12");
  // A session (no key) has its organization's limits only; no settings, no budgets.
  EXPECT_EQ(PeriodBudgetsFor(settings, "org-a", "", kDec1).size(), 2u);
  EXPECT_TRUE(PeriodBudgetsFor(CallBudgetSettings{}, "org-a", "key-1", kDec1).empty());

  BalanceStore store = Store();
  ASSERT_TRUE(store.Load("org-a", 10'000).ok());
  for (const Budget& b : budgets) ASSERT_TRUE(*store.LoadBudget(b, 7));
  auto expires = client_->Command({"PEXPIRETIME", BudgetKey(budgets[0])});
  ASSERT_TRUE(expires.ok());
  EXPECT_EQ(expires->integer, budgets[0].period->end_ms + kPeriodBudgetGraceMs);
  expires = client_->Command({"PEXPIRETIME", BudgetKey(budgets[3])});
  EXPECT_EQ(expires->integer, budgets[3].period->end_ms + kPeriodBudgetGraceMs);

  // The hold lists its budgets, and reads them back with their periods.
  HoldRecord hold = HoldOf("e1", 50);
  hold.budgets = budgets;
  EXPECT_EQ(VerdictOf(store, hold), HoldVerdict::kHeld);
  auto back = store.GetHold("e1");
  ASSERT_TRUE(back.ok() && back->has_value());
  ASSERT_EQ((*back)->budgets.size(), 4u);
  for (size_t i = 0; i < budgets.size(); ++i) {
    EXPECT_EQ(BudgetKey((*back)->budgets[i]), BudgetKey(budgets[i]));
  }
  EXPECT_EQ((*back)->budgets[0].org_id, "org-a");
}

TEST_F(PeriodBudgetTest, AKeysDailyLimitRefusesTheCallThatWouldPassItAndChargesNothing) {
  BalanceStore store = Store();
  ASSERT_TRUE(store.Load("org-a", 10'000).ok());
  HoldRecord first = LimitedHoldOf("e1", 60, KeyDaily(100), kDec1);
  EXPECT_EQ(VerdictOf(store, first), HoldVerdict::kBudgetNotLoaded);
  LoadAll(store, first);
  EXPECT_EQ(VerdictOf(store, first), HoldVerdict::kHeld);
  auto outcome = store.Hold(LimitedHoldOf("e2", 41, KeyDaily(100), kDec1));
  ASSERT_TRUE(outcome.ok());
  EXPECT_EQ(outcome->verdict, HoldVerdict::kBudgetExceeded);
  EXPECT_EQ(outcome->budget, 0u);
  EXPECT_EQ(outcome->budget_used_micro_usd, 60);
  EXPECT_EQ(Int("tg:res:org-a"), 60);
  // Another key of the organization has budgets of its own.
  HoldRecord other = LimitedHoldOf("e3", 41, KeyDaily(100), kDec1, "key-2");
  LoadAll(store, other);
  EXPECT_EQ(VerdictOf(store, other), HoldVerdict::kHeld);
  // Capture: spent moves by the charge, the hold leaves reserved.
  ASSERT_TRUE(*store.Settle({"e1", "org-a", "org-b", 55, 0}));
  EXPECT_EQ(Field("tg:budget:key:key-1:d:2026-12-01", "spent"), "55");
  EXPECT_EQ(Field("tg:budget:key:key-1:d:2026-12-01", "reserved"), "0");
  EXPECT_EQ(Field("tg:budget:key:key-1:m:2026-12", "spent"), "55");
  EXPECT_EQ(VerdictOf(store, LimitedHoldOf("e4", 45, KeyDaily(100), kDec1)), HoldVerdict::kHeld);
  EXPECT_EQ(VerdictOf(store, LimitedHoldOf("e5", 1, KeyDaily(100), kDec1)),
            HoldVerdict::kBudgetExceeded);
  // A release returns the reservation.
  ASSERT_TRUE(*store.Release("e4", "org-a", ReleaseMode::kDelete));
  EXPECT_EQ(VerdictOf(store, LimitedHoldOf("e6", 45, KeyDaily(100), kDec1)), HoldVerdict::kHeld);
}

TEST_F(PeriodBudgetTest, ConcurrentHoldsNeverPassAKeysDailyLimit) {
  constexpr int64_t kAmount = 1'000'000'007;
  ExpectExactly25Of60(KeyDaily(26 * kAmount - 1), kAmount, "tg:budget:key:key-1:d:2026-12-01",
                      /*many_keys=*/false);
}

TEST_F(PeriodBudgetTest, ConcurrentHoldsThroughManyKeysNeverPassTheOrganizationsDailyLimit) {
  constexpr int64_t kAmount = 1'000'000'007;
  ExpectExactly25Of60(OrgDaily(26 * kAmount - 1), kAmount, "tg:budget:org:org-a:d:2026-12-01",
                      /*many_keys=*/true);
}

TEST_F(PeriodBudgetTest, ANewDayIsANewBudgetAndLateChargesCountInTheirOwnDay) {
  BalanceStore store = Store();
  ASSERT_TRUE(store.Load("org-a", 10'000).ok());
  const int64_t last_ms = PeriodAt(PeriodUnit::kDay, kDec1).end_ms - 1;  // 23:59:59.999
  HoldRecord late = LimitedHoldOf("e1", 100, OrgDaily(100), last_ms);
  LoadAll(store, late);
  EXPECT_EQ(VerdictOf(store, late), HoldVerdict::kHeld);
  EXPECT_EQ(VerdictOf(store, LimitedHoldOf("e2", 1, OrgDaily(100), last_ms)),
            HoldVerdict::kBudgetExceeded);
  // Midnight UTC: the next call counts against 2026-12-02, which is loaded and takes it.
  HoldRecord next = LimitedHoldOf("e3", 100, OrgDaily(100), last_ms + 1);
  EXPECT_EQ(BudgetKey(next.budgets[0]), "tg:budget:org:org-a:d:2026-12-02");
  EXPECT_EQ(VerdictOf(store, next), HoldVerdict::kBudgetNotLoaded);
  LoadAll(store, next);
  EXPECT_EQ(VerdictOf(store, next), HoldVerdict::kHeld);
  // The hold from before midnight is captured after it: its own day's budget is charged.
  ASSERT_TRUE(*store.Settle({"e1", "org-a", "org-b", 90, 0}));
  EXPECT_EQ(Field("tg:budget:org:org-a:d:2026-12-01", "spent"), "90");
  EXPECT_EQ(Field("tg:budget:org:org-a:d:2026-12-02", "spent"), "0");
  EXPECT_EQ(Field("tg:budget:org:org-a:d:2026-12-02", "reserved"), "100");
  // Both days are in December: the month counts both.
  EXPECT_EQ(Field("tg:budget:org:org-a:m:2026-12", "spent"), "90");
  EXPECT_EQ(Field("tg:budget:org:org-a:m:2026-12", "reserved"), "100");
}

TEST_F(PeriodBudgetTest, AMonthlyLimitRollsOverOnTheFirstOfTheMonth) {
  BalanceStore store = Store();
  ASSERT_TRUE(store.Load("org-a", 10'000).ok());
  CallBudgetSettings monthly;
  monthly.key = BudgetSettings{std::nullopt, 100};
  const int64_t new_year = PeriodAt(PeriodUnit::kMonth, kDec1).end_ms;
  HoldRecord dec = LimitedHoldOf("e1", 100, monthly, new_year - 1);
  LoadAll(store, dec);
  EXPECT_EQ(VerdictOf(store, dec), HoldVerdict::kHeld);
  HoldRecord still_dec = LimitedHoldOf("e2", 1, monthly, new_year - 1);
  EXPECT_EQ(VerdictOf(store, still_dec), HoldVerdict::kBudgetExceeded);
  HoldRecord jan = LimitedHoldOf("e3", 100, monthly, new_year);
  EXPECT_EQ(BudgetKey(jan.budgets[1]), "tg:budget:key:key-1:m:2027-01");
  LoadAll(store, jan);
  EXPECT_EQ(VerdictOf(store, jan), HoldVerdict::kHeld);
}
}  // namespace
}  // namespace toolgate::billing

namespace toolgate::billing {
namespace {

// Asynchronous calls (async_queue.h): a queued hold counts against the organization's queue,
// not its concurrency limit, until Start moves it in flight under that limit.
TEST_F(BalanceStoreTest, QueuedHoldsWaitForTheConcurrencyLimitAndTheQueueIsBounded) {
  limits_.concurrency_per_org = 1;
  limits_.queued_per_org = 2;
  BalanceStore store = Store();
  ASSERT_TRUE(store.Load("org-a", 1000).ok());
  ASSERT_EQ(VerdictOf(store, HoldOf("sync", 10)), HoldVerdict::kHeld);  // the one slot
  EXPECT_EQ(VerdictOf(store, HoldOf("sync2", 10)), HoldVerdict::kConcurrencyLimit);
  for (const char* id : {"q1", "q2"}) {
    HoldRecord queued = HoldOf(id, 10);
    queued.queued = true;
    EXPECT_EQ(VerdictOf(store, queued), HoldVerdict::kHeld) << id;
  }
  HoldRecord third = HoldOf("q3", 10);
  third.queued = true;
  EXPECT_EQ(VerdictOf(store, third), HoldVerdict::kQueueFull);
  EXPECT_EQ(Int("tg:conc:org-a"), 1);
  EXPECT_EQ(Int("tg:queued:org-a"), 2);
  EXPECT_EQ(Int("tg:res:org-a"), 30);  // a queued hold reserves its amount all the same

  // The slot is taken: q1 waits; once it is free, q1 starts and q2 then waits for it.
  EXPECT_EQ(*store.Start("q1", "org-a", 99'000), StartVerdict::kWait);
  ASSERT_TRUE(*store.Release("sync", "org-a", ReleaseMode::kDelete));
  EXPECT_EQ(*store.Start("q1", "org-a", 99'000), StartVerdict::kStarted);
  EXPECT_EQ(*store.Start("q1", "org-a", 99'000), StartVerdict::kStartedBefore);
  EXPECT_EQ(*store.Start("q2", "org-a", 99'000), StartVerdict::kWait);
  EXPECT_EQ(Int("tg:conc:org-a"), 1);
  EXPECT_EQ(Int("tg:queued:org-a"), 1);
  // Its due time is the one Start gave it.
  auto due = client_->Command({"ZSCORE", "tg:holds", "q1"});
  ASSERT_TRUE(due.ok());
  EXPECT_EQ(due->str, "99000");

  // Put back (no executor took it), it waits again; started again, it goes on.
  EXPECT_TRUE(*store.Unstart("q1", "org-a"));
  EXPECT_FALSE(*store.Unstart("q1", "org-a"));
  EXPECT_EQ(Int("tg:conc:org-a"), 0);
  EXPECT_EQ(Int("tg:queued:org-a"), 2);

  // A queued hold released (cancelled) leaves the queue, not the count in flight; starting it
  // then finds it gone.
  ASSERT_TRUE(*store.Release("q2", "org-a", ReleaseMode::kDelete));
  EXPECT_EQ(Int("tg:queued:org-a"), 1);
  EXPECT_EQ(Int("tg:conc:org-a"), 0);
  EXPECT_EQ(*store.Start("q2", "org-a", 99'000), StartVerdict::kGone);
  EXPECT_EQ(Int("tg:res:org-a"), 10);
}

}  // namespace
}  // namespace toolgate::billing
