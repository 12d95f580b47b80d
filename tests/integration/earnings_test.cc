// Publishers' earnings, payouts and the whole-ledger identity (docs/api.md "Earnings and
// payouts", docs/operations.md "Payouts" and "The ledger identity"), on a system funded by
// operators' grants: a publisher's public priced functions, called by other organizations and
// by the publisher itself.
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <thread>
#include <tuple>

#include "system.h"
#include "toolgate/base/crypto.h"
#include "toolgate/base/time.h"

namespace toolgate::testing {
namespace {

const auto* const kEnv = ::testing::AddGlobalTestEnvironment(
    new SharedSystem({"--funding", "grants"}, {"TOOLGATE_LEDGER_IDENTITY_INTERVAL_MS=200"}));

constexpr const char* kEcho = "function service_handler(event, context) return event end";
// A name a spreadsheet would run as a formula, were the statement to let it.
constexpr const char* kFormulaName = R"(=HYPERLINK(\"http://attacker.example\",\"a, b\"))";
constexpr const char* kFormulaNameText = R"(=HYPERLINK("http://attacker.example","a, b"))";

std::string Bin(const std::string& name) {
  return std::string(TOOLGATE_BIN_DIR) + "/" + name;
}

Result<http::HttpResponse> Grant(Operator& op, const std::string& org_id, int64_t amount) {
  return op.session->Post(
      "/api/v1/admin/organizations/" + org_id + "/credits",
      R"({"amount_micro_usd":)" + std::to_string(amount) + R"(,"reason":"earnings test"})");
}

Result<http::HttpResponse> Payout(http::HttpClient& client, const std::string& org_id,
                                  int64_t amount, const std::string& reference,
                                  const std::string& key = "") {
  http::HeaderList headers;
  if (!key.empty()) headers.emplace_back("Idempotency-Key", key);
  return client.Post(
      "/api/v1/admin/organizations/" + org_id + "/payouts",
      R"({"amount_micro_usd":)" + std::to_string(amount) + R"(,"reference":")" + reference + "\"}",
      headers);
}

// One statement row: (date, function_id) -> {calls, gross, commission, net}.
using Key = std::pair<std::string, std::string>;
using Sums = std::map<Key, std::tuple<int64_t, int64_t, int64_t, int64_t>>;

// What the ledger's revenue rows say, grouped as the statement groups them.
Sums RevenueRows(Account& publisher) {
  Sums sums;
  for (auto& row : publisher.Ledger()) {
    if (row["type"] != "revenue") continue;
    auto& [calls, gross, commission, net] =
        sums[{row["created_at"].substr(0, 10), row["function_id"]}];
    const int64_t fee = std::stoll(row["function_micro_usd"]);
    const int64_t amount = std::stoll(row["amount_micro_usd"]);
    calls += 1;
    gross += fee;
    commission += fee - amount;
    net += amount;
  }
  return sums;
}

int64_t Int(simdjson::dom::element e, const char* field) {
  int64_t v = 0;
  EXPECT_EQ(e[field].get_int64().get(v), simdjson::SUCCESS) << field;
  return v;
}

std::string Str(simdjson::dom::element e, const char* field) {
  std::string_view v;
  if (e[field].get_string().get(v) != simdjson::SUCCESS) return "<null>";
  return std::string(v);
}

// The statement's items as Sums, and each function's name.
Sums StatementRows(const std::string& body, std::map<std::string, std::string>* names = nullptr) {
  Sums sums;
  auto doc = Json(body);
  simdjson::dom::array items;
  EXPECT_EQ(doc.root["items"].get_array().get(items), simdjson::SUCCESS) << body;
  for (simdjson::dom::element item : items) {
    sums[{Str(item, "date"), Str(item, "function_id")}] = {
        Int(item, "calls"), Int(item, "gross_micro_usd"), Int(item, "commission_micro_usd"),
        Int(item, "net_micro_usd")};
    if (names) (*names)[Str(item, "function_id")] = Str(item, "function_name");
  }
  return sums;
}

// RFC 4180 records: quoted fields may hold commas, doubled quotes and line breaks.
std::vector<std::vector<std::string>> ParseCsv(const std::string& text) {
  std::vector<std::vector<std::string>> records(1, std::vector<std::string>(1));
  bool quoted = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        records.back().back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        records.back().back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      records.back().emplace_back();
    } else if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') {
      records.emplace_back(1);
      ++i;
    } else {
      records.back().back() += c;
    }
  }
  if (records.back().size() == 1 && records.back()[0].empty()) records.pop_back();
  return records;
}

