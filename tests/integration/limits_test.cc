// Row 7 of the invocation table: per-key rate, per-organization concurrency and the allowance
// of uncharged timeouts, on a system started with small limits; the edge's chain deadline,
// shortened so that a call can outlast it; how deeply an event may nest; and the limits of the
// syntax checks run at publish.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "system.h"
#include "toolgate/base/json_writer.h"
#include "toolgate/base/time.h"

namespace toolgate::testing {
namespace {

const auto* const kEnv = ::testing::AddGlobalTestEnvironment(
    new SharedSystem({"--rate-limit-per-key", "3", "--rate-limit-burst", "3",
                      "--concurrency-per-org", "1", "--uncharged-timeout-s-per-hour", "3"},
                     {"TOOLGATE_CHAIN_TIMEOUT_MS=1500", "TOOLGATE_DISPATCH_NOTICE_MS=200"}));

// An expiry close enough (within 14 days) for X-Api-Key-Expires-At to flag it on every answer.
std::string SoonExpiry() {
  return FormatRfc3339(NowMs() + 3LL * 24 * 3600 * 1000);
}

TEST(LimitsTest, RateLimitPerKey) {
  Account acct(*g_system, "Rate");
  acct.TopUp(1'000'000);
  const std::string expires = SoonExpiry();
  std::string key = acct.CreateKey(R"(["invoke"])", expires);
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
  EXPECT_EQ(last.Header("x-api-key-expires-at"), expires);
  // The limit is per key: another key of the same organization is not limited.
  EXPECT_EQ(Invoke(*g_system, other_key, fn, "1", R"({"event": {}})").status, 200);
}

TEST(LimitsTest, ConcurrencyPerOrganization) {
  Account acct(*g_system, "Concurrency");
  acct.TopUp(1'000'000);
  std::string key = acct.CreateKey();
  const std::string expires = SoonExpiry();
  std::string second_key = acct.CreateKey(R"(["invoke"])", expires);
  std::string fn = acct.CreateFunction("slow");
  // Spins until told to stop by the deadline; 408 ends it.
  ASSERT_EQ(acct.PublishLua(fn, "1", "function service_handler(e, c) while true do end end",
                            R"("timeout_ms":3000)")
                .status,
            201);
  std::thread slow([&] { Invoke(*g_system, key, fn, "1", R"({"event": {}})"); });
  // The first call holds funds while it runs: wait for that, not for a time.
  int64_t balance = acct.Balance();
  EXPECT_TRUE(WaitUntil([&] { return acct.Available() != balance; }, 10000,
                        "the first call to hold funds", 0));
  auto r = Invoke(*g_system, second_key, fn, "1", R"({"event": {}})");
  EXPECT_EQ(r.status, 429);
  EXPECT_EQ(StringField(r.body, "code"), "concurrency_limit");
  EXPECT_FALSE(r.Header("retry-after").empty());
  EXPECT_EQ(r.Header("x-api-key-expires-at"), expires);
  slow.join();
  EXPECT_EQ(acct.Balance(), balance);  // 408 and 429: nothing charged
}

// The sum of every sample of `name` (its series of any labels) in service's /metrics; -1 when
// unreadable.
double MetricSum(const std::string& service, const std::string& name) {
  auto state = Json(g_system->State());
  std::string_view url;
  if (state.root["admin"][service].get_string().get(url) != simdjson::SUCCESS) return -1;
  http::HttpClient client{std::string(url)};
  auto r = client.Get("/metrics");
  if (!r.ok() || r->status != 200) return -1;
  std::istringstream in(r->body);
  double sum = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(name, 0) == 0) sum += std::stod(line.substr(line.rfind(' ') + 1));
  }
  return sum;
}

