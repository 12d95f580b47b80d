// Budget alerts and notification endpoints through the real API (docs/api.md "Notifications"):
// an organization sets an endpoint (a receiver on the loopback that this test runs; the system
// starts with --webhook-allow-private-targets), spends a key's daily limit to 80 % and then to
// 100 %, and exactly one signed budget.threshold_reached event per threshold arrives, retried
// with the same webhook-id after a 500; a concurrent burst across an organization's limit sends
// each threshold once; rotate-secret and the test event; and, on a system without the flag, a
// loopback URL refused when set and a name resolving to the loopback refused when delivered.
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "system.h"
#include "toolgate/base/crypto.h"
#include "toolgate/base/time.h"
#include "toolgate/webhook/signature.h"
#include "webhook_receiver.h"

namespace toolgate::testing {
namespace {

const auto* const kEnv = ::testing::AddGlobalTestEnvironment(
    new SharedSystem({}, {"TOOLGATE_WEBHOOK_ALLOW_PRIVATE_TARGETS=true"}));

constexpr const char* kEcho = "function service_handler(event, context) return event end";
// With memory_mb 1 a call's compute costs the 1 µUSD minimum at its timeout and at any real
// runtime, so its hold equals its charge: a limit of N µUSD is exactly N calls.
constexpr const char* kOneMicroUsdCall = R"("memory_mb":1,"timeout_ms":1000)";

using Receiver = WebhookReceiver;

// What a budget.threshold_reached event says.
struct Alert {
  std::string scope, key_id, period, period_start, resets_at, organization_id;
  int64_t threshold = 0, limit = 0, spent = 0;
};

std::optional<Alert> AlertOf(const Delivery& d) {
  auto doc = ParseJson(d.body);
  if (!doc.ok()) return std::nullopt;
  std::string_view type;
  if (doc->root["type"].get_string().get(type) || type != "budget.threshold_reached") {
    return std::nullopt;
  }
  Alert a;
  auto data = doc->root["data"];
  auto text = [](simdjson::dom::element e) {
    std::string_view v;
    return e.get_string().get(v) ? std::string() : std::string(v);
  };
  a.organization_id = text(data["organization_id"]);
  a.scope = text(data["budget"]["scope"]);
  a.key_id = text(data["budget"]["key_id"]);
  a.period = text(data["budget"]["period"]);
  a.period_start = text(data["budget"]["period_start"]);
  a.resets_at = text(data["budget"]["resets_at"]);
  if (data["threshold_percent"].get(a.threshold) || data["limit_micro_usd"].get(a.limit) ||
      data["spent_micro_usd"].get(a.spent)) {
    return std::nullopt;
  }
  return a;
}

// Verifies the Standard Webhooks signature of d with secret, recomputed here from the raw body.
bool Verifies(const Delivery& d, const std::string& secret) {
  auto key = webhook::SigningKey(secret);
  if (!key || d.timestamp.empty()) return false;
  const int64_t timestamp = std::stoll(d.timestamp);
  const std::string content = d.id + "." + d.timestamp + "." + d.body;
  const std::string expected = "v1," + Base64Encode(HmacSha256(*key, content));
  // The timestamp is the attempt's: within the specification's five minutes of now.
  const int64_t now_s = NowMs() / 1000;
  return d.signature == expected && std::abs(now_s - timestamp) < 300 &&
         webhook::Verify(*key, d.id, timestamp, d.body, d.signature);
}

class BudgetAlertsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { InitCrypto(); }

  void SetUp() override {
    account_ = std::make_unique<Account>(*g_system, "Alerts");
    account_->TopUp(10'000'000);
    function_id_ = account_->CreateFunction("echo");
    ASSERT_EQ(account_->PublishLua(function_id_, "1.0", kEcho, kOneMicroUsdCall).status, 201);
  }

  http::HttpResponse Do(const std::string& method, const std::string& path,
                        const std::string& body = "") {
    auto r = account_->session().Send(method, path, body);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : http::HttpResponse{};
  }

  // Sets the endpoint; returns its secret.
  std::string SetEndpoint(const std::string& url) {
    auto r = Do("PUT", "/api/v1/billing/notifications", R"({"url":")" + url + R"("})");
    EXPECT_EQ(r.status, 201) << r.body;
    return StringField(r.body, "secret");
  }

