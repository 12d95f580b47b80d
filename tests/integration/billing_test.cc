// Contract section 4 against a real system: exact ledger amounts, holds, concurrency.
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <thread>
#include <vector>

#include "BillingMigrations.h"
#include "system.h"
#include "system_postgres.h"
#include "toolgate/base/crypto.h"
#include "toolgate/billing/ledger_store.h"

namespace toolgate::testing {
namespace {

const auto* const kEnv = ::testing::AddGlobalTestEnvironment(new SharedSystem());

constexpr const char* kEcho = "function service_handler(event, context) return event end";
constexpr const char* kBoom = "function service_handler(event, context) error('boom') end";
constexpr const char* kLoop = "function service_handler(event, context) while true do end end";

// The contract's CPU formula restated independently of the implementation:
// max(1, ceil(billed_ms × memory_mb / 1024 × 0.0166667)).
int64_t ExpectedCompute(int64_t runtime_ms, int64_t memory_mb) {
  int64_t billed = std::max<int64_t>(1, runtime_ms);
  __int128 num = static_cast<__int128>(billed) * memory_mb * 166667;
  __int128 den = static_cast<__int128>(1024) * 10'000'000;
  return std::max<int64_t>(1, static_cast<int64_t>((num + den - 1) / den));
}

struct Summary {
  std::string execution_id;
  int64_t runtime_ms, compute, function, total;
};

Summary SummaryOf(const http::HttpResponse& r) {
  auto doc = Json(r.body);
  auto s = doc.root["summary"];
  return {std::string(std::string_view(s["execution_id"])), int64_t(s["runtime_ms"]),
          int64_t(s["cost"]["compute_micro_usd"]), int64_t(s["cost"]["function_micro_usd"]),
          int64_t(s["cost"]["total_micro_usd"])};
}

std::vector<std::map<std::string, std::string>> RowsFor(Account& account,
                                                        const std::string& execution_id) {
  std::vector<std::map<std::string, std::string>> out;
  for (auto& row : account.Ledger()) {
    if (row["execution_id"] == execution_id) out.push_back(row);
  }
  return out;
}

int64_t LedgerSum(Account& account) {
  int64_t sum = 0;
  for (auto& row : account.Ledger()) sum += std::stoll(row["amount_micro_usd"]);
  return sum;
}

class BillingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    owner_ = std::make_unique<Account>(*g_system, "Publisher");
    caller_ = std::make_unique<Account>(*g_system, "Customer");
    owner_->TopUp(1'000'000);
    caller_->TopUp(1'000'000);
    owner_key_ = owner_->CreateKey();
    caller_key_ = caller_->CreateKey();
  }
  std::string PublicPricedTool(const char* code, int64_t price, const std::string& extra = "") {
    std::string fn = owner_->CreateFunction(
        "priced", R"("visibility":"public","price_micro_usd":)" + std::to_string(price));
    EXPECT_EQ(owner_->PublishLua(fn, "1.0", code, extra).status, 201);
    caller_->AddToWorkspace(fn);
    return fn;
  }
  std::unique_ptr<Account> owner_, caller_;
  std::string owner_key_, caller_key_;
};

TEST_F(BillingTest, OwnToolCostsComputeOnly) {
  std::string fn = PublicPricedTool(kEcho, 5000, R"("memory_mb":512)");
  auto r = Invoke(*g_system, owner_key_, fn, "", R"({"event": {}})");
  ASSERT_EQ(r.status, 200) << r.body;
  Summary s = SummaryOf(r);
  EXPECT_EQ(s.function, 0);
  EXPECT_EQ(s.compute, ExpectedCompute(s.runtime_ms, 512));
  EXPECT_EQ(s.total, s.compute);
  auto rows = RowsFor(*owner_, s.execution_id);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0]["type"], "charge");
  EXPECT_EQ(rows[0]["function_micro_usd"], "0");
  EXPECT_EQ(rows[0]["compute_micro_usd"], std::to_string(s.compute));
  EXPECT_EQ(rows[0]["amount_micro_usd"], std::to_string(-s.compute));
  EXPECT_EQ(owner_->Balance(), 1'000'000 - s.compute);
  EXPECT_EQ(owner_->Balance(), LedgerSum(*owner_));
}

