// Never lose a charge, never overdraw: kill Redis, or a service, in the middle of a load, and
// check that every answered call is in the ledger, the balance still equals the ledger, and an
// organization loaded past its balance across a killed Redis was charged no more than it had.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "system.h"
#include "toolgate/base/time.h"

namespace toolgate::testing {
namespace {

// Abandoned holds (a job lost with a killed stage) are released within seconds, not after
// the production grace of a minute.
const auto* const kEnv = ::testing::AddGlobalTestEnvironment(
    new SharedSystem({}, {"TOOLGATE_HOLD_GRACE_MS=1000", "TOOLGATE_REAPER_INTERVAL_MS=500"}));

constexpr const char* kEcho = "function service_handler(event, context) return event end";

// Runs `threads` loops of invocations until `stop`; records the execution id of every 200 and
// counts the answers by status.
class Load {
 public:
  Load(const std::string& key, const std::string& fn, int threads) {
    for (int i = 0; i < threads; ++i) {
      threads_.emplace_back([this, key, fn] {
        auto client = g_system->Client();
        client->SetTimeout(std::chrono::milliseconds(15000));
        while (!stop_) {
          auto r = client->Post("/api/v1/functions/" + fn + "/invoke", R"({"event": {}})",
                                {{"Authorization", key}});
          ++sent_;
          if (!r.ok()) continue;  // the edge itself never restarts here; a transport error is rare
          std::string id;
          if (r->status == 200) {
            auto doc = ParseJson(r->body);
            std::string_view view;
            if (doc.ok() && doc->root["summary"]["execution_id"].get(view) == simdjson::SUCCESS) {
              id = view;
            }
          }
          std::lock_guard<std::mutex> lock(mu_);
          if (!id.empty()) answered_.insert(id);
          ++by_status_[r->status];
          status_seen_.notify_all();
        }
      });
    }
  }
  // Waits until at least n more calls were sent: load is flowing.
  void WaitForCalls(int n) {
    int target = sent_ + n;
    EXPECT_TRUE(WaitUntil([&] { return sent_ >= target; }, 60000,
                          std::to_string(n) + " more calls to be sent", 0));
  }
  // Waits until n answers in all had this status; false when timeout_ms passed first.
  bool WaitForStatus(int status, int n, int timeout_ms) {
    std::unique_lock<std::mutex> lock(mu_);
    return status_seen_.wait_for(lock, std::chrono::milliseconds(timeout_ms),
                                 [&] { return by_status_[status] >= n; });
  }
  std::set<std::string> Stop() {
    stop_ = true;
    for (auto& t : threads_) t.join();
    return answered_;
  }