int64_t Payable(Account& account) {
  auto r = account.session().Get("/api/v1/billing/earnings");
  EXPECT_TRUE(r.ok() && r->status == 200) << (r.ok() ? r->body : r.status().ToString());
  return r.ok() ? IntField(r->body, "payable_micro_usd") : -1;
}

// A publisher with two public priced functions and organizations that call them.
class EarningsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    op_ = CreateOperator(*g_system);
    ASSERT_NE(op_.session, nullptr);
    publisher_ = std::make_unique<Account>(*g_system, "Publisher");
    ASSERT_EQ(Grant(op_, publisher_->org_id(), 1'000'000)->status, 201);
    weather_ = publisher_->CreateFunction("Weather, daily",
                                          R"("visibility":"public","price_micro_usd":1000)");
    formula_ =
        publisher_->CreateFunction(kFormulaName, R"("visibility":"public","price_micro_usd":333)");
    for (const auto& fn : {weather_, formula_}) {
      ASSERT_EQ(publisher_->PublishLua(fn, "1.0", kEcho).status, 201);
    }
    publisher_key_ = publisher_->CreateKey();
  }

  // A new organization with credit and an invoke key, both functions in its workspace.
  std::pair<std::unique_ptr<Account>, std::string> Payer(const std::string& name) {
    auto payer = std::make_unique<Account>(*g_system, name);
    EXPECT_EQ(Grant(op_, payer->org_id(), 5'000'000)->status, 201);
    payer->AddToWorkspace(weather_);
    payer->AddToWorkspace(formula_);
    std::string key = payer->CreateKey();
    return {std::move(payer), key};
  }

  void Call(const std::string& key, const std::string& fn, int times) {
    for (int i = 0; i < times; ++i) {
      auto r = Invoke(*g_system, key, fn, "", R"({"event": {"n": 1}})");
      ASSERT_EQ(r.status, 200) << r.body;
    }
  }

  Operator op_;
  std::unique_ptr<Account> publisher_;
  std::string weather_, formula_, publisher_key_;
};

