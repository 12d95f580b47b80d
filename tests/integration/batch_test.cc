// One burst of concurrent calls in which jobs are refused at every stage of the invoke path (the
// edge's key and version decisions, the secrets stage, billing's limits and balance check, the
// executor's handler and timeout), mixed with calls that succeed. However the stages group the
// jobs into batches, each call gets the answer its own case demands, and the books show exactly
// one charge per charged call: none twice, none for a refusal or a timeout, nothing left held.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <iostream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "system.h"
#include "toolgate/base/crypto.h"

namespace toolgate::testing {
namespace {

// A per-key rate small enough for one key's share of the burst to overrun it, with a burst
// allowance larger than what any other key sends (each thread has keys of its own).
constexpr int kRateBurst = 6;
const auto* const kEnv = ::testing::AddGlobalTestEnvironment(new SharedSystem(
    {"--rate-limit-per-key", "1", "--rate-limit-burst", std::to_string(kRateBurst)}));

constexpr const char* kEcho = "function service_handler(event, context) return event end";
constexpr const char* kBoom = "function service_handler(event, context) error('boom') end";
constexpr const char* kLoop = "function service_handler(event, context) while true do end end";

constexpr int kThreads = 8;
constexpr int64_t kEchoFee = 999;
constexpr int64_t kBoomFee = 100;
constexpr int64_t kFunded = 10'000'000;
constexpr int64_t kPoorBalance = 500;  // below the echo tool's fee alone

// What a call is meant to meet, and so which answer it must get.
enum class Case {
  kUnknownKey,           // edge, key decision: 401 invalid_api_key
  kNoInvokeScope,        // edge, key decision: 403 insufficient_scope
  kUnknownFunction,      // edge, version decision: 404 function_not_found
  kInvalidBody,          // edge: 400 invalid_json
  kMissingEnvKeys,       // secrets stage: 400 missing_env_key
  kInsufficientBalance,  // billing: 402 insufficient_balance
  kRateLimited,          // billing: 200 while the key's allowance lasts, then 429 rate_limited
  kHandlerError,         // executor: 500 with a summary, charged
  kTimeout,              // executor: 408 timeout, not charged
  kSuccess,              // 200, charged fee + compute
};

const char* Name(Case c) {
  switch (c) {
    case Case::kUnknownKey:
      return "unknown key";
    case Case::kNoInvokeScope:
      return "no invoke scope";
    case Case::kUnknownFunction:
      return "unknown function";
    case Case::kInvalidBody:
      return "invalid body";
    case Case::kMissingEnvKeys:
      return "missing X-Env-Keys";
    case Case::kInsufficientBalance:
      return "insufficient balance";
    case Case::kRateLimited:
      return "rate limited key";
    case Case::kHandlerError:
      return "handler error";
    case Case::kTimeout:
      return "timeout";
    case Case::kSuccess:
      return "success";
  }
  return "?";
}

// Each thread's sequence of calls: every refusal once, the rate-limited key four times (32 calls
// on one key in all), one handler error, one timeout and eight successes spread over three
// calling organizations. Refusals and successes interleave so that batches mix them.
const std::vector<Case> kSequence = {
    Case::kSuccess,
    Case::kUnknownKey,
    Case::kRateLimited,
    Case::kSuccess,
    Case::kNoInvokeScope,
    Case::kHandlerError,
    Case::kRateLimited,
    Case::kSuccess,
    Case::kUnknownFunction,
    Case::kSuccess,
    Case::kTimeout,
    Case::kInvalidBody,
    Case::kRateLimited,
    Case::kSuccess,
    Case::kMissingEnvKeys,
    Case::kSuccess,
    Case::kInsufficientBalance,
    Case::kSuccess,
    Case::kRateLimited,
    Case::kSuccess,
};

struct Answer {
  Case what = Case::kSuccess;
  std::string org;  // the calling organization's id ("" when the key is unknown)
  int status = 0;
  std::string code;          // the problem code of a refusal
  std::string execution_id;  // of an answer with a summary
  int64_t total = 0, function = 0;
  std::string body;
};

// The value of the first sample of `name` in a Prometheus text exposition ("absent" if none).
std::string MetricSample(const std::string& service, const std::string& name) {
  auto state = Json(g_system->State());
  std::string_view url;
  if (state.root["admin"][service].get_string().get(url) != simdjson::SUCCESS) return "no admin";
  http::HttpClient client{std::string(url)};
  auto r = client.Get("/metrics");
  if (!r.ok() || r->status != 200) return "unreadable";
  std::istringstream in(r->body);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(name, 0) == 0) return line.substr(line.rfind(' ') + 1);
  }
  return "absent";
}