 private:
  std::atomic<bool> stop_{false};
  std::atomic<int> sent_{0};
  std::mutex mu_;
  std::condition_variable status_seen_;
  std::set<std::string> answered_;  // guarded by mu_
  std::map<int, int> by_status_;    // guarded by mu_
  std::vector<std::thread> threads_;
};

// Every answered execution is charged in the ledger, and once the load is over the balance
// equals the ledger and nothing stays reserved. Settlements that were interrupted finish in the
// background (retries, the reaper), so this waits for the books to settle, boundedly.
void ExpectEveryAnswerCharged(Account& account, const std::set<std::string>& answered) {
  std::set<std::string> charged;
  int64_t sum = 0;
  auto settled = [&] {
    charged.clear();
    sum = 0;
    for (auto& row : account.Ledger()) {
      sum += std::stoll(row["amount_micro_usd"]);
      if (row["type"] == "charge") charged.insert(row["execution_id"]);
    }
    int64_t balance = account.Balance();
    return balance == sum && account.Available() == balance;
  };
  EXPECT_TRUE(WaitUntil(settled, 30000, "the books to settle", 200));  // polling the books
  for (const auto& id : answered) EXPECT_TRUE(charged.count(id)) << "uncharged execution " << id;
  EXPECT_EQ(account.Balance(), sum);
  EXPECT_EQ(account.Available(), account.Balance());
}

// Runs redis-cli against the system's Redis (REDISCLI_AUTH, not -a: the password stays out of
// the process list); returns its output without the trailing newline, or fails the test.
std::string RedisCli(const std::string& args) {
  std::string url = g_system->State("redis_url");
  auto [rc, out] = RunCommand("REDISCLI_AUTH=$(cat " + g_system->data_dir() +
                              "/keys/redis.password) redis-cli -p " +
                              url.substr(url.rfind(':') + 1) + " " + args);
  EXPECT_EQ(rc, 0) << out;
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

// `toolgate-billing reconcile` against the system, with its credentials from the data directory
// (never on the command line); its exit status and output.
std::pair<int, std::string> Reconcile(const std::string& args) {
  auto state = Json(g_system->State());
  std::string keys = g_system->data_dir() + "/keys/";
  std::string env =
      "TOOLGATE_REDIS_URL=" + std::string(std::string_view(state.root["redis_url"])) +
      " TOOLGATE_POSTGRES_URL=" + std::string(std::string_view(state.root["postgres_url"])) +
      " TOOLGATE_NATS_URL=" + std::string(std::string_view(state.root["nats_url"])) +
      " TOOLGATE_REDIS_PASSWORD_FILE=" + keys + "redis.password" +
      " TOOLGATE_POSTGRES_PASSWORD_FILE=" + keys + "postgres.password";
  return RunCommand(env + " " + std::string(TOOLGATE_BIN_DIR) + "/toolgate-billing reconcile " +
                    args);
}

// After a fault the books still balance as a whole: every credit is in a balance, the
// platform's income or a payout (docs/operations.md, "The ledger identity"), and no
// balance in Redis differs from the ledger.
void ExpectTheLedgerIdentityHolds() {
  auto [rc, out] = Reconcile("--dry-run");
  EXPECT_EQ(rc, 0) << out;
  EXPECT_NE(out.find(R"("difference_micro_usd":0,"holds":true)"), std::string::npos) << out;
}

class ResilienceTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ResilienceTest, KillingAChildMidLoadLosesNoCharge) {
  const std::string victim = GetParam();
  Account acct(*g_system, "Resilient " + victim);
  acct.TopUp(50'000'000);
  std::string key = acct.CreateKey();
  std::string fn = acct.CreateFunction("echo");
  ASSERT_EQ(acct.PublishLua(fn, "1", kEcho, R"("timeout_ms":1000)").status, 201);