TEST_F(BillingTest, AnotherOrganizationsToolCostsComputePlusFeeAndCreditsTheOwner) {
  std::string fn = PublicPricedTool(kEcho, 999);
  auto r = Invoke(*g_system, caller_key_, fn, "", R"({"event": {}})");
  ASSERT_EQ(r.status, 200) << r.body;
  Summary s = SummaryOf(r);
  EXPECT_EQ(s.function, 999);
  EXPECT_EQ(s.compute, ExpectedCompute(s.runtime_ms, 128));
  EXPECT_EQ(s.total, s.compute + 999);
  auto charge = RowsFor(*caller_, s.execution_id);
  ASSERT_EQ(charge.size(), 1u);
  EXPECT_EQ(charge[0]["type"], "charge");
  EXPECT_EQ(charge[0]["function_id"], fn);
  EXPECT_EQ(charge[0]["version"], "1.0");
  EXPECT_EQ(charge[0]["amount_micro_usd"], std::to_string(-(s.compute + 999)));
  auto revenue = RowsFor(*owner_, s.execution_id);
  ASSERT_EQ(revenue.size(), 1u);
  EXPECT_EQ(revenue[0]["type"], "revenue");
  EXPECT_EQ(revenue[0]["amount_micro_usd"], "799");  // floor(999 × 0.8)
  EXPECT_EQ(caller_->Balance(), 1'000'000 - s.total);
  EXPECT_EQ(owner_->Balance(), 1'000'000 + 799);
  EXPECT_EQ(caller_->Balance(), LedgerSum(*caller_));
  EXPECT_EQ(owner_->Balance(), LedgerSum(*owner_));
}

// A price is a version's, fixed when it is published: raising the function's price reaches the
// versions published afterwards (and so callers on "latest"), never a caller pinned to an older
// one; the ledger keeps the price of the version that ran.
TEST_F(BillingTest, APriceChangeReachesNewVersionsNeverAPinnedOne) {
  std::string fn = PublicPricedTool(kEcho, 0);  // version 1.0, free
  caller_->TopUp(100'000'000);
  auto raised =
      owner_->session().Patch("/api/v1/functions/" + fn, R"({"price_micro_usd":40000000})");
  ASSERT_TRUE(raised.ok() && raised->status == 200) << (raised.ok() ? raised->body : "");
  // Before a new version, "latest" is still the free 1.0.
  auto before = Invoke(*g_system, caller_key_, fn, "", R"({"event": {}})");
  ASSERT_EQ(before.status, 200) << before.body;
  EXPECT_EQ(SummaryOf(before).function, 0);
  ASSERT_EQ(owner_->PublishLua(fn, "1.1", kEcho).status, 201);  // takes the new price

  auto pinned = Invoke(*g_system, caller_key_, fn, "1.0", R"({"event": {}})");
  ASSERT_EQ(pinned.status, 200) << pinned.body;
  Summary p = SummaryOf(pinned);
  EXPECT_EQ(p.function, 0);
  EXPECT_EQ(p.total, p.compute);
  auto latest = Invoke(*g_system, caller_key_, fn, "", R"({"event": {}})");
  ASSERT_EQ(latest.status, 200) << latest.body;
  Summary l = SummaryOf(latest);
  EXPECT_EQ(l.function, 40'000'000);

  auto pinned_row = RowsFor(*caller_, p.execution_id);
  ASSERT_EQ(pinned_row.size(), 1u);
  EXPECT_EQ(pinned_row[0]["version"], "1.0");
  EXPECT_EQ(pinned_row[0]["function_micro_usd"], "0");
  EXPECT_EQ(pinned_row[0]["amount_micro_usd"], std::to_string(-p.compute));
  auto latest_row = RowsFor(*caller_, l.execution_id);
  ASSERT_EQ(latest_row.size(), 1u);
  EXPECT_EQ(latest_row[0]["version"], "1.1");
  EXPECT_EQ(latest_row[0]["function_micro_usd"], "40000000");
  EXPECT_EQ(caller_->Balance(), LedgerSum(*caller_));

  // A version may name its own price; the detail shows the latest version's and each version's.
  ASSERT_EQ(owner_->PublishLua(fn, "1.2", kEcho, R"("price_micro_usd":7)").status, 201);
  auto detail = g_system->Client()->Get("/api/v1/functions/" + fn);
  ASSERT_TRUE(detail.ok() && detail->status == 200);
  auto doc = Json(detail->body);
  EXPECT_EQ(int64_t(doc.root["price_micro_usd"]), 7);
  EXPECT_EQ(int64_t(doc.root["default_price_micro_usd"]), 40'000'000);
  std::map<std::string, int64_t> prices;
  for (auto v : doc.root["versions"].get_array()) {
    prices[std::string(std::string_view(v["version"]))] = int64_t(v["price_micro_usd"]);
  }
  EXPECT_EQ(prices, (std::map<std::string, int64_t>{{"1.0", 0}, {"1.1", 40'000'000}, {"1.2", 7}}));
  EXPECT_EQ(SummaryOf(Invoke(*g_system, caller_key_, fn, "", R"({"event": {}})")).function, 7);
}