int64_t Amount(std::map<std::string, std::string>& row) {
  return std::stoll(row["amount_micro_usd"]);
}

TEST(BatchTest, EveryStageRefusesItsJobsAndTheRestAreChargedExactlyOnce) {
  // The tools' owner, three paying callers, one throttled caller, one nearly broke caller.
  Account owner(*g_system, "Batch Owner");
  std::vector<std::unique_ptr<Account>> callers;
  for (const char* name : {"Batch Caller A", "Batch Caller B", "Batch Caller C"}) {
    callers.push_back(std::make_unique<Account>(*g_system, name));
  }
  Account throttled(*g_system, "Batch Throttled");
  Account poor(*g_system, "Batch Poor");
  owner.TopUp(kFunded);
  for (auto& c : callers) c->TopUp(kFunded);
  throttled.TopUp(kFunded);
  poor.TopUp(kPoorBalance);

  std::string echo = owner.CreateFunction(
      "batch echo", R"("visibility":"public","price_micro_usd":)" + std::to_string(kEchoFee));
  ASSERT_EQ(owner.PublishLua(echo, "1", kEcho, R"("timeout_ms":5000)").status, 201);
  std::string boom = owner.CreateFunction(
      "batch boom", R"("visibility":"public","price_micro_usd":)" + std::to_string(kBoomFee));
  ASSERT_EQ(owner.PublishLua(boom, "1", kBoom, R"("timeout_ms":5000)").status, 201);
  std::string loop = owner.CreateFunction("batch loop", R"("visibility":"public")");
  ASSERT_EQ(owner.PublishLua(loop, "1", kLoop, R"("timeout_ms":150)").status, 201);
  std::string keyed = owner.CreateFunction("batch keyed", R"("visibility":"public")");
  ASSERT_EQ(
      owner.PublishLua(keyed, "1", kEcho, R"("timeout_ms":5000,"declared_keys":["API_TOKEN"])")
          .status,
      201);
  for (auto& c : callers) {
    for (const auto& fn : {echo, boom, loop, keyed}) c->AddToWorkspace(fn);
  }
  throttled.AddToWorkspace(echo);
  poor.AddToWorkspace(echo);

  // Keys: each thread its own per calling organization, so that only the throttled key (shared by
  // every thread) can reach the rate limit.
  struct ThreadKeys {
    std::vector<std::string> callers;
    std::string manage_only, poor;
  };
  std::vector<ThreadKeys> keys(kThreads);
  for (auto& k : keys) {
    for (auto& c : callers) k.callers.push_back(c->CreateKey());
    k.manage_only = callers[0]->CreateKey(R"(["manage"])");
    k.poor = poor.CreateKey();
  }
  const std::string throttled_key = throttled.CreateKey();
  if (HasFailure()) return;

  // The burst: every thread a keep-alive client, all started before any call is sent.
  std::mutex mu;
  std::vector<Answer> answers;
  std::vector<std::thread> threads;
  std::atomic<int> ready{0};
  // Bounds the time the throttled key's bucket can have refilled in (see below).
  const auto burst_start = std::chrono::steady_clock::now();
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      auto client = g_system->Client();
      client->SetTimeout(std::chrono::milliseconds(30000));
      std::vector<Answer> mine;
      ++ready;
      while (ready.load() < kThreads) std::this_thread::yield();
      int success = 0;
      for (Case what : kSequence) {
        Answer a;
        a.what = what;
        std::string key, fn = echo, body = R"({"event": {"n": 1}})";
        http::HeaderList headers;
        size_t payer = 0;
        switch (what) {
          case Case::kUnknownKey:
            key = "tg_" + HexEncode(RandomBytes(16));
            break;
          case Case::kNoInvokeScope:
            key = keys[t].manage_only;
            break;
          case Case::kUnknownFunction:
            fn = NewUuid();
            break;
          case Case::kInvalidBody:
            body = "not json";
            break;
          case Case::kMissingEnvKeys:
            fn = keyed;
            break;
          case Case::kInsufficientBalance:
            key = keys[t].poor;
            break;
          case Case::kRateLimited:
            key = throttled_key;
            break;
          case Case::kHandlerError:
            fn = boom;
            break;
          case Case::kTimeout:
            fn = loop;
            break;
          case Case::kSuccess:
            payer = static_cast<size_t>(success++ + t) % callers.size();
            break;
        }
        if (key.empty()) key = keys[t].callers[payer];
        if (what == Case::kInsufficientBalance) {
          a.org = poor.org_id();
        } else if (what == Case::kRateLimited) {
          a.org = throttled.org_id();
        } else if (what != Case::kUnknownKey) {
          a.org = callers[payer]->org_id();
        }
        headers.emplace_back("Authorization", key);
        auto r = client->Post("/api/v1/functions/" + fn + "/invoke", body, headers);
        if (!r.ok()) {
          a.body = "transport: " + r.status().ToString();
        } else {
          a.status = r->status;
          a.body = r->body;
          auto doc = ParseJson(r->body);
          if (doc.ok()) {
            std::string_view s;
            if (doc->root["code"].get_string().get(s) == simdjson::SUCCESS) a.code = s;
            auto summary = doc->root["summary"];
            if (summary["execution_id"].get_string().get(s) == simdjson::SUCCESS) {
              a.execution_id = s;
              if (summary["cost"]["total_micro_usd"].get_int64().get(a.total)) a.total = -1;
              if (summary["cost"]["function_micro_usd"].get_int64().get(a.function))
                a.function = -1;
            }
          }
        }
        mine.push_back(std::move(a));
      }
      std::lock_guard<std::mutex> lock(mu);
      for (auto& a : mine) answers.push_back(std::move(a));
    });
  }
  for (auto& t : threads) t.join();
  const int64_t burst_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                               std::chrono::steady_clock::now() - burst_start)
                               .count();
  ASSERT_EQ(answers.size(), kSequence.size() * kThreads);

  // Every call got the answer its case demands.
  std::map<std::string, std::map<std::string, Answer>> charged;  // org -> execution id -> answer
  int charged_calls = 0, rate_limited = 0;
  for (const auto& a : answers) {
    std::string where = std::string(Name(a.what)) + ": " + a.body;
    auto expect = [&](int status, const std::string& code) {
      EXPECT_EQ(a.status, status) << where;
      EXPECT_EQ(a.code, code) << where;
    };
    switch (a.what) {
      case Case::kUnknownKey:
        expect(401, "invalid_api_key");
        break;
      case Case::kNoInvokeScope:
        expect(403, "insufficient_scope");
        break;
      case Case::kUnknownFunction:
        expect(404, "function_not_found");
        break;
      case Case::kInvalidBody:
        expect(400, "invalid_json");
        break;
      case Case::kMissingEnvKeys:
        expect(400, "missing_env_key");
        break;
      case Case::kInsufficientBalance:
        expect(402, "insufficient_balance");
        break;
      case Case::kTimeout:
        expect(408, "timeout");
        break;
      case Case::kRateLimited:
        if (a.status == 429) {
          EXPECT_EQ(a.code, "rate_limited") << where;
          ++rate_limited;
        } else {
          EXPECT_EQ(a.status, 200) << where;
        }
        break;
      case Case::kHandlerError:
        EXPECT_EQ(a.status, 500) << where;
        EXPECT_NE(StringField(a.body, "body").find("boom"), std::string::npos) << where;
        EXPECT_EQ(a.function, kBoomFee) << where;
        break;
      case Case::kSuccess:
        EXPECT_EQ(a.status, 200) << where;
        EXPECT_EQ(StringField(a.body, "body"), R"({"n":1})") << where;
        EXPECT_EQ(a.function, kEchoFee) << where;
        break;
    }
    bool should_charge = a.status == 200 || (a.what == Case::kHandlerError && a.status == 500);
    EXPECT_EQ(should_charge, !a.execution_id.empty() && a.total > 0) << where;
    if (should_charge) {
      ++charged_calls;
      EXPECT_TRUE(charged[a.org].emplace(a.execution_id, a).second)
          << "execution id answered twice: " << where;
    }
  }
  // The throttled key may pass its burst allowance plus one call per second of the burst (+1 for
  // the bucket's fractional tokens), never more. This bound holds however slow the machine is,
  // and it implies refusals: 32 calls in a burst shorter than 25 s cannot all pass.
  const int throttled_calls = 4 * kThreads;
  EXPECT_LE(throttled_calls - rate_limited, kRateBurst + burst_ms / 1000 + 1)
      << "the per-key rate limit let too many calls through in " << burst_ms << " ms";
  std::cout << "burst of " << answers.size() << " calls took " << burst_ms
            << " ms; rate-limited calls: " << rate_limited << " of " << throttled_calls
            << "; charged calls: " << charged_calls << "\n";

  // The books: exactly one charge row per charged call, of the amount its summary named; the
  // owner earns 80 % of each fee; every balance equals its ledger; nothing is left held.
  int charge_rows = 0;
  int64_t expected_revenue = 0;
  std::set<std::string> paid_executions;
  auto check_payer = [&](Account& account, const std::string& label, int64_t topped_up) {
    SCOPED_TRACE(label + " " + account.org_id());
    int64_t sum = 0, charges = 0;
    std::map<std::string, int> rows_per_execution;
    for (auto& row : account.Ledger()) {
      sum += Amount(row);
      if (row["type"] != "charge") continue;
      ++charge_rows;
      charges += -Amount(row);
      std::string id = row["execution_id"];
      EXPECT_EQ(++rows_per_execution[id], 1) << "charged twice: " << id;
      auto it = charged[account.org_id()].find(id);
      if (it == charged[account.org_id()].end()) {
        ADD_FAILURE() << "charge for a call that was not answered as charged: " << id;
        continue;
      }
      EXPECT_EQ(-Amount(row), it->second.total) << id;
      expected_revenue += it->second.function * 8 / 10;
      paid_executions.insert(id);
    }
    EXPECT_EQ(rows_per_execution.size(), charged[account.org_id()].size());
    EXPECT_EQ(sum, topped_up - charges);
    EXPECT_EQ(account.Balance(), sum) << "the balance differs from the ledger";
    EXPECT_EQ(account.Available(), account.Balance()) << "a hold is still reserved";
  };
  for (size_t i = 0; i < callers.size(); ++i) {
    check_payer(*callers[i], "caller " + std::to_string(i), kFunded);
  }
  check_payer(throttled, "throttled", kFunded);
  check_payer(poor, "poor", kPoorBalance);
  EXPECT_EQ(charge_rows, charged_calls);

  int64_t revenue = 0, owner_sum = 0;
  int revenue_rows = 0;
  for (auto& row : owner.Ledger()) {
    owner_sum += Amount(row);
    EXPECT_NE(row["type"], "charge") << "the owner made no call";
    if (row["type"] != "revenue") continue;
    ++revenue_rows;
    revenue += Amount(row);
    EXPECT_TRUE(paid_executions.count(row["execution_id"])) << row["execution_id"];
  }
  EXPECT_EQ(revenue_rows, charged_calls);
  EXPECT_EQ(revenue, expected_revenue);
  EXPECT_EQ(owner_sum, kFunded + revenue);
  EXPECT_EQ(owner.Balance(), owner_sum);
  EXPECT_EQ(owner.Available(), owner.Balance());

  // How the burst travelled: batch formation depends on timing, so this is reported, not asserted.
  // A counter is absent until its process first sends a batch envelope.
  for (const char* service : {"edge", "billing", "executor"}) {
    for (const char* metric :
         {"toolgate_nats_batched_messages_total", "toolgate_nats_messages_published_total"}) {
      std::cout << service << " " << metric << " " << MetricSample(service, metric) << "\n";
    }
  }
}

}  // namespace
}  // namespace toolgate::testing
