// Never lose a charge: kill Redis, or a service, in the middle of a load, and check that every
// answered call is in the ledger and the balance still equals the ledger.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <atomic>
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

// Runs `threads` loops of invocations until `stop`; records the execution id of every 200.
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
          if (r->status == 200) {
            auto doc = ParseJson(r->body);
            std::string_view id;
            if (doc.ok() && doc->root["summary"]["execution_id"].get(id) == simdjson::SUCCESS) {
              std::lock_guard<std::mutex> lock(mu_);
              answered_.insert(std::string(id));
            }
          }
        }
      });
    }
  }
  // Waits until at least n more calls were sent: load is flowing.
  void WaitForCalls(int n) {
    int target = sent_ + n;
    while (sent_ < target) std::this_thread::yield();
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
  std::set<std::string> answered_;
  std::vector<std::thread> threads_;
};

// Every answered execution is charged in the ledger, and once the load is over the balance
// equals the ledger and nothing stays reserved. Settlements that were interrupted finish in the
// background (retries, the reaper), so this waits for the books to settle, boundedly.
void ExpectEveryAnswerCharged(Account& account, const std::set<std::string>& answered) {
  std::set<std::string> charged;
  int64_t sum = 0;
  int64_t deadline = NowMs() + 30000;
  for (;;) {
    charged.clear();
    sum = 0;
    for (auto& row : account.Ledger()) {
      sum += std::stoll(row["amount_micro_usd"]);
      if (row["type"] == "charge") charged.insert(row["execution_id"]);
    }
    int64_t balance = account.Balance();
    if ((balance == sum && account.Available() == balance) || NowMs() > deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));  // polling the books
  }
  for (const auto& id : answered) EXPECT_TRUE(charged.count(id)) << "uncharged execution " << id;
  EXPECT_EQ(account.Balance(), sum);
  EXPECT_EQ(account.Available(), account.Balance());
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

// Runs a command, returns its exit status and (merged) output.
std::pair<int, std::string> RunCommand(const std::string& command) {
  std::string out;
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  char buf[4096];
  while (pipe && fgets(buf, sizeof buf, pipe)) out += buf;
  int status = pipe ? ::pclose(pipe) : -1;
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

TEST(ReconcileTest, RebuildsRedisFromTheLedgerAndReportsTheDifference) {
  Account acct(*g_system, "Reconciled");
  acct.TopUp(7000);
  ASSERT_EQ(acct.Balance(), 7000);
  auto state = Json(g_system->State());
  std::string redis_url(std::string_view(state.root["redis_url"]));
  std::string keys = g_system->data_dir() + "/keys/";
  std::string env = "TOOLGATE_REDIS_URL=" + redis_url + " TOOLGATE_POSTGRES_URL=" +
                    std::string(std::string_view(state.root["postgres_url"])) +
                    " TOOLGATE_NATS_URL=" + std::string(std::string_view(state.root["nats_url"])) +
                    " TOOLGATE_REDIS_PASSWORD_FILE=" + keys + "redis.password" +
                    " TOOLGATE_POSTGRES_PASSWORD_FILE=" + keys + "postgres.password";
  std::string port = redis_url.substr(redis_url.rfind(':') + 1);
  // Corrupt the cached balance behind billing's back (REDISCLI_AUTH, not -a: the password stays
  // out of the process list).
  auto set = RunCommand("REDISCLI_AUTH=$(cat " + keys + "redis.password) redis-cli -p " + port +
                        " SET tg:bal:" + acct.org_id() + " 123");
  ASSERT_EQ(set.first, 0) << set.second;
  EXPECT_EQ(acct.Balance(), 123);

  std::string billing = std::string(TOOLGATE_BIN_DIR) + "/toolgate-billing";
  auto dry = RunCommand(env + " " + billing + " reconcile --dry-run");
  EXPECT_EQ(dry.first, 1) << dry.second;  // a difference was found and left alone
  EXPECT_NE(dry.second.find(acct.org_id()), std::string::npos) << dry.second;
  EXPECT_NE(dry.second.find("7000"), std::string::npos) << dry.second;
  EXPECT_EQ(acct.Balance(), 123);

  auto repair = RunCommand(env + " " + billing + " reconcile");
  EXPECT_EQ(repair.first, 0) << repair.second;
  EXPECT_EQ(acct.Balance(), 7000);
  auto again = RunCommand(env + " " + billing + " reconcile --dry-run");
  EXPECT_EQ(again.first, 0) << again.second;
}

INSTANTIATE_TEST_SUITE_P(Children, ResilienceTest,
                         ::testing::Values("redis", "billing", "auth", "registry", "secrets",
                                           "nats", "postgres"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace toolgate::testing