TEST_F(BillingTest, HandlerErrorIsCharged) {
  std::string fn = PublicPricedTool(kBoom, 100);
  auto r = Invoke(*g_system, caller_key_, fn, "", R"({"event": {}})");
  ASSERT_EQ(r.status, 500) << r.body;
  Summary s = SummaryOf(r);
  EXPECT_EQ(s.total, s.compute + 100);
  ASSERT_EQ(RowsFor(*caller_, s.execution_id).size(), 1u);
  EXPECT_EQ(caller_->Balance(), 1'000'000 - s.total);
}

TEST_F(BillingTest, TimeoutAndInsufficientBalanceAreNotCharged) {
  std::string slow = PublicPricedTool(kLoop, 100, R"("timeout_ms":150)");
  auto r = Invoke(*g_system, caller_key_, slow, "", R"({"event": {}})");
  EXPECT_EQ(r.status, 408) << r.body;
  EXPECT_EQ(caller_->Balance(), 1'000'000);
  EXPECT_EQ(caller_->Available(), 1'000'000);
  EXPECT_EQ(owner_->Balance(), 1'000'000);

  std::string pricey = PublicPricedTool(kEcho, 2'000'000);
  r = Invoke(*g_system, caller_key_, pricey, "", R"({"event": {}})");
  EXPECT_EQ(r.status, 402);
  EXPECT_EQ(StringField(r.body, "code"), "insufficient_balance");
  EXPECT_EQ(caller_->Balance(), 1'000'000);
  EXPECT_EQ(caller_->Available(), 1'000'000);
  EXPECT_EQ(caller_->Ledger().size(), 1u);  // the top-up only
}