  // A new key of the organization with a daily limit; returns {id, secret}.
  std::pair<std::string, std::string> KeyWithDailyLimit(int64_t limit) {
    auto r = Do("POST", "/api/v1/api-keys", R"({"name":"limited"})");
    EXPECT_EQ(r.status, 201) << r.body;
    const std::string id = StringField(r.body, "id");
    auto set = Do("PUT", "/api/v1/api-keys/" + id + "/budget",
                  R"({"daily_micro_usd":)" + std::to_string(limit) + "}");
    EXPECT_EQ(set.status, 200) << set.body;
    return {id, StringField(r.body, "key")};
  }

  int Call(const std::string& key) {
    return Invoke(*g_system, key, function_id_, "1.0", R"({"event":{"n":1}})").status;
  }

  // The alerts the receiver took for a key's budget (or the organization's: key_id ""), by
  // threshold, one entry per delivery.
  static std::map<int64_t, std::vector<Delivery>> AlertsFor(Receiver& receiver,
                                                            const std::string& key_id) {
    std::map<int64_t, std::vector<Delivery>> out;
    for (const Delivery& d : receiver.Deliveries()) {
      auto alert = AlertOf(d);
      if (alert && alert->key_id == key_id) out[alert->threshold].push_back(d);
    }
    return out;
  }

  // Spends a fresh key's limit of 1 µUSD with one call and waits for its 100 % alert: every
  // check queued before that call has then been made and every alert it sent has had its
  // first attempt (checks and first attempts go in order), so what has not arrived by then was
  // never sent.
  void Barrier(Receiver& receiver) {
    const auto [id, key] = KeyWithDailyLimit(1);
    ASSERT_EQ(Call(key), 200);
    ASSERT_TRUE(WaitUntil([&] { return AlertsFor(receiver, id).count(100) == 1; }, 30'000,
                          "the barrier key's 100 % alert"));
  }