TEST_F(EarningsTest, EarningsAreTheLedgersRevenueRowsPerDayAndFunction) {
  auto [a, a_key] = Payer("Payer A");
  auto [b, b_key] = Payer("Payer B");
  auto [c, c_key] = Payer("Payer C");
  Call(a_key, weather_, 3);
  Call(b_key, weather_, 2);
  Call(b_key, formula_, 2);
  Call(c_key, formula_, 1);
  // The publisher's own calls pay no fee and earn nothing.
  Call(publisher_key_, weather_, 2);

  auto r = publisher_->session().Get("/api/v1/billing/earnings");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->status, 200) << r->body;
  std::map<std::string, std::string> names;
  const Sums statement = StatementRows(r->body, &names);
  const Sums ledger = RevenueRows(*publisher_);
  EXPECT_EQ(statement, ledger) << r->body;
  int64_t calls = 0, gross = 0, net = 0;
  for (const auto& [key, row] : ledger) {
    calls += std::get<0>(row);
    gross += std::get<1>(row);
    net += std::get<3>(row);
  }
  EXPECT_EQ(calls, 8);  // 5 + 3 paid calls; the 2 own ones are not there
  EXPECT_EQ(gross, 5 * 1000 + 3 * 333);
  auto doc = Json(r->body);
  simdjson::dom::element totals = doc.root["totals"].value();
  EXPECT_EQ(Int(totals, "calls"), calls);
  EXPECT_EQ(Int(totals, "gross_micro_usd"), gross);
  EXPECT_EQ(Int(totals, "net_micro_usd"), net);
  EXPECT_EQ(Int(totals, "commission_micro_usd"), gross - net);
  EXPECT_EQ(IntField(r->body, "earned_micro_usd"), net);
  EXPECT_EQ(IntField(r->body, "payable_micro_usd"), net);
  EXPECT_EQ(StringField(r->body, "organization_id"), publisher_->org_id());
  EXPECT_EQ(names[weather_], "Weather, daily");
  EXPECT_EQ(names[formula_], kFormulaNameText);

  // A payer earned nothing, and its spending is no earnings.
  auto payer = a->session().Get("/api/v1/billing/earnings");
  ASSERT_TRUE(payer.ok() && payer->status == 200);
  EXPECT_TRUE(StatementRows(payer->body).empty()) << payer->body;
  EXPECT_EQ(IntField(payer->body, "payable_micro_usd"), 0);

  // The CSV statement says the same, with the formula made inert.
  auto csv = publisher_->session().Get("/api/v1/billing/earnings", {{"Accept", "text/csv"}});
  ASSERT_TRUE(csv.ok()) << csv.status().ToString();
  ASSERT_EQ(csv->status, 200) << csv->body;
  EXPECT_EQ(csv->Header("content-type"), "text/csv; charset=utf-8");
  EXPECT_NE(csv->Header("content-disposition").find("attachment; filename=\"toolgate-earnings-"),
            std::string::npos)
      << csv->Header("content-disposition");
  auto records = ParseCsv(csv->body);
  ASSERT_EQ(records.size(), statement.size() + 1) << csv->body;
  EXPECT_EQ(records[0],
            (std::vector<std::string>{"date", "function_id", "function_name", "calls",
                                      "gross_micro_usd", "commission_micro_usd", "net_micro_usd"}));
  Sums from_csv;
  for (size_t i = 1; i < records.size(); ++i) {
    const auto& f = records[i];
    ASSERT_EQ(f.size(), 7u) << csv->body;
    from_csv[{f[0], f[1]}] = {std::stoll(f[3]), std::stoll(f[4]), std::stoll(f[5]),
                              std::stoll(f[6])};
    EXPECT_EQ(f[2], f[1] == formula_ ? "'" + std::string(kFormulaNameText) : "Weather, daily");
  }
  EXPECT_EQ(from_csv, statement);
}

// A deleted function's earnings stay (they are the ledger's), listed by id without a name.
TEST_F(EarningsTest, ADeletedFunctionsEarningsStayWithoutAName) {
  auto [payer, key] = Payer("Payer");
  Call(key, formula_, 2);
  auto deleted = publisher_->session().Delete("/api/v1/functions/" + formula_);
  ASSERT_TRUE(deleted.ok());
  ASSERT_LT(deleted->status, 300) << deleted->body;
  auto r = publisher_->session().Get("/api/v1/billing/earnings");
  ASSERT_TRUE(r.ok() && r->status == 200) << (r.ok() ? r->body : "");
  std::map<std::string, std::string> names;
  EXPECT_EQ(StatementRows(r->body, &names), RevenueRows(*publisher_));
  ASSERT_EQ(names.count(formula_), 1u) << r->body;
  EXPECT_EQ(names[formula_], "<null>");  // null in the JSON
}

TEST_F(EarningsTest, APeriodIsHalfOpenUtcAndABadOneIsA400) {
  auto [payer, key] = Payer("Payer");
  Call(key, weather_, 1);
  auto rows = RevenueRows(*publisher_);
  ASSERT_EQ(rows.size(), 1u);
  const std::string day = rows.begin()->first.first;
  auto r = publisher_->session().Get("/api/v1/billing/earnings?from=" + day + "&to=" + day +
                                     "T23:59:59.999Z");
  ASSERT_TRUE(r.ok() && r->status == 200) << (r.ok() ? r->body : "");
  EXPECT_EQ(StatementRows(r->body), rows);
  EXPECT_EQ(StringField(r->body, "from"), day + "T00:00:00Z");
  // The day ends where the next begins: nothing at or after to.
  const std::string week_before = FormatRfc3339(*ParseRfc3339(day) - 7 * 24 * 3600 * 1000LL);
  auto before =
      publisher_->session().Get("/api/v1/billing/earnings?from=" + week_before + "&to=" + day);
  ASSERT_TRUE(before.ok() && before->status == 200) << (before.ok() ? before->body : "");
  EXPECT_TRUE(StatementRows(before->body).empty()) << before->body;
  // The payable amount is all time, whatever the period.
  EXPECT_EQ(IntField(before->body, "payable_micro_usd"), IntField(r->body, "payable_micro_usd"));

  for (const char* query : {"from=yesterday", "from=2026-12-01&to=2026-11-01",
                            "from=2020-01-01&to=2022-01-01", "to=2026-13-40"}) {
    auto bad = publisher_->session().Get(std::string("/api/v1/billing/earnings?") + query);
    ASSERT_TRUE(bad.ok());
    EXPECT_EQ(bad->status, 400) << query << ": " << bad->body;
    EXPECT_EQ(StringField(bad->body, "code"), "invalid_period") << bad->body;
  }
}