// Whether a line of the service's log holds both texts, waiting up to 10 s for its writer.
::testing::AssertionResult LogShows(const std::string& service, const std::string& text,
                                    const std::string& and_text) {
  auto shown = [&] {
    std::ifstream in(g_system->data_dir() + "/logs/" + service + ".log");
    for (std::string line; std::getline(in, line);) {
      if (line.find(text) != std::string::npos && line.find(and_text) != std::string::npos) {
        return true;
      }
    }
    return false;
  };
  return WaitUntil(shown, 10'000, service + ".log to show \"" + text + "\" with " + and_text);
}

// A call that runs past its timeout is not charged (408), so an organization could call its own
// tool that spins until it is killed for free sandbox time, over and over. Its calls' timeouts
// spend an allowance (3 sandbox seconds an hour here); once that is spent, its calls are refused
// with Retry-After. Calls that finish are charged and spend none of it; another organization
// has its own.
TEST(LimitsTest, SpinningTimeoutsPastTheHourlyAllowanceAreRefused) {
  Account acct(*g_system, "Spinner");
  acct.TopUp(10'000'000);
  std::string key = acct.CreateKey();
  std::string spin = acct.CreateFunction("spin");
  ASSERT_EQ(acct.PublishLua(spin, "1", "function service_handler(e, c) while true do end end",
                            R"("timeout_ms":500)")
                .status,
            201);
  std::string busy = acct.CreateFunction("busy");
  ASSERT_EQ(acct.PublishLua(busy, "1", R"(function service_handler(e, c)
  local start = os.clock()
  while os.clock() - start < 0.4 do end
  return {done = true}
end)",
                            R"("timeout_ms":5000)")
                .status,
            201);

  // Eight calls that run 0.4 s each and finish: 3.2 s of sandbox time, all of it charged, none
  // of it spent from the allowance. (At most 3 calls a second here: each waits for the last.)
  int64_t balance = acct.Balance();
  for (int i = 0; i < 8; ++i) {
    auto r = Invoke(*g_system, key, busy, "1", R"({"event": {}})");
    ASSERT_EQ(r.status, 200) << r.body;
  }
  EXPECT_LT(acct.Balance(), balance);

  // Timeouts of 0.5 s until the allowance is spent: six of them (a seventh when the executor
  // measured one a little short), each uncharged; then the organization is refused.
  balance = acct.Balance();
  int timeouts = 0;
  http::HttpResponse refused;
  while (refused.status == 0 && timeouts <= 8) {
    auto r = Invoke(*g_system, key, spin, "1", R"({"event": {}})");
    if (r.status == 408) {
      EXPECT_EQ(StringField(r.body, "code"), "timeout");
      ++timeouts;
    } else {
      ASSERT_EQ(r.status, 429) << r.body;
      refused = r;
    }
  }
  ASSERT_EQ(refused.status, 429) << "never refused after " << timeouts << " timeouts";
  EXPECT_GE(timeouts, 6);
  EXPECT_LE(timeouts, 7);
  EXPECT_EQ(refused.Header("content-type"), "application/problem+json");
  EXPECT_EQ(StringField(refused.body, "code"), "timeout_budget_exhausted");
  // Until the allowance has refilled past what was spent: 3 s an hour refill 1 ms per 1.2 s.
  const std::string retry_after = refused.Header("retry-after");
  ASSERT_FALSE(retry_after.empty());
  EXPECT_GT(std::stoll(retry_after), 0);
  EXPECT_LE(std::stoll(retry_after), 3600);
  // Every call of the organization is refused, not only the spinning tool's, and none is held or
  // charged.
  auto other_tool = Invoke(*g_system, key, busy, "1", R"({"event": {}})");
  EXPECT_EQ(other_tool.status, 429) << other_tool.body;
  EXPECT_EQ(StringField(other_tool.body, "code"), "timeout_budget_exhausted");
  EXPECT_EQ(acct.Balance(), balance);
  EXPECT_EQ(acct.Available(), balance);
  // The operator sees it: the refusals counted, the time given away, and one log line.
  EXPECT_GE(
      MetricSum("billing", R"(toolgate_billing_holds_total{outcome="timeout_budget_exhausted"})"),
      2);
  EXPECT_GE(MetricSum("billing", "toolgate_billing_uncharged_timeout_ms_total"), 3000);
  EXPECT_TRUE(LogShows("billing", "spent its allowance of uncharged timeouts", acct.org_id()));

  // Another organization's allowance is its own.
  Account other(*g_system, "Not Spinning");
  other.TopUp(1'000'000);
  std::string other_key = other.CreateKey();
  std::string other_spin = other.CreateFunction("spin");
  ASSERT_EQ(other
                .PublishLua(other_spin, "1", "function service_handler(e, c) while true do end end",
                            R"("timeout_ms":500)")
                .status,
            201);
  EXPECT_EQ(Invoke(*g_system, other_key, other_spin, "1", R"({"event": {}})").status, 408);
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

// {"event": E} with E nesting `levels` levels of objects.
std::string BodyWithEventDepth(int levels) {
  std::string event = "{}";
  for (int level = 1; level < levels; ++level) event = "{\"a\":" + event + "}";
  return "{\"event\": " + event + "}";
}

// An event deeper than the runtimes can decode is refused by the edge's parse of the body
// (400, nothing held or charged); one at the limit runs.
TEST(LimitsTest, EventNestedTooDeeplyIsRefusedAndNotCharged) {
  Account acct(*g_system, "Deep");
  acct.TopUp(1'000'000);
  std::string key = acct.CreateKey();
  std::string fn = acct.CreateFunction("echo");
  ASSERT_EQ(acct.PublishLua(fn, "1", "function service_handler(e, c) return e end").status, 201);
  int64_t balance = acct.Balance();

  auto refused = Invoke(*g_system, key, fn, "1", BodyWithEventDepth(1000));
  EXPECT_EQ(refused.status, 400) << refused.body;
  EXPECT_EQ(refused.Header("content-type"), "application/problem+json");
  EXPECT_EQ(StringField(refused.body, "code"), "invalid_event");
  EXPECT_NE(StringField(refused.body, "detail").find("deeper than 64 levels"), std::string::npos)
      << refused.body;
  EXPECT_EQ(acct.Balance(), balance);
  EXPECT_EQ(acct.Available(), balance);  // nothing held either
  for (const auto& entry : acct.Ledger()) EXPECT_NE(entry.at("type"), "charge");

  auto at_limit = Invoke(*g_system, key, fn, "1", BodyWithEventDepth(64));
  EXPECT_EQ(at_limit.status, 200) << at_limit.body;
}

TEST(LimitsTest, AnEventThatBreaksTheInputSchemaIsRefusedWithPointersAndNotCharged) {
  Account acct(*g_system, "Schema");
  acct.TopUp(1'000'000);
  std::string key = acct.CreateKey();
  std::string fn = acct.CreateFunction("weather");
  std::string schema = R"({"type":"object","required":["city"],"additionalProperties":false,)"
                       R"("properties":{"city":{"type":"string","minLength":2},)"
                       R"("days":{"type":"integer","minimum":1,"maximum":7}}})";
  auto published =
      acct.session().Post("/api/v1/functions/" + fn + "/versions",
                          R"({"version":"1","runtime":"lua","compute_type":"CPU","input_schema":)" +
                              schema + R"(,"code":"function service_handler(e, c) return e end"})");
  ASSERT_TRUE(published.ok() && published->status == 201) << published->body;
  int64_t balance = acct.Balance();

  auto refused = Invoke(*g_system, key, fn, "1", R"({"event":{"days":9,"units":"metric"}})");
  EXPECT_EQ(refused.status, 400) << refused.body;
  EXPECT_EQ(StringField(refused.body, "code"), "invalid_event");
  for (const char* part : {R"({"field":"/event/city","message":"is required"})",
                           R"({"field":"/event/days","message":"must be at most 7"})",
                           R"({"field":"/event/units","message":"is not an allowed property"})"}) {
    EXPECT_NE(refused.body.find(part), std::string::npos) << part << " in " << refused.body;
  }
  EXPECT_EQ(acct.Balance(), balance);
  EXPECT_EQ(acct.Available(), balance);
  for (const auto& entry : acct.Ledger()) EXPECT_NE(entry.at("type"), "charge");

  auto ok = Invoke(*g_system, key, fn, "1", R"({"event":{"city":"Oslo","days":3}})");
  EXPECT_EQ(ok.status, 200) << ok.body;

  // A schema Toolgate cannot check is refused at publish, naming where it is wrong.
  auto bad = acct.session().Post("/api/v1/functions/" + fn + "/versions",
                                 R"({"version":"2","runtime":"lua","compute_type":"CPU",)"
                                 R"("input_schema":{"properties":{"days":{"minimum":"one"}}},)"
                                 R"("code":"function service_handler(e, c) return e end"})");
  ASSERT_TRUE(bad.ok());
  EXPECT_EQ(bad->status, 422) << bad->body;
  EXPECT_NE(bad->body.find("/properties/days/minimum: must be a number"), std::string::npos)
      << bad->body;
}

// VmHWM (peak resident set) of a process, in KiB; -1 when unreadable.
int64_t PeakRssKib(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stoll(line.substr(6));
  }
  return -1;
}