  std::unique_ptr<Account> account_;
  std::string function_id_;
};

TEST_F(BudgetAlertsTest, EightyAndAHundredPercentArriveOnceEachSignedAndRetriedWithOneId) {
  Receiver receiver(/*failures=*/1);  // the first delivery is answered 500
  const std::string secret = SetEndpoint(receiver.Url());
  ASSERT_TRUE(secret.starts_with("whsec_")) << secret;
  // Shown once: GET never answers it.
  auto shown = Do("GET", "/api/v1/billing/notifications");
  ASSERT_EQ(shown.status, 200) << shown.body;
  EXPECT_EQ(shown.body.find("whsec_"), std::string::npos) << shown.body;
  EXPECT_EQ(StringField(shown.body, "url"), receiver.Url());
  EXPECT_NE(shown.body.find(R"("events":["budget.threshold_reached"])"), std::string::npos);

  const auto [key_id, key] = KeyWithDailyLimit(10);
  for (int i = 0; i < 7; ++i) ASSERT_EQ(Call(key), 200) << i;  // 70 %
  ASSERT_EQ(Call(key), 200);                                   // 80 %
  ASSERT_TRUE(WaitUntil([&] { return AlertsFor(receiver, key_id)[80].size() == 2; }, 30'000,
                        "the 80 % alert, answered 500 and then retried"));
  ASSERT_EQ(Call(key), 200);  // 90 %
  ASSERT_EQ(Call(key), 200);  // 100 %
  EXPECT_EQ(Call(key), 402);  // the limit holds
  ASSERT_TRUE(WaitUntil([&] { return AlertsFor(receiver, key_id).count(100) == 1; }, 30'000,
                        "the 100 % alert"));
  Barrier(receiver);

  auto alerts = AlertsFor(receiver, key_id);
  ASSERT_EQ(alerts.size(), 2u);
  // 80 %: two attempts of one message: one webhook-id, each attempt signed for its own time.
  ASSERT_EQ(alerts[80].size(), 2u);
  EXPECT_EQ(alerts[80][0].id, alerts[80][1].id);
  EXPECT_EQ(alerts[80][0].body, alerts[80][1].body);
  ASSERT_EQ(alerts[100].size(), 1u);
  EXPECT_NE(alerts[100][0].id, alerts[80][0].id);
  for (const Delivery& d : {alerts[80][0], alerts[80][1], alerts[100][0]}) {
    EXPECT_TRUE(d.id.starts_with("msg_")) << d.id;
    EXPECT_TRUE(Verifies(d, secret)) << d.body;
    EXPECT_FALSE(Verifies(d, webhook::NewSecret()));
  }
  const Alert eighty = *AlertOf(alerts[80][0]);
  EXPECT_EQ(eighty.organization_id, account_->org_id());
  EXPECT_EQ(eighty.scope, "key");
  EXPECT_EQ(eighty.period, "day");
  EXPECT_EQ(eighty.limit, 10);
  EXPECT_EQ(eighty.spent, 8);
  const int64_t day_ms = 86'400'000;
  EXPECT_EQ(eighty.period_start, FormatRfc3339(NowMs() / day_ms * day_ms));
  EXPECT_EQ(eighty.resets_at, FormatRfc3339((NowMs() / day_ms + 1) * day_ms));
  const Alert hundred = *AlertOf(alerts[100][0]);
  EXPECT_EQ(hundred.limit, 10);
  EXPECT_EQ(hundred.spent, 10);
  // Tampering shows: another body does not verify under the signature.
  Delivery forged = alerts[100][0];
  forged.body.replace(forged.body.find("\"spent_micro_usd\":10"), 20, "\"spent_micro_usd\":11");
  EXPECT_FALSE(Verifies(forged, secret));
}

TEST_F(BudgetAlertsTest, AConcurrentBurstAcrossTheOrganizationsLimitAlertsEachThresholdOnce) {
  Receiver receiver;
  const std::string secret = SetEndpoint(receiver.Url());
  auto set = Do("PUT", "/api/v1/billing/budget", R"({"daily_micro_usd":20})");
  ASSERT_EQ(set.status, 200) << set.body;
  const std::string key = account_->CreateKey();
  std::atomic<int> ok{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 24; ++i) {
    threads.emplace_back([&] {
      if (Call(key) == 200) ++ok;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), 20);  // the limit is exactly 20 calls
  ASSERT_TRUE(WaitUntil([&] { return AlertsFor(receiver, "").count(100) == 1; }, 30'000,
                        "the organization's 100 % alert"));
  // The org's limit is spent, so the barrier's call needs room: raise it past what was spent
  // (83 %: still past 80 %, so the barrier's checks find 80 % reached and claimed).
  ASSERT_EQ(Do("PUT", "/api/v1/billing/budget", R"({"daily_micro_usd":24})").status, 200);
  Barrier(receiver);
  auto alerts = AlertsFor(receiver, "");
  ASSERT_EQ(alerts[80].size(), 1u);
  ASSERT_EQ(alerts[100].size(), 1u);
  for (const auto& [threshold, deliveries] : alerts) {
    const Alert a = *AlertOf(deliveries[0]);
    EXPECT_EQ(a.scope, "organization");
    EXPECT_EQ(a.limit, 20);
    EXPECT_GE(a.spent * 100, a.limit * threshold);
    EXPECT_TRUE(Verifies(deliveries[0], secret));
  }
}

TEST_F(BudgetAlertsTest, RotatingTheSecretSignsWithTheNewOneAndTheTestEventSaysWhatHappened) {
  Receiver receiver;
  const std::string old_secret = SetEndpoint(receiver.Url());
  auto rotated = Do("POST", "/api/v1/billing/notifications/rotate-secret");
  ASSERT_EQ(rotated.status, 200) << rotated.body;
  const std::string secret = StringField(rotated.body, "secret");
  ASSERT_TRUE(secret.starts_with("whsec_"));
  EXPECT_NE(secret, old_secret);

  auto test = Do("POST", "/api/v1/billing/notifications/test");
  ASSERT_EQ(test.status, 200) << test.body;
  EXPECT_NE(test.body.find(R"("delivered":true,"status_code":200,"error":null)"), std::string::npos)
      << test.body;
  const auto deliveries = receiver.Deliveries();
  ASSERT_EQ(deliveries.size(), 1u);
  EXPECT_EQ(deliveries[0].id, StringField(test.body, "webhook_id"));
  EXPECT_EQ(StringField(deliveries[0].body, "type"), "notification.test");
  EXPECT_TRUE(Verifies(deliveries[0], secret));
  EXPECT_FALSE(Verifies(deliveries[0], old_secret));

  // Replacing the URL keeps the secret and does not show it.
  Receiver other;
  auto replaced = Do("PUT", "/api/v1/billing/notifications", R"({"url":")" + other.Url() + R"("})");
  ASSERT_EQ(replaced.status, 200) << replaced.body;
  EXPECT_EQ(replaced.body.find("secret"), std::string::npos) << replaced.body;
  ASSERT_EQ(Do("POST", "/api/v1/billing/notifications/test").status, 200);
  ASSERT_EQ(other.Deliveries().size(), 1u);
  EXPECT_TRUE(Verifies(other.Deliveries()[0], secret));

  EXPECT_EQ(Do("DELETE", "/api/v1/billing/notifications").status, 204);
  EXPECT_EQ(Do("GET", "/api/v1/billing/notifications").status, 404);
  EXPECT_EQ(Do("POST", "/api/v1/billing/notifications/test").status, 404);
  EXPECT_EQ(Do("DELETE", "/api/v1/billing/notifications").status, 404);
}

TEST_F(BudgetAlertsTest, BadSettingsAreRefusedAndLeaveNothingSet) {
  auto events = Do("PUT", "/api/v1/billing/notifications",
                   R"({"url":"https://hooks.example.com/","events":["invoice.paid"]})");
  EXPECT_EQ(events.status, 422) << events.body;
  auto not_json = Do("PUT", "/api/v1/billing/notifications", "{");
  EXPECT_EQ(not_json.status, 400) << not_json.body;
  auto scheme = Do("PUT", "/api/v1/billing/notifications", R"({"url":"ftp://hooks.example.com/"})");
  EXPECT_EQ(scheme.status, 400) << scheme.body;
  EXPECT_EQ(StringField(scheme.body, "code"), "notification_url_refused");
  EXPECT_EQ(Do("GET", "/api/v1/billing/notifications").status, 404);
}

// Without --webhook-allow-private-targets, as in production.
TEST(BudgetAlertsWithoutPrivateTargetsTest, LoopbackTargetsAreRefusedWhenSetAndWhenDelivered) {
  InitCrypto();
  System system;
  Account account(system, "Guarded");
  Receiver receiver;
  auto put = [&](const std::string& url) {
    auto r = account.session().Send("PUT", "/api/v1/billing/notifications",
                                    R"({"url":")" + url + R"("})");
    EXPECT_TRUE(r.ok());
    return r.ok() ? *r : http::HttpResponse{};
  };
  const auto literal = put(receiver.Url("127.0.0.1", "https"));
  EXPECT_EQ(literal.status, 400) << literal.body;
  EXPECT_EQ(StringField(literal.body, "code"), "notification_url_refused");
  EXPECT_EQ(StringField(literal.body, "detail"),
            "The url must not name a host that is a loopback address.");
  for (const std::string& url :
       {receiver.Url("127.0.0.1", "http"), receiver.Url("[::1]", "https"),
        receiver.Url("[::ffff:127.0.0.1]", "https"), std::string("https://169.254.169.254/"),
        std::string("https://10.0.0.1/hook")}) {
    const auto refused = put(url);
    EXPECT_EQ(refused.status, 400) << url << ": " << refused.body;
    EXPECT_EQ(StringField(refused.body, "code"), "notification_url_refused") << url;
  }
  auto none = account.session().Get("/api/v1/billing/notifications");
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->status, 404);

  // A name is accepted when set; it resolves to the loopback when delivered, and is refused then.
  const auto named = put(receiver.Url("localhost", "https"));
  ASSERT_EQ(named.status, 201) << named.body;
  auto test = account.session().Post("/api/v1/billing/notifications/test", "");
  ASSERT_TRUE(test.ok());
  ASSERT_EQ(test->status, 200) << test->body;
  EXPECT_NE(test->body.find(R"("delivered":false,"status_code":null)"), std::string::npos)
      << test->body;
  EXPECT_EQ(StringField(test->body, "error"),
            "the endpoint's address is not allowed: loopback address");
  EXPECT_TRUE(receiver.Deliveries().empty());
}

}  // namespace
}  // namespace toolgate::testing