// Hold = fee + compute at timeout; with memory_mb 1 the compute cost at the timeout and at any
// real runtime is the 1 µUSD minimum, so the hold equals the charge and a balance covering 30
// holds pays for exactly 30 calls, however the 60 interleave.
TEST_F(BillingTest, SixtyConcurrentCallsAgainstThirtyHolds) {
  std::string fn = PublicPricedTool(kEcho, 999, R"("memory_mb":1,"timeout_ms":1000)");
  Account crowd(*g_system, "Crowd");
  crowd.AddToWorkspace(fn);
  crowd.TopUp(30 * 1000);
  std::string key = crowd.CreateKey();
  std::atomic<int> ok{0}, rejected{0}, other{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 60; ++i) {
    threads.emplace_back([&] {
      auto client = g_system->Client();
      auto r = client->Post("/api/v1/functions/" + fn + "/invoke", R"({"event": {}})",
                            {{"Authorization", key}});
      if (r.ok() && r->status == 200) {
        ++ok;
      } else if (r.ok() && r->status == 402) {
        ++rejected;
      } else {
        ++other;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), 30);
  EXPECT_EQ(rejected.load(), 30);
  EXPECT_EQ(other.load(), 0);
  EXPECT_EQ(crowd.Balance(), 0);
  EXPECT_EQ(crowd.Available(), 0);
  EXPECT_EQ(LedgerSum(crowd), 0);
  EXPECT_EQ(crowd.Ledger().size(), 31u);  // one top-up, thirty charges
}

TEST_F(BillingTest, TopUpIdempotencyKeyCreditsOnce) {
  Account payer(*g_system, "Payer");
  auto first = payer.session().Post("/api/v1/billing/top-ups", R"({"amount_micro_usd":5000})",
                                    {{"Idempotency-Key", "order-42"}});
  ASSERT_TRUE(first.ok());
  ASSERT_EQ(first->status, 201) << first->body;
  std::vector<std::thread> threads;
  std::vector<std::string> ids(4);
  // Read once: one client's cookie jar is not to be read from several threads.
  const std::string again = payer.session().Cookie("tg_session");
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&, i] {
      auto client = g_system->Client();
      auto r = client->Post("/api/v1/billing/top-ups", R"({"amount_micro_usd":5000})",
                            {{"Idempotency-Key", "order-42"},
                             {"Cookie", "tg_session=" + again},
                             {"X-Toolgate-CSRF", "1"}});
      if (r.ok()) ids[i] = StringField(r->body, "top_up_id");
    });
  }
  for (auto& t : threads) t.join();
  for (const auto& id : ids) EXPECT_EQ(id, StringField(first->body, "top_up_id"));
  EXPECT_EQ(payer.Balance(), 5000);
  auto other = payer.session().Post("/api/v1/billing/top-ups", R"({"amount_micro_usd":1})",
                                    {{"Idempotency-Key", "order-43"}});
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(other->status, 201);
  EXPECT_EQ(payer.Balance(), 5001);
  for (const char* bad : {R"({"amount_micro_usd":0})", R"({"amount_micro_usd":-5})",
                          R"({"amount_micro_usd":1.5})", R"({})"}) {
    auto r = payer.session().Post("/api/v1/billing/top-ups", bad);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->status, 422) << bad;
  }
  EXPECT_EQ(payer.Balance(), 5001);
}

// Each index on the executions is work in the statement that commits every call: the schema
// keeps those its queries use and no more (a charge is its execution's row, and an execution's
// seq is read only with its organization). The ledger's take only top-ups and revenue.
TEST_F(BillingTest, SettlementTablesKeepOnlyTheIndexesTheirQueriesUse) {
  auto pool = SystemPostgres(*g_system);
  auto rows = pool->Exec(
      "SELECT tablename || ': ' || indexdef FROM pg_indexes WHERE schemaname = 'billing' "
      "AND tablename IN ('ledger', 'executions') ORDER BY 1");
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  std::vector<std::string> indexes;
  for (int i = 0; i < rows->size(); ++i) indexes.push_back(rows->Str(i, 0));
  const std::vector<std::string> expected = {
      "executions: CREATE INDEX executions_grant ON billing.executions USING btree (grant_id) "
      "INCLUDE (org_id, charged, total_micro_usd, created_at) WHERE (grant_id IS NOT NULL)",
      "executions: CREATE INDEX executions_org ON billing.executions USING btree (org_id, seq "
      "DESC) INCLUDE (charged, total_micro_usd)",
      // A period's spend (spending limits) and the usage report.
      "executions: CREATE INDEX executions_org_created ON billing.executions USING btree "
      "(org_id, created_at) INCLUDE (key_id, function_id, charged, total_micro_usd)",
      "executions: CREATE INDEX executions_org_function ON billing.executions USING btree "
      "(org_id, function_id, seq DESC)",
      "executions: CREATE UNIQUE INDEX executions_pkey ON billing.executions USING btree "
      "(execution_id)",
      "ledger: CREATE INDEX ledger_org_id ON billing.ledger USING btree (org_id, id DESC) "
      "INCLUDE (amount_micro_usd)",
      // Earnings statements and the payable amount; only revenue rows (a paid fee) have one.
      "ledger: CREATE INDEX ledger_revenue_org_created ON billing.ledger USING btree "
      "(org_id, created_at) INCLUDE (function_id, function_micro_usd, amount_micro_usd) "
      "WHERE (type = 'revenue'::text)",
      // Checkout funding: a provider's session credited, a dispute debited, an event acted on,
      // each once (partial: only payment providers' rows have an entry).
      "ledger: CREATE UNIQUE INDEX ledger_dispute ON billing.ledger USING btree (provider, "
      "dispute_id) WHERE (type = 'dispute'::text)",
      "ledger: CREATE UNIQUE INDEX ledger_execution_id_type_key ON billing.ledger USING btree "
      "(execution_id, type)",
      "ledger: CREATE UNIQUE INDEX ledger_org_id_idempotency_key_key ON billing.ledger USING "
      "btree (org_id, idempotency_key)",
      "ledger: CREATE UNIQUE INDEX ledger_payment_session ON billing.ledger USING btree "
      "(provider, checkout_session_id) WHERE (type = 'payment'::text)",
      "ledger: CREATE UNIQUE INDEX ledger_pkey ON billing.ledger USING btree (id)",
      "ledger: CREATE UNIQUE INDEX ledger_provider_event ON billing.ledger USING btree "
      "(provider, provider_event_id) WHERE (provider_event_id IS NOT NULL)",
  };
  EXPECT_EQ(indexes, expected);
}