TEST_F(EarningsTest, APayoutIsPaidOnceAndNeverMoreThanIsPayable) {
  auto [payer, key] = Payer("Payer");
  Call(key, weather_, 4);
  Call(key, formula_, 3);
  const int64_t payable = Payable(*publisher_);
  ASSERT_GT(payable, 1000);
  const int64_t balance = publisher_->Balance();

  // More than payable: refused, nothing recorded.
  auto above = Payout(*op_.session, publisher_->org_id(), payable + 1, "too much");
  ASSERT_TRUE(above.ok());
  EXPECT_EQ(above->status, 409) << above->body;
  EXPECT_EQ(StringField(above->body, "code"), "payout_exceeds_payable") << above->body;
  // Granted credit is no earnings: the payer has a balance and nothing to be paid.
  auto granted = Payout(*op_.session, payer->org_id(), 1, "granted money");
  ASSERT_TRUE(granted.ok());
  EXPECT_EQ(granted->status, 409) << granted->body;
  // Only a signed-in operator records payouts.
  auto own = Payout(publisher_->session(), publisher_->org_id(), 1, "to myself");
  ASSERT_TRUE(own.ok());
  EXPECT_EQ(own->status, 403) << own->body;
  auto no_reference =
      op_.session->Post("/api/v1/admin/organizations/" + publisher_->org_id() + "/payouts",
                        R"({"amount_micro_usd":1})");
  ASSERT_TRUE(no_reference.ok());
  EXPECT_EQ(no_reference->status, 422) << no_reference->body;
  EXPECT_EQ(publisher_->Balance(), balance);
  EXPECT_EQ(Payable(*publisher_), payable);

  // A repeated Idempotency-Key pays once.
  auto first = Payout(*op_.session, publisher_->org_id(), 1000, "SEPA 2026-12-02 #1", "payout-1");
  ASSERT_TRUE(first.ok());
  ASSERT_EQ(first->status, 201) << first->body;
  EXPECT_EQ(IntField(first->body, "payable_after_micro_usd"), payable - 1000);
  auto again = Payout(*op_.session, publisher_->org_id(), 1000, "SEPA 2026-12-02 #1", "payout-1");
  ASSERT_TRUE(again.ok());
  ASSERT_EQ(again->status, 201) << again->body;
  EXPECT_EQ(StringField(again->body, "payout_id"), StringField(first->body, "payout_id"));
  auto other = Payout(*op_.session, publisher_->org_id(), 2000, "SEPA 2026-12-02 #1", "payout-1");
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(other->status, 422) << other->body;
  EXPECT_EQ(publisher_->Balance(), balance - 1000);
  EXPECT_EQ(Payable(*publisher_), payable - 1000);

  // Ten operators pay the rest at once: one payout succeeds, nothing is paid twice.
  const int64_t rest = payable - 1000;
  std::atomic<int> paid{0}, refused{0}, other_status{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 10; ++i) {
    threads.emplace_back([&, i] {
      auto client = g_system->Client();
      client->SetDefaultHeader("X-Toolgate-CSRF", "1");
      auto login =
          client->Post("/api/v1/auth/login",
                       R"({"email":")" + op_.email + R"(","password":")" + op_.password + "\"}");
      if (!login.ok() || login->status != 200) {
        ++other_status;
        return;
      }
      auto r = Payout(*client, publisher_->org_id(), rest, "race " + std::to_string(i),
                      "race-" + std::to_string(i));
      if (r.ok() && r->status == 201) {
        ++paid;
      } else if (r.ok() && r->status == 409 &&
                 StringField(r->body, "code") == "payout_exceeds_payable") {
        ++refused;
      } else {
        ++other_status;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(paid.load(), 1);
  EXPECT_EQ(refused.load(), 9);
  EXPECT_EQ(other_status.load(), 0);
  EXPECT_EQ(publisher_->Balance(), balance - payable);
  EXPECT_EQ(Payable(*publisher_), 0);

  // Both payouts are listed for the member and for operators, and in the period's statement.
  auto mine = publisher_->session().Get("/api/v1/billing/payouts");
  ASSERT_TRUE(mine.ok() && mine->status == 200) << (mine.ok() ? mine->body : "");
  auto listed = Json(mine->body);
  EXPECT_EQ(listed.root["items"].get_array().value().size(), 2u) << mine->body;
  auto theirs =
      op_.session->Get("/api/v1/admin/organizations/" + publisher_->org_id() + "/payouts");
  ASSERT_TRUE(theirs.ok() && theirs->status == 200) << (theirs.ok() ? theirs->body : "");
  auto admin = Json(theirs->body);
  simdjson::dom::array items = admin.root["items"].get_array().value();
  ASSERT_EQ(items.size(), 2u);
  EXPECT_EQ(Str(items.at(1)["recorded_by"].value(), "email"), op_.email);
  EXPECT_EQ(Str(items.at(1), "reference"), "SEPA 2026-12-02 #1");
  auto statement = publisher_->session().Get("/api/v1/billing/earnings");
  ASSERT_TRUE(statement.ok() && statement->status == 200);
  EXPECT_EQ(IntField(statement->body, "payouts_micro_usd"), payable);
  EXPECT_EQ(IntField(statement->body, "paid_out_micro_usd"), payable);
  // The payouts are debits in the ledger, and the balance is still its sum.
  int64_t ledger_payouts = 0;
  for (auto& row : publisher_->Ledger()) {
    if (row["type"] == "payout") ledger_payouts += std::stoll(row["amount_micro_usd"]);
  }
  EXPECT_EQ(ledger_payouts, -payable);
}

TEST_F(EarningsTest, TheCliPaysOutAndPrintsTheStatement) {
  auto [payer, key] = Payer("Payer");
  Call(key, weather_, 2);
  const int64_t payable = Payable(*publisher_);
  ASSERT_GT(payable, 0);
  const std::string config = g_system->data_dir() + "/cli-earnings-" + HexEncode(RandomBytes(4));
  auto toolgate = [&](const std::string& args) {
    return RunCommand("env -u TOOLGATE_API_KEY -u TOOLGATE_PROFILE XDG_CONFIG_HOME=" + config +
                      " TOOLGATE_URL=" + g_system->url() + " " + Bin("toolgate") + " " + args +
                      " 2>&1");
  };
  auto [login_status, login_out] =
      toolgate("login --email " + op_.email + " --password " + op_.password);
  ASSERT_EQ(login_status, 0) << login_out;
  auto [too_much, too_much_out] = toolgate("admin payout --organization " + publisher_->org_id() +
                                           " --amount-usd 1000 --reference 'wire 1'");
  EXPECT_EQ(too_much, 1) << too_much_out;
  const std::string usd = std::to_string(payable / 1'000'000) + "." +
                          std::string(6 - std::to_string(payable % 1'000'000).size(), '0') +
                          std::to_string(payable % 1'000'000);
  auto [status, out] =
      toolgate("admin payout --organization " + publisher_->org_id() + " --amount-usd " + usd +
               " --reference 'wire 2' --idempotency-key w2");
  EXPECT_EQ(status, 0) << out;
  EXPECT_EQ(Payable(*publisher_), 0);
  auto [list_status, list_out] = toolgate("admin payouts --organization " + publisher_->org_id());
  EXPECT_EQ(list_status, 0) << list_out;
  EXPECT_NE(list_out.find("wire 2"), std::string::npos) << list_out;

  std::string member_key = publisher_->CreateKey(R"(["manage"])");
  auto [csv_status, csv_out] =
      RunCommand("env -u TOOLGATE_PROFILE XDG_CONFIG_HOME=" + config +
                 "-member TOOLGATE_URL=" + g_system->url() + " TOOLGATE_API_KEY=" + member_key +
                 " " + Bin("toolgate") + " earnings --csv");
  EXPECT_EQ(csv_status, 0) << csv_out;
  EXPECT_EQ(csv_out.rfind("date,function_id,function_name,calls,", 0), 0u) << csv_out;
  EXPECT_NE(csv_out.find(weather_), std::string::npos) << csv_out;
}

// The admin port's value of a gauge without labels; nullopt while it is not exported.
std::optional<double> BillingGauge(const std::string& name) {
  auto state = Json(g_system->State());
  std::string_view url;
  if (state.root["admin"]["billing"].get_string().get(url) != simdjson::SUCCESS)
    return std::nullopt;
  http::HttpClient client{std::string(url)};
  auto r = client.Get("/metrics");
  if (!r.ok() || r->status != 200) return std::nullopt;
  const std::string prefix = "\n" + name + " ";
  size_t at = r->body.find(prefix);
  if (at == std::string::npos) return std::nullopt;
  return std::stod(r->body.substr(at + prefix.size()));
}

// `toolgate-billing reconcile` against the system's stores; exit status and output.
std::pair<int, std::string> Reconcile(bool dry_run) {
  auto state = Json(g_system->State());
  const std::string keys = g_system->data_dir() + "/keys/";
  std::string env =
      "TOOLGATE_REDIS_URL=" + std::string(std::string_view(state.root["redis_url"])) +
      " TOOLGATE_POSTGRES_URL=" + std::string(std::string_view(state.root["postgres_url"])) +
      " TOOLGATE_NATS_URL=" + std::string(std::string_view(state.root["nats_url"])) +
      " TOOLGATE_REDIS_PASSWORD_FILE=" + keys + "redis.password" +
      " TOOLGATE_POSTGRES_PASSWORD_FILE=" + keys + "postgres.password";
  return RunCommand(env + " " + Bin("toolgate-billing") + " reconcile" +
                    (dry_run ? " --dry-run" : ""));
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

TEST_F(EarningsTest, TheLedgerIdentityHoldsAndATamperedBalanceBreaksIt) {
  auto [payer, key] = Payer("Payer");
  Call(key, weather_, 3);
  Call(publisher_key_, formula_, 1);
  ASSERT_EQ(Payout(*op_.session, publisher_->org_id(), Payable(*publisher_), "wire")->status, 201);

  // Once the last captures are in, every micro-USD granted is a balance, income or a payout.
  std::string out;
  ASSERT_TRUE(WaitUntil(
      [&] {
        auto r = Reconcile(true);
        out = r.second;
        return r.first == 0;
      },
      20'000, "reconcile to find the identity holding"))
      << out;
  EXPECT_NE(out.find(R"("difference_micro_usd":0,"holds":true)"), std::string::npos) << out;
  ASSERT_TRUE(
      WaitUntil([] { return BillingGauge("toolgate_billing_ledger_imbalance_micro_usd") == 0.0; },
                20'000, "the imbalance gauge to read 0"));
  auto checked = BillingGauge("toolgate_billing_ledger_identity_checked_timestamp_seconds");
  ASSERT_TRUE(checked.has_value());

  // A balance edited in Redis (money from nowhere) breaks it by exactly that much.
  const std::string balance_key = "tg:bal:" + payer->org_id();
  RedisCli("INCRBY " + balance_key + " 12345");
  auto [dry_status, dry_out] = Reconcile(true);
  EXPECT_EQ(dry_status, 1) << dry_out;
  EXPECT_NE(dry_out.find(R"("difference_micro_usd":-12345,"holds":false)"), std::string::npos)
      << dry_out;
  ASSERT_TRUE(WaitUntil(
      [] { return BillingGauge("toolgate_billing_ledger_imbalance_micro_usd") == -12345.0; },
      20'000, "the imbalance gauge to show the tampered balance"));
  EXPECT_GT(*BillingGauge("toolgate_billing_ledger_identity_checked_timestamp_seconds"), *checked);

  // Repaired from the ledger, it holds again.
  auto [repair_status, repair_out] = Reconcile(false);
  EXPECT_EQ(repair_status, 0) << repair_out;
  ASSERT_TRUE(
      WaitUntil([] { return BillingGauge("toolgate_billing_ledger_imbalance_micro_usd") == 0.0; },
                20'000, "the imbalance gauge to read 0 again"));
}

}  // namespace
}  // namespace toolgate::testing
