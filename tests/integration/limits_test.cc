// Row 7 of the invocation table: per-key rate and per-organization concurrency, on a system
// started with small limits; and the edge's chain deadline, shortened so that a call can outlast
// it.
#include <gtest/gtest.h>

#include <thread>

#include "system.h"

namespace toolgate::testing {
namespace {

const auto* const kEnv = ::testing::AddGlobalTestEnvironment(new SharedSystem(
    {"--rate-limit-per-key", "3", "--rate-limit-burst", "3", "--concurrency-per-org", "1"},
    {"TOOLGATE_CHAIN_TIMEOUT_MS=1500", "TOOLGATE_DISPATCH_NOTICE_MS=200"}));

TEST(LimitsTest, RateLimitPerKey) {
  Account acct(*g_system, "Rate");
  acct.TopUp(1'000'000);
  std::string key = acct.CreateKey();
  std::string other_key = acct.CreateKey();
  std::string fn = acct.CreateFunction("echo");
  ASSERT_EQ(acct.PublishLua(fn, "1", "function service_handler(e, c) return e end").status, 201);
  int limited = 0;
  http::HttpResponse last;
  for (int i = 0; i < 10; ++i) {
    auto r = Invoke(*g_system, key, fn, "1", R"({"event": {}})");
    if (r.status == 429) {
      ++limited;
      last = r;
    }
  }
  // A burst of 3 passes at most 3 + (refill during the loop) of 10 calls.
  EXPECT_GE(limited, 4);
  EXPECT_EQ(StringField(last.body, "code"), "rate_limited");
  EXPECT_FALSE(last.Header("retry-after").empty());
  // The limit is per key: another key of the same organization is not limited.
  EXPECT_EQ(Invoke(*g_system, other_key, fn, "1", R"({"event": {}})").status, 200);
}

TEST(LimitsTest, ConcurrencyPerOrganization) {
  Account acct(*g_system, "Concurrency");
  acct.TopUp(1'000'000);
  std::string key = acct.CreateKey();
  std::string second_key = acct.CreateKey();
  std::string fn = acct.CreateFunction("slow");
  // Spins until told to stop by the deadline; 408 ends it.
  ASSERT_EQ(acct.PublishLua(fn, "1", "function service_handler(e, c) while true do end end",
                            R"("timeout_ms":3000)")
                .status,
            201);
  std::thread slow([&] { Invoke(*g_system, key, fn, "1", R"({"event": {}})"); });
  // The first call holds funds while it runs: wait for that, not for a time.
  int64_t balance = acct.Balance();
  while (acct.Available() == balance) std::this_thread::yield();
  auto r = Invoke(*g_system, second_key, fn, "1", R"({"event": {}})");
  EXPECT_EQ(r.status, 429);
  EXPECT_EQ(StringField(r.body, "code"), "concurrency_limit");
  EXPECT_FALSE(r.Header("retry-after").empty());
  slow.join();
  EXPECT_EQ(acct.Balance(), balance);  // 408 and 429: nothing charged
}

// The edge waits only its chain deadline (1.5 s here) for a job to reach an executor; the
// executor's dispatch notice, sent once the job has run 200 ms, extends that wait to the
// version's timeout. Without the notice this call would be a 504 after 1.5 s.
TEST(LimitsTest, CallRunningPastTheChainDeadlineIsAnswered) {
  Account acct(*g_system, "Long");
  acct.TopUp(1'000'000);
  std::string key = acct.CreateKey();
  std::string fn = acct.CreateFunction("long");
  ASSERT_EQ(acct.PublishLua(fn, "1", R"(function service_handler(e, c)
  local start = os.clock()
  while os.clock() - start < 2.0 do end
  return {done = true}
end)",
                            R"("timeout_ms":20000)")
                .status,
            201);
  int64_t balance = acct.Balance();
  auto r = Invoke(*g_system, key, fn, "1", R"({"event": {}})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_NE(r.body.find(R"(\"done\":true)"), std::string::npos) << r.body;
  EXPECT_LT(acct.Balance(), balance);  // it ran, so it was charged
}

}  // namespace
}  // namespace toolgate::testing