// One row per call: a charge is its execution's row, listed in the ledger once, with an id in
// the ledger's order; revenue stays a ledger row. No ledger row can be a charge any more, so a
// billing replica from before could not charge an execution a second time the old way.
TEST_F(BillingTest, ACallIsOneRowAndItsChargeIsListedOnce) {
  std::string fn = PublicPricedTool(kEcho, 999);
  auto own = Invoke(*g_system, owner_key_, fn, "", R"({"event": {}})");
  auto paid = Invoke(*g_system, caller_key_, fn, "", R"({"event": {}})");
  ASSERT_EQ(own.status, 200) << own.body;
  ASSERT_EQ(paid.status, 200) << paid.body;
  auto pool = SystemPostgres(*g_system);
  for (const auto& r : {own, paid}) {
    const std::string id = SummaryOf(r).execution_id;
    EXPECT_EQ(CountRows(*pool,
                        "SELECT count(*) FROM billing.ledger WHERE execution_id = $1 "
                        "AND type = 'charge'",
                        {id}),
              0);
    EXPECT_EQ(CountRows(*pool,
                        "SELECT count(*) FROM billing.executions WHERE execution_id = $1 "
                        "AND charged",
                        {id}),
              1);
  }
  EXPECT_EQ(CountRows(*pool,
                      "SELECT count(*) FROM billing.ledger WHERE execution_id = $1 "
                      "AND type = 'revenue'",
                      {SummaryOf(paid).execution_id}),
            1);
  auto charge = RowsFor(*caller_, SummaryOf(paid).execution_id);
  ASSERT_EQ(charge.size(), 1u);
  EXPECT_EQ(charge[0]["amount_micro_usd"], std::to_string(-SummaryOf(paid).total));
  EXPECT_EQ(caller_->Balance(), LedgerSum(*caller_));
  EXPECT_EQ(owner_->Balance(), LedgerSum(*owner_));
  auto old_way = pool->Exec(
      "INSERT INTO billing.ledger (org_id, type, execution_id, amount_micro_usd) "
      "VALUES ($1, 'charge', $2, -1)",
      {caller_->org_id(), SummaryOf(paid).execution_id});
  EXPECT_FALSE(old_way.ok());
  EXPECT_EQ(caller_->Balance(), LedgerSum(*caller_));
}