std::string PythonVersionBody(const std::string& version, const std::string& code) {
  return R"({"version":")" + version +
         R"(","runtime":"python","compute_type":"CPU","input_schema":{"type":"object"},"code":)" +
         JsonWriter::Quote(code) + "}";
}

// Eight 1 MiB Python sources published at once, each needing far more than the check's memory
// limit (256 MB; CPython takes about 440 MB for 1 MiB of statements). Each publish is answered:
// 422 naming the limit, or 503 with Retry-After when every turn (two run, two wait) was taken.
// The registry's own memory stays bounded, since the checks run as its children, each capped.
// A 1 MiB source that parses cheaply is then published.
TEST(PublishLimitsTest, ConcurrentLargePythonPublishesStayBounded) {
  Account acct(*g_system, "Publishers");
  std::string key = acct.CreateKey(R"(["manage"])");
  std::string fn = acct.CreateFunction("big");
  std::string heavy, light;
  while (heavy.size() < (1 << 20) - 16) heavy += "x = 1\n";
  const std::string comment = "# " + std::string(1000, 'c') + "\n";
  while (light.size() + comment.size() < (1 << 20) - 64) light += comment;
  light += "def service_handler(event, context):\n    return event\n";

  const pid_t registry = g_system->Pid("registry");
  ASSERT_GT(registry, 0);
  std::vector<http::HttpResponse> answers(8);
  std::vector<std::thread> publishers;
  for (int i = 0; i < 8; ++i) {
    publishers.emplace_back([&, i] {
      auto client = g_system->Client();
      auto r = client->Post("/api/v1/functions/" + fn + "/versions",
                            PythonVersionBody("1.0." + std::to_string(i), heavy),
                            {{"Authorization", key}});
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      answers[i] = *r;
    });
  }
  for (auto& t : publishers) t.join();

  int refused_for_memory = 0;
  for (const auto& a : answers) {
    if (a.status == 503) {
      EXPECT_EQ(StringField(a.body, "code"), "service_unavailable");
      EXPECT_FALSE(a.Header("retry-after").empty());
      continue;
    }
    EXPECT_EQ(a.status, 422) << a.body;
    EXPECT_NE(a.body.find("the syntax check exceeded its memory limit of 256 MB"),
              std::string::npos)
        << a.body;
    ++refused_for_memory;
  }
  EXPECT_GE(refused_for_memory, 2);  // the two that had a turn at once, at least
  RecordProperty("refused_for_memory", std::to_string(refused_for_memory));
  // 1 MiB bodies, each held a few times over while it is parsed: tens of MB on top of the
  // registry's own, against the gigabytes of unconfined checks.
  const int64_t peak_kib = PeakRssKib(registry);
  ASSERT_GT(peak_kib, 0);
  RecordProperty("registry_peak_rss_kib", std::to_string(peak_kib));
  EXPECT_LT(peak_kib, 300 * 1024) << "registry peak RSS " << peak_kib << " KiB";

  auto light_publish =
      acct.session().Post("/api/v1/functions/" + fn + "/versions", PythonVersionBody("2.0", light));
  ASSERT_TRUE(light_publish.ok());
  EXPECT_EQ(light_publish->status, 201) << light_publish->body;
}

}  // namespace
}  // namespace toolgate::testing
