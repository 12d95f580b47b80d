// OAuth grants' spending caps at the billing stage, against a real system: InvokeJobs carrying a
// grant are published to billing the way the edge publishes them (as the edge's bus user, with
// the edge's reply inboxes), so billing's hold, the executor, settlement, the capture and the
// ledger all run for real. Grant usage is asked over NATS as auth asks it. The ledger's grant
// queries are also checked on a database of their own.
#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "BillingMigrations.h"
#include "system.h"
#include "system_postgres.h"
#include "toolgate/base/crypto.h"
#include "toolgate/base/time.h"
#include "toolgate/billing/ledger_store.h"
#include "toolgate/bus/bus.h"
#include "toolgate/core/bus_permissions.h"
#include "toolgate/core/subjects.h"
#include "toolgate/v1/toolgate.pb.h"

namespace toolgate::testing {
namespace {

const auto* const kEnv = ::testing::AddGlobalTestEnvironment(new SharedSystem());

constexpr const char* kEcho = "function service_handler(event, context) return event end";
constexpr int kTimeoutMs = 10'000;
constexpr int kMemoryMb = 128;
constexpr const char* kClient = "Test Client";

// The contract's CPU formula restated independently of the implementation:
// max(1, ceil(billed_ms × memory_mb / 1024 × 0.0166667)). A hold is it at the version's timeout
// (the caller's own function: no fee).
int64_t ExpectedCompute(int64_t runtime_ms, int64_t memory_mb) {
  int64_t billed = std::max<int64_t>(1, runtime_ms);
  __int128 num = static_cast<__int128>(billed) * memory_mb * 166667;
  __int128 den = static_cast<__int128>(1024) * 10'000'000;
  return std::max<int64_t>(1, static_cast<int64_t>((num + den - 1) / den));
}

std::unique_ptr<bus::Bus> ConnectAs(const std::string& user) {
  bus::BusOptions options;
  options.url = g_system->State("nats_url");
  options.user = user;
  options.password = g_system->Secret("nats-" + user + ".password");
  options.inbox_prefix = core::InboxPrefix(user);
  auto connected = bus::Bus::Connect(options);
  EXPECT_TRUE(connected.ok()) << connected.status().ToString();
  return connected.ok() ? std::move(*connected) : nullptr;
}

std::string RedisCli(const std::string& args) {
  std::string url = g_system->State("redis_url");
  auto [rc, out] = RunCommand("REDISCLI_AUTH=$(cat " + g_system->data_dir() +
                              "/keys/redis.password) redis-cli -p " +
                              url.substr(url.rfind(':') + 1) + " " + args);
  EXPECT_EQ(rc, 0) << out;
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

// A field of the grant's budget in Redis, as an integer (absent: -1).
int64_t BudgetField(const std::string& grant, const std::string& field) {
  std::string value = RedisCli("HGET tg:budget:grant:" + grant + " " + field);
  return value.empty() ? -1 : std::stoll(value);
}

// The executor, stopped for as long as this lives: jobs billing forwards to it wait, held, and
// nothing settles meanwhile.
class ExecutorStopped {
 public:
  ExecutorStopped() { g_system->Kill("executor", SIGSTOP); }
  ~ExecutorStopped() { g_system->Kill("executor", SIGCONT); }
  ExecutorStopped(const ExecutorStopped&) = delete;
  ExecutorStopped& operator=(const ExecutorStopped&) = delete;
};

class GrantBudgetTest : public ::testing::Test {
 protected:
  void SetUp() override {
    edge_ = ConnectAs("edge");
    ASSERT_TRUE(edge_);
    replies_prefix_ = edge_->NewInbox();
    // Billing answers in envelopes on "<prefix>._b"; this subscription unpacks them.
    ASSERT_TRUE(edge_
                    ->Subscribe(replies_prefix_ + ".*", "",
                                [this](bus::Message&& m) { OnReply(std::move(m)); })
                    .ok());
    account_ = std::make_unique<Account>(*g_system, "Connected apps");
    account_->TopUp(50'000'000);
    function_id_ = account_->CreateFunction("echo");
    ASSERT_EQ(account_
                  ->PublishLua(function_id_, "1.0", kEcho,
                               R"("timeout_ms":)" + std::to_string(kTimeoutMs) +
                                   R"(,"memory_mb":)" + std::to_string(kMemoryMb))
                  .status,
              201);
  }

  // An InvokeJob as the edge hands it to billing for a call made with grant's access token.
  v1::InvokeJob GrantJob(const std::string& grant, int64_t cap,
                         v1::ComputeType compute = v1::COMPUTE_TYPE_CPU) {
    v1::InvokeJob job;
    job.set_request_id("grant-" + HexEncode(RandomBytes(6)));
    job.set_execution_id(NewUuid());
    job.set_function_id(function_id_);
    job.set_version("1.0");
    job.set_event_json(R"({"n":1})");
    job.set_audience("/mcp");
    v1::Principal* p = job.mutable_principal();
    p->set_org_id(account_->org_id());
    p->add_scopes("mcp:invoke");
    p->set_key_expires_at_ms(NowMs() + 3'600'000);
    p->set_grant_id(grant);
    p->set_client_name(kClient);
    p->set_resource_path("/mcp");
    p->set_grant_cap_micro_usd(cap);
    v1::FunctionVersion* f = job.mutable_function();
    f->set_function_id(function_id_);
    f->set_version("1.0");
    f->set_owner_org_id(account_->org_id());
    f->set_runtime(v1::RUNTIME_LUA);
    f->set_compute_type(compute);
    f->set_timeout_ms(kTimeoutMs);
    f->set_memory_mb(kMemoryMb);
    return job;
  }

  // Publishes job to billing with a reply inbox of its own; returns that inbox.
  std::string Send(v1::InvokeJob job) {
    std::string reply = replies_prefix_ + "." + std::to_string(sent_++);
    job.set_edge_reply(reply);
    Status s = edge_->Publish(core::kBillingStageSubject, job.SerializeAsString(), reply);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return reply;
  }

  // Runs n calls with grant (cap 0: none) to the end; the sum of what they were charged.
  int64_t RunCalls(const std::string& grant, int n, int64_t cap = 0) {
    std::vector<std::string> inboxes;
    for (int i = 0; i < n; ++i) inboxes.push_back(Send(GrantJob(grant, cap)));
    EXPECT_TRUE(WaitUntil([&] { return Answered(inboxes) == inboxes.size(); }, 60'000,
                          "every call's answer"));
    int64_t charged = 0;
    for (const auto& inbox : inboxes) {
      v1::InvokeReply r = ReplyTo(inbox);
      EXPECT_TRUE(r.has_result()) << r.ShortDebugString();
      charged += r.result().summary().cost().total_micro_usd();
    }
    return charged;
  }

  size_t Answered(const std::vector<std::string>& inboxes) {
    std::lock_guard<std::mutex> lock(mu_);
    size_t n = 0;
    for (const auto& inbox : inboxes) n += answers_.count(inbox);
    return n;
  }

  v1::InvokeReply ReplyTo(const std::string& inbox) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = answers_.find(inbox);
    return it == answers_.end() ? v1::InvokeReply() : it->second;
  }

  // What tg.billing.grant_usage answers auth.
  v1::GrantUsageReply Usage(const std::string& org, const std::vector<std::string>& grants) {
    auto auth = ConnectAs("auth");
    v1::GrantUsageReply reply;
    if (!auth) return reply;
    v1::GrantUsageRequest request;
    request.set_org_id(org);
    for (const auto& g : grants) request.add_grant_ids(g);
    auto answer = auth->Request(core::kGrantUsageSubject, request.SerializeAsString(), 10'000);
    EXPECT_TRUE(answer.ok()) << answer.status().ToString();
    if (answer.ok()) {
      EXPECT_TRUE(reply.ParseFromString(answer->data));
    }
    return reply;
  }

  std::unique_ptr<Account> account_;
  std::string function_id_;

 private:
  void OnReply(bus::Message&& m) {
    v1::InvokeReply reply;
    if (!reply.ParseFromString(m.data)) {
      ADD_FAILURE() << "unparsable reply on " << m.subject;
      return;
    }
    // Interim: the executor took the job, or a notice of the running handler.
    if (reply.has_dispatched() || reply.has_notice()) return;
    std::lock_guard<std::mutex> lock(mu_);
    answers_[m.subject] = std::move(reply);
  }

  std::string replies_prefix_;
  int sent_ = 0;
  std::mutex mu_;
  std::map<std::string, v1::InvokeReply> answers_;  // guarded by mu_, by reply inbox
  std::unique_ptr<bus::Bus> edge_;                  // last: its delivery thread uses the above
};

// 60 calls at once against a cap that covers 25: exactly 25 run, the other 35 are refused with
// 402 grant_cap_exceeded before running, the grant spends what the 25 were charged (less than
// they held), and its executions name the connected app.
TEST_F(GrantBudgetTest, SixtyCallsAgainstACapCoveringTwentyFive) {
  const std::string grant = NewUuid();
  const int64_t hold = ExpectedCompute(kTimeoutMs, kMemoryMb);
  const int64_t cap = 26 * hold - 1;
  const int64_t balance_before = account_->Balance();
  std::vector<std::string> inboxes;
  {
    ExecutorStopped stopped;
    for (int i = 0; i < 60; ++i) inboxes.push_back(Send(GrantJob(grant, cap)));
    // Only refusals can be answered while the executor holds the held calls unrun.
    ASSERT_TRUE(WaitUntil([&] { return Answered(inboxes) == 35; }, 30'000, "35 refusals"));
    for (const auto& inbox : inboxes) {
      if (Answered({inbox}) == 0) continue;
      v1::InvokeReply r = ReplyTo(inbox);
      ASSERT_TRUE(r.has_problem()) << r.ShortDebugString();
      EXPECT_EQ(r.problem().code(), "grant_cap_exceeded");
      EXPECT_EQ(r.problem().status(), 402);
    }
    EXPECT_EQ(BudgetField(grant, "reserved"), 25 * hold);
    EXPECT_EQ(BudgetField(grant, "spent"), 0);
    EXPECT_EQ(account_->Available(), balance_before - 25 * hold);
  }
  ASSERT_TRUE(WaitUntil([&] { return Answered(inboxes) == 60; }, 60'000, "the 25 held calls"));
  int64_t charged = 0;
  int ran = 0;
  for (const auto& inbox : inboxes) {
    v1::InvokeReply r = ReplyTo(inbox);
    if (!r.has_result()) continue;
    ++ran;
    EXPECT_EQ(r.result().status_code(), 200);
    const int64_t total = r.result().summary().cost().total_micro_usd();
    EXPECT_LT(total, hold);  // so spent below must be the charges, not the holds
    charged += total;
  }
  EXPECT_EQ(ran, 25);
  // The captures leave before the answers; Redis applies them in its own time.
  ASSERT_TRUE(WaitUntil(
      [&] { return BudgetField(grant, "spent") == charged && BudgetField(grant, "reserved") == 0; },
      10'000, "the grant's budget to hold the charges"));
  EXPECT_EQ(account_->Balance(), balance_before - charged);
  EXPECT_EQ(account_->Available(), balance_before - charged);

  // The executions name the app; a call made with an API key names none.
  std::string key = account_->CreateKey();
  ASSERT_EQ(Invoke(*g_system, key, function_id_, "", R"({"event": {}})").status, 200);
  auto list = account_->session().Get("/api/v1/executions?limit=200&function_id=" + function_id_);
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->status, 200) << list->body;
  int with_client = 0, without = 0;
  auto doc = Json(list->body);
  std::string some_grant_execution;
  for (auto item : doc.root["items"].get_array()) {
    std::string_view name;
    if (item["client_name"].get_string().get(name) == simdjson::SUCCESS) {
      EXPECT_EQ(name, kClient);
      ++with_client;
      some_grant_execution = std::string(std::string_view(item["execution_id"]));
    } else {
      EXPECT_TRUE(item["client_name"].is_null()) << list->body;
      ++without;
    }
  }
  EXPECT_EQ(with_client, 25);
  EXPECT_EQ(without, 1);
  auto one = account_->session().Get("/api/v1/executions/" + some_grant_execution);
  ASSERT_TRUE(one.ok());
  ASSERT_EQ(one->status, 200) << one->body;
  EXPECT_EQ(StringField(one->body, "client_name"), kClient);

  // Auth reads what the grant did from the ledger.
  const std::string unused = NewUuid();
  v1::GrantUsageReply usage = Usage(account_->org_id(), {grant, unused});
  ASSERT_FALSE(usage.has_problem()) << usage.problem().ShortDebugString();
  ASSERT_EQ(usage.usage_size(), 1);  // a grant never used has no usage
  EXPECT_EQ(usage.usage(0).grant_id(), grant);
  EXPECT_EQ(usage.usage(0).calls(), 25);
  EXPECT_EQ(usage.usage(0).spent_micro_usd(), charged);
  EXPECT_GE(usage.usage(0).last_used_ms(), 1);
  // Another organization's asking sees none of it.
  Account other(*g_system, "Someone else");
  v1::GrantUsageReply foreign = Usage(other.org_id(), {grant});
  ASSERT_FALSE(foreign.has_problem());
  EXPECT_EQ(foreign.usage_size(), 0);
}

// The same against an API key's and an organization's daily spending limits (docs/api.md,
// "Spending limits"): 60 calls at once, a limit that covers 25 holds, exactly 25 run and 35 are
// refused with 402 budget_exceeded before running; the limit then shows as spent exactly what
// the 25 were charged.
class SpendingLimitRace : public GrantBudgetTest, public ::testing::WithParamInterface<bool> {};

TEST_P(SpendingLimitRace, SixtyCallsAgainstADailyLimitCoveringTwentyFive) {
  const bool organization_limit = GetParam();
  auto created = account_->session().Post("/api/v1/api-keys", R"({"name":"racer"})");
  ASSERT_TRUE(created.ok() && created->status == 201);
  const std::string key_id = StringField(created->body, "id");
  const int64_t hold = ExpectedCompute(kTimeoutMs, kMemoryMb);
  const std::string path = organization_limit ? std::string("/api/v1/billing/budget")
                                              : "/api/v1/api-keys/" + key_id + "/budget";
  auto set = account_->session().Send(
      "PUT", path, R"({"daily_micro_usd":)" + std::to_string(26 * hold - 1) + "}");
  ASSERT_TRUE(set.ok() && set->status == 200) << (set.ok() ? set->body : "");
  auto job_for_key = [&] {
    v1::InvokeJob job = GrantJob("", 0);
    v1::Principal* p = job.mutable_principal();
    p->clear_grant_id();
    p->clear_client_name();
    p->clear_resource_path();
    p->clear_scopes();
    p->add_scopes("invoke");
    p->set_key_id(key_id);
    job.clear_audience();
    return job;
  };
  const int64_t balance_before = account_->Balance();
  std::vector<std::string> inboxes;
  {
    ExecutorStopped stopped;
    for (int i = 0; i < 60; ++i) inboxes.push_back(Send(job_for_key()));
    ASSERT_TRUE(WaitUntil([&] { return Answered(inboxes) == 35; }, 30'000, "35 refusals"));
    for (const auto& inbox : inboxes) {
      if (Answered({inbox}) == 0) continue;
      v1::InvokeReply r = ReplyTo(inbox);
      ASSERT_TRUE(r.has_problem()) << r.ShortDebugString();
      EXPECT_EQ(r.problem().code(), "budget_exceeded");
      EXPECT_EQ(r.problem().status(), 402);
    }
    EXPECT_EQ(account_->Available(), balance_before - 25 * hold);
  }
  ASSERT_TRUE(WaitUntil([&] { return Answered(inboxes) == 60; }, 60'000, "the 25 held calls"));
  int64_t charged = 0;
  int ran = 0;
  for (const auto& inbox : inboxes) {
    v1::InvokeReply r = ReplyTo(inbox);
    if (!r.has_result()) continue;
    ++ran;
    charged += r.result().summary().cost().total_micro_usd();
  }
  EXPECT_EQ(ran, 25);
  ASSERT_TRUE(WaitUntil([&] { return account_->Available() == balance_before - charged; }, 10'000,
                        "the charges to be captured"));
  EXPECT_EQ(account_->Balance(), balance_before - charged);
  auto spent = account_->session().Get(path);
  ASSERT_TRUE(spent.ok() && spent->status == 200);
  EXPECT_EQ(IntField(spent->body, "spent_today_micro_usd"), charged) << spent->body;
}

INSTANTIATE_TEST_SUITE_P(KeyAndOrganization, SpendingLimitRace, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "Organization" : "Key"; });

// A call that never reaches a handler (no executor serves its pool) returns what it held to the
// grant.
TEST_F(GrantBudgetTest, ACallNoExecutorServesReturnsItsHold) {
  const std::string grant = NewUuid();
  const int64_t charged = RunCalls(grant, 1, 1'000'000);
  ASSERT_EQ(BudgetField(grant, "spent"), charged);
  // No executor ever serves Lua on GPU.
  std::string inbox = Send(GrantJob(grant, 1'000'000, v1::COMPUTE_TYPE_GPU));
  ASSERT_TRUE(WaitUntil([&] { return Answered({inbox}) == 1; }, 30'000, "the no_capacity answer"));
  EXPECT_EQ(ReplyTo(inbox).problem().code(), "no_capacity");
  ASSERT_TRUE(WaitUntil([&] { return BudgetField(grant, "reserved") == 0; }, 10'000,
                        "the hold to leave the grant's budget"));
  EXPECT_EQ(BudgetField(grant, "spent"), charged);
}

// `toolgate-billing reconcile` rebuilds a grant's spent from its charged executions.
TEST_F(GrantBudgetTest, ReconcileRestoresWhatAGrantSpent) {
  const std::string grant = NewUuid();
  const int64_t charged = RunCalls(grant, 3);
  ASSERT_TRUE(
      WaitUntil([&] { return BudgetField(grant, "spent") == charged; }, 10'000, "the captures"));
  // As after a restore of an older Redis: the grant would have more room than it has.
  ASSERT_EQ(RedisCli("HSET tg:budget:grant:" + grant + " spent 0"), "0");

  auto state = Json(g_system->State());
  std::string keys = g_system->data_dir() + "/keys/";
  std::string env =
      "TOOLGATE_REDIS_URL=" + std::string(std::string_view(state.root["redis_url"])) +
      " TOOLGATE_POSTGRES_URL=" + std::string(std::string_view(state.root["postgres_url"])) +
      " TOOLGATE_NATS_URL=" + std::string(std::string_view(state.root["nats_url"])) +
      " TOOLGATE_REDIS_PASSWORD_FILE=" + keys + "redis.password" +
      " TOOLGATE_POSTGRES_PASSWORD_FILE=" + keys + "postgres.password";
  std::string billing = std::string(TOOLGATE_BIN_DIR) + "/toolgate-billing";
  auto dry = RunCommand(env + " " + billing + " reconcile --dry-run");
  EXPECT_EQ(dry.first, 1) << dry.second;  // found, left alone
  EXPECT_NE(dry.second.find(R"({"grant_id":")" + grant + R"(","redis":0,"ledger":)" +
                            std::to_string(charged) + "}"),
            std::string::npos)
      << dry.second;
  EXPECT_EQ(BudgetField(grant, "spent"), 0);

  auto repair = RunCommand(env + " " + billing + " reconcile");
  EXPECT_EQ(repair.first, 0) << repair.second;
  EXPECT_EQ(BudgetField(grant, "spent"), charged);
  auto again = RunCommand(env + " " + billing + " reconcile --dry-run");
  EXPECT_EQ(again.first, 0) << again.second;
}

TEST_F(GrantBudgetTest, GrantUsageRefusesBadRequests) {
  std::vector<std::string> many(501, NewUuid());
  EXPECT_EQ(Usage(account_->org_id(), many).problem().code(), "bad_request");
  EXPECT_EQ(Usage(account_->org_id(), {"grant-1"}).problem().code(), "bad_request");
  EXPECT_FALSE(Usage(account_->org_id(), {}).has_problem());
}

billing::Settlement SettlementOf(const std::string& execution_id, const std::string& org,
                                 const std::string& grant, int64_t total) {
  billing::Settlement s;
  billing::ExecutionRecord& e = s.execution;
  e.execution_id = execution_id;
  e.org_id = e.owner_org_id = org;
  e.function_id = "fn";
  e.version = "1";
  e.status_code = total > 0 ? 200 : 408;
  e.compute_type = "CPU";
  e.grant_id = grant;
  if (!grant.empty()) e.client_name = "App " + grant.substr(0, 4);
  e.charge.compute_micro_usd = e.charge.total_micro_usd = total;
  if (total > 0) {
    billing::LedgerEntry charge;
    charge.org_id = org;
    charge.execution_id = execution_id;
    charge.function_id = "fn";
    charge.version = "1";
    charge.compute_micro_usd = total;
    charge.amount_micro_usd = -total;
    s.entries = {charge};
  }
  return s;
}

// The ledger's side, on a database of its own: executions keep their grant, and a grant's usage
// and spent are read from them, by organization.
TEST(GrantLedgerTest, ExecutionsKeepTheirGrantAndAnswerForItsUsage) {
  const std::string database = "grants_" + HexEncode(RandomBytes(6));
  {
    auto admin = SystemPostgres(*g_system);
    ASSERT_TRUE(admin->Exec("CREATE DATABASE " + database).ok());
  }
  auto pool = SystemPostgres(*g_system, database);
  ASSERT_TRUE(billing::MigrateSchema(*pool).ok());
  billing::LedgerStore ledger(*pool);
  const std::string g1 = "5f0c2b7e-9a41-4d3c-8e2b-1a0f4c3d2e1f", g2 = NewUuid(), g3 = NewUuid();
  std::vector<billing::Settlement> batch = {
      SettlementOf("e1", "org_a", g1, 30), SettlementOf("e2", "org_a", g1, 12),
      SettlementOf("e3", "org_a", g1, 0),  // not charged (a timeout): a call all the same
      SettlementOf("e4", "org_b", g1, 7),  // the same grant id, another organization's calls
      SettlementOf("e5", "org_a", g2, 5),  SettlementOf("e6", "org_a", "", 100)};
  std::vector<const billing::Settlement*> pointers;
  for (const auto& s : batch) pointers.push_back(&s);
  ASSERT_TRUE(ledger.RecordSettlements(pointers).ok());

  auto usage = ledger.GrantUsage("org_a", {g1, g2, g3});
  ASSERT_TRUE(usage.ok()) << usage.status().ToString();
  std::map<std::string, billing::GrantUsageRow> by_grant;
  for (const auto& row : *usage) by_grant[row.grant_id] = row;
  ASSERT_EQ(by_grant.size(), 2u);  // g3 has no executions
  EXPECT_EQ(by_grant[g1].calls, 3);
  EXPECT_EQ(by_grant[g1].spent_micro_usd, 42);
  EXPECT_EQ(by_grant[g2].calls, 1);
  EXPECT_EQ(by_grant[g2].spent_micro_usd, 5);
  auto last = pool->Exec(
      "SELECT (extract(epoch FROM max(created_at)) * 1000)::bigint FROM billing.executions "
      "WHERE grant_id = $1 AND org_id = 'org_a'",
      {g1});
  ASSERT_TRUE(last.ok());
  EXPECT_EQ(by_grant[g1].last_used_ms, last->Int(0, 0));
  EXPECT_TRUE(ledger.GrantUsage("org_c", {g1})->empty());
  EXPECT_TRUE(ledger.GrantUsage("org_a", {})->empty());

  // A budget's spent is every organization's charges with the grant (one grant, one caller).
  EXPECT_EQ(*ledger.BudgetSpent({billing::BudgetKind::kGrant, g1, 0, {}, {}}), 49);
  EXPECT_EQ(*ledger.BudgetSpent({billing::BudgetKind::kGrant, g3, 0, {}, {}}), 0);
  auto spends = ledger.GrantSpends();
  ASSERT_TRUE(spends.ok());
  std::map<std::string, int64_t> spent(spends->begin(), spends->end());
  EXPECT_EQ(spent, (std::map<std::string, int64_t>{{g1, 49}, {g2, 5}}));
  // The balance counts the charges once, grant or not.
  EXPECT_EQ(*ledger.Sum("org_a"), -(30 + 12 + 5 + 100));

  auto page = ledger.Executions("org_a", "", 10, std::nullopt);
  ASSERT_TRUE(page.ok());
  std::map<std::string, std::pair<std::string, std::string>> grant_of;
  for (const auto& item : page->items) {
    grant_of[item.record.execution_id] = {item.record.grant_id, item.record.client_name};
  }
  EXPECT_EQ(grant_of["e1"], std::make_pair(g1, "App " + g1.substr(0, 4)));
  EXPECT_EQ(grant_of["e6"], std::make_pair(std::string(), std::string()));
  auto one = ledger.Execution("org_a", "e5");
  ASSERT_TRUE(one.ok() && one->has_value());
  EXPECT_EQ((*one)->record.grant_id, g2);
  EXPECT_EQ((*one)->record.hops_json, "[]");  // the columns after the grant's are read as before
  EXPECT_EQ(CountRows(*pool,
                      "SELECT count(*) FROM billing.executions WHERE grant_id IS NULL "
                      "AND client_name IS NULL"),
            1);
  pool.reset();
  EXPECT_TRUE(SystemPostgres(*g_system)->Exec("DROP DATABASE " + database).ok());
}

}  // namespace
}  // namespace toolgate::testing