// The ledger's pages interleave top-ups (ledger rows) and charges (executions) by id, each entry
// on exactly one page.
TEST_F(BillingTest, LedgerPagesInterleaveTopUpsAndChargesInOrder) {
  std::string fn = PublicPricedTool(kEcho, 0);
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(Invoke(*g_system, caller_key_, fn, "", R"({"event": {}})").status, 200);
    caller_->TopUp(10);
  }
  std::vector<std::string> types;
  std::vector<int64_t> ids;
  std::string cursor;
  for (int page = 0; page < 20; ++page) {
    std::string path = "/api/v1/billing/ledger?limit=2";
    if (!cursor.empty()) path += "&cursor=" + http::UrlEncode(cursor);
    auto r = caller_->session().Get(path);
    ASSERT_TRUE(r.ok());
    ASSERT_EQ(r->status, 200) << r->body;
    auto doc = Json(r->body);
    for (auto item : doc.root["items"].get_array()) {
      types.emplace_back(std::string_view(item["type"]));
      ids.push_back(std::stoll(std::string(std::string_view(item["id"]))));
    }
    std::string_view next;
    if (doc.root["next_cursor"].get_string().get(next) != simdjson::SUCCESS) break;
    cursor = std::string(next);
  }
  // Newest first: the setup's top-up, then three calls each followed by a top-up.
  EXPECT_EQ(types, (std::vector<std::string>{"top_up", "charge", "top_up", "charge", "top_up",
                                             "charge", "top_up"}));
  for (size_t i = 1; i < ids.size(); ++i) EXPECT_GT(ids[i - 1], ids[i]) << i;
}

// Charges written as ledger rows before the schema moved them to their executions still count,
// once, beside the new ones, and the ids of old and new keep one order.
TEST(BillingSchemaTest, ChargesWrittenBeforeOneRowPerCallStillCountOnce) {
  const std::string database = "legacy_" + HexEncode(RandomBytes(6));
  {
    auto admin = SystemPostgres(*g_system);
    ASSERT_TRUE(admin->Exec("CREATE DATABASE " + database).ok());
  }
  auto pool = SystemPostgres(*g_system, database);
  const auto& steps = BillingMigrations();
  // The schema as it stood before step 005 (charges in executions).
  ASSERT_GE(steps.size(), 5u);
  ASSERT_TRUE(
      pg::Migrate(*pool, "billing", std::vector<std::string_view>(steps.begin(), steps.begin() + 4))
          .ok());
  for (const char* sql : {
           "INSERT INTO billing.ledger (org_id, type, amount_micro_usd) VALUES ('org_l', "
           "'top_up', 1000)",
           "INSERT INTO billing.ledger (org_id, type, execution_id, function_id, version, "
           "compute_micro_usd, amount_micro_usd) VALUES ('org_l', 'charge', 'exec_old', 'fn', "
           "'1', 100, -100)",
           "INSERT INTO billing.executions (execution_id, org_id, owner_org_id, function_id, "
           "version, status_code, runtime_ms, memory_used_mb, compute_type, compute_micro_usd, "
           "function_micro_usd, total_micro_usd, trace_id, logs) VALUES ('exec_old', 'org_l', "
           "'org_l', 'fn', '1', 200, 1, 1, 'CPU', 100, 0, 100, 't', '')",
       }) {
    ASSERT_TRUE(pool->Exec(sql).ok()) << sql;
  }
  ASSERT_TRUE(billing::MigrateSchema(*pool).ok());
  billing::LedgerStore ledger(*pool);
  EXPECT_EQ(*ledger.Sum("org_l"), 900);
  auto old_charge = ledger.ChargeOf("exec_old");
  ASSERT_TRUE(old_charge.ok() && old_charge->has_value());
  EXPECT_EQ((*old_charge)->total_micro_usd, 100);

  billing::Settlement settled;
  settled.execution.execution_id = "exec_new";
  settled.execution.org_id = settled.execution.owner_org_id = "org_l";
  settled.execution.function_id = "fn";
  settled.execution.version = "1";
  settled.execution.status_code = 200;
  settled.execution.compute_type = "CPU";
  settled.execution.charge.compute_micro_usd = settled.execution.charge.total_micro_usd = 30;
  billing::LedgerEntry entry;
  entry.org_id = "org_l";
  entry.execution_id = "exec_new";
  entry.function_id = "fn";
  entry.version = "1";
  entry.compute_micro_usd = 30;
  entry.amount_micro_usd = -30;
  settled.entries = {entry};
  ASSERT_TRUE(ledger.RecordSettlements({&settled}).ok());
  // A retry records nothing and charges nothing more.
  auto again = ledger.RecordSettlements({&settled});
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->empty());
  EXPECT_EQ(*ledger.Sum("org_l"), 870);
  auto sums = ledger.Sums();
  ASSERT_TRUE(sums.ok());
  EXPECT_EQ(*sums, (std::vector<std::pair<std::string, int64_t>>{{"org_l", 870}}));
  auto new_charge = ledger.ChargeOf("exec_new");
  ASSERT_TRUE(new_charge.ok() && new_charge->has_value());
  EXPECT_EQ((*new_charge)->total_micro_usd, 30);

  // In a batch the flag stays with its own execution, whatever order the batch came in: a
  // charged call after one whose handler never ran (no entries, nothing charged).
  billing::Settlement paid = settled, failed = settled;
  paid.execution.execution_id = paid.entries[0].execution_id = "exec_z";
  paid.entries[0].amount_micro_usd = -(paid.execution.charge.total_micro_usd = 7);
  failed.execution.execution_id = "exec_m";
  failed.execution.status_code = 502;
  failed.execution.charge = {};
  failed.entries.clear();
  ASSERT_TRUE(ledger.RecordSettlements({&paid, &failed}).ok());
  EXPECT_EQ(*ledger.Sum("org_l"), 863);
  auto unpaid = ledger.ChargeOf("exec_m");
  ASSERT_TRUE(unpaid.ok());
  EXPECT_FALSE(unpaid->has_value());
  auto paid_charge = ledger.ChargeOf("exec_z");
  ASSERT_TRUE(paid_charge.ok() && paid_charge->has_value());
  EXPECT_EQ((*paid_charge)->total_micro_usd, 7);

  auto page = ledger.Entries("org_l", 10, std::nullopt);
  ASSERT_TRUE(page.ok());
  std::vector<std::pair<std::string, int64_t>> listed;
  for (const auto& item : page->items) {
    listed.emplace_back(item.entry.execution_id, item.entry.amount_micro_usd);
  }
  EXPECT_EQ(listed, (std::vector<std::pair<std::string, int64_t>>{
                        {"exec_z", -7}, {"exec_new", -30}, {"exec_old", -100}, {"", 1000}}));
  auto executions = ledger.Executions("org_l", "", 10, std::nullopt);
  ASSERT_TRUE(executions.ok());
  ASSERT_EQ(executions->items.size(), 4u);
  EXPECT_EQ(executions->items[3].record.execution_id, "exec_old");  // newest first, as before
  pool.reset();
  EXPECT_TRUE(SystemPostgres(*g_system)->Exec("DROP DATABASE " + database).ok());
}