  Load load(key, fn, 4);
  load.WaitForCalls(50);
  pid_t old_pid = g_system->Pid(victim);
  g_system->Kill(victim, SIGKILL);
  ASSERT_TRUE(g_system->WaitRestarted(victim, old_pid, 60000)) << victim << " did not come back";
  load.WaitForCalls(50);
  std::set<std::string> answered = load.Stop();
  EXPECT_GT(answered.size(), 50u);
  ExpectEveryAnswerCharged(acct, answered);
  ExpectTheLedgerIdentityHolds();
}

// Concurrent calls never overdraw, even when Redis, which holds the balances and the holds, is
// killed with SIGKILL in the middle of them: an organization whose balance covers a bounded
// number of calls is loaded past it, Redis is killed and restarted on the same data, and the
// load goes on until billing refuses for want of money. Redis must come back with every hold
// and capture it acknowledged (AOF fsynced before each reply). One that came back without them
// would admit calls against money that calls still running have spent (their holds lost, and
// their captures then find no hold), so the ledger would go below zero and Redis's balance part
// from it. The handler runs a quarter of a second so that calls are running across the restart.
TEST(RedisKillTest, ConcurrentCallsNeverOverdrawAcrossAKilledRedis) {
  constexpr int64_t kPrice = 10'000;
  constexpr int64_t kAffordable = 40;  // calls the top-up covers
  Account owner(*g_system, "Durable publisher");
  Account caller(*g_system, "Durable caller");
  // At 128 MB a call under 480 ms costs the minimal compute charge of 1 µUSD on top of the fee
  // (a slower one costs more, and fewer calls are affordable).
  const int64_t top_up = kAffordable * (kPrice + 1);
  caller.TopUp(top_up);
  std::string key = caller.CreateKey();
  std::string fn = owner.CreateFunction(
      "priced spin", R"("visibility":"public","price_micro_usd":)" + std::to_string(kPrice));
  ASSERT_EQ(owner
                .PublishLua(fn, "1",
                            "function service_handler(event, context)\n"
                            "  local start = os.clock()\n"
                            "  while os.clock() - start < 0.25 do end\n"
                            "  return event\n"
                            "end",
                            R"("timeout_ms":3000)")
                .status,
            201);
  caller.AddToWorkspace(fn);

  Load load(key, fn, 6);
  load.WaitForCalls(static_cast<int>(kAffordable / 4));  // killed while money is left
  pid_t old_pid = g_system->Pid("redis");
  g_system->Kill("redis", SIGKILL);
  ASSERT_TRUE(g_system->WaitRestarted("redis", old_pid, 60000)) << "redis did not come back";
  // Spent: billing refuses for want of money, again and again.
  bool exhausted = load.WaitForStatus(402, 20, 60000);
  std::set<std::string> answered = load.Stop();
  EXPECT_TRUE(exhausted) << "the balance never ran out";
  ExpectEveryAnswerCharged(caller, answered);

  int64_t charged = 0, charges_micro_usd = 0, ledger_sum = 0;
  for (auto& row : caller.Ledger()) {
    int64_t amount = std::stoll(row["amount_micro_usd"]);
    ledger_sum += amount;
    if (row["type"] != "charge") continue;
    ++charged;
    charges_micro_usd -= amount;
    EXPECT_EQ(row["function_micro_usd"], std::to_string(kPrice));
    EXPECT_EQ(amount, -(kPrice + std::stoll(row["compute_micro_usd"])));
  }
  EXPECT_GE(ledger_sum, 0) << "overdrawn by " << -ledger_sum << " µUSD in " << charged << " calls";
  EXPECT_LE(charges_micro_usd, top_up);
  EXPECT_LE(charged, kAffordable);
  EXPECT_GE(charged, static_cast<int64_t>(answered.size()));
  EXPECT_EQ(ledger_sum, top_up - charges_micro_usd);
  EXPECT_EQ(caller.Balance(), ledger_sum);
  ExpectTheLedgerIdentityHolds();
  // Nothing reserved, read from Redis itself: no amount held, no call in flight, no live hold.
  const std::string& org = caller.org_id();
  for (const char* counter : {"tg:res:", "tg:conc:"}) {
    std::string value = RedisCli(std::string("GET ") + counter + org);
    EXPECT_TRUE(value.empty() || value == "0") << counter << org << " = " << value;
  }
  EXPECT_EQ(RedisCli("EVAL \"local n = 0 for _, k in ipairs(redis.call('KEYS', 'tg:hold:*')) do "
                     "if redis.call('HGET', k, 'org') == ARGV[1] and "
                     "redis.call('HGET', k, 'state') == 'held' then n = n + 1 end end "
                     "return n\" 0 " +
                     org),
            "0");
}

TEST(HealthTest, NamesTheServiceThatDoesNotAnswer) {
  auto client = g_system->Client();
  g_system->Kill("executor", SIGSTOP);
  http::HttpResponse r;
  for (int i = 0; i < 100; ++i) {  // each probe waits for the health timeout; no sleeping here
    auto answer = client->Get("/healthz");
    ASSERT_TRUE(answer.ok());
    r = *answer;
    if (r.status == 503) break;
  }
  g_system->Kill("executor", SIGCONT);
  EXPECT_EQ(r.status, 503);
  EXPECT_EQ(StringField(r.body, "status"), "unavailable");
  EXPECT_EQ(ToJson(Json(r.body).root["missing"]), R"(["executor"])");
  EXPECT_TRUE(g_system->WaitHealthy(30000));
}

TEST(ReconcileTest, RebuildsRedisFromTheLedgerAndReportsTheDifference) {
  Account acct(*g_system, "Reconciled");
  acct.TopUp(7000);
  ASSERT_EQ(acct.Balance(), 7000);
  // Corrupt the cached balance behind billing's back.
  ASSERT_EQ(RedisCli("SET tg:bal:" + acct.org_id() + " 123"), "OK");
  EXPECT_EQ(acct.Balance(), 123);

  auto dry = Reconcile("--dry-run");
  EXPECT_EQ(dry.first, 1) << dry.second;  // a difference was found and left alone
  EXPECT_NE(dry.second.find(acct.org_id()), std::string::npos) << dry.second;
  EXPECT_NE(dry.second.find("7000"), std::string::npos) << dry.second;
  EXPECT_EQ(acct.Balance(), 123);

  auto repair = Reconcile("");
  EXPECT_EQ(repair.first, 0) << repair.second;
  EXPECT_EQ(acct.Balance(), 7000);
  auto again = Reconcile("--dry-run");
  EXPECT_EQ(again.first, 0) << again.second;
}

INSTANTIATE_TEST_SUITE_P(Children, ResilienceTest,
                         ::testing::Values("redis", "billing", "auth", "registry", "secrets",
                                           "nats", "postgres"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace toolgate::testing