TEST_F(BillingTest, ExecutionsAreListedWithLogsForTheOwnerOnly) {
  std::string fn = PublicPricedTool(
      "function service_handler(event, context) print('hello log') return 1 end", 10);
  auto r = Invoke(*g_system, caller_key_, fn, "", R"({"event": {}})");
  ASSERT_EQ(r.status, 200) << r.body;
  std::string id = SummaryOf(r).execution_id;
  auto list = caller_->session().Get("/api/v1/executions?function_id=" + fn);
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->status, 200);
  EXPECT_NE(list->body.find(id), std::string::npos);
  auto mine = caller_->session().Get("/api/v1/executions/" + id);
  ASSERT_TRUE(mine.ok());
  ASSERT_EQ(mine->status, 200) << mine->body;
  EXPECT_EQ(IntField(mine->body, "status_code"), 200);
  EXPECT_EQ(mine->body.find("hello log"), std::string::npos);  // the caller is not the owner
  auto owners = owner_->session().Get("/api/v1/executions/" + id);
  ASSERT_TRUE(owners.ok());
  EXPECT_EQ(owners->status, 404);  // another organization's execution
  auto own_run = Invoke(*g_system, owner_key_, fn, "", R"({"event": {}})");
  std::string own_id = SummaryOf(own_run).execution_id;
  auto with_logs = owner_->session().Get("/api/v1/executions/" + own_id);
  ASSERT_TRUE(with_logs.ok());
  EXPECT_NE(StringField(with_logs->body, "logs").find("hello log"), std::string::npos)
      << with_logs->body;
}

}  // namespace
}  // namespace toolgate::testing
