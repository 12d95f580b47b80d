// Calls that outlive a connection, through the real system (docs/api.md "Asynchronous calls",
// "Idempotency keys"): Prefer: respond-async queues a held call in JetStream and answers 202; its
// status and result are read at Location; the organization's concurrency limit queues it
// instead of refusing it; a queued call is cancelled uncharged; a repeated Idempotency-Key runs
// and charges once, and a changed request with a used key is refused.
#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "system.h"
#include "toolgate/webhook/signature.h"
#include "webhook_receiver.h"

namespace toolgate::testing {
namespace {

// One execution in flight per organization, and two queued at most: a slow call fills the
// slot, and the asynchronous calls behind it wait (or are refused once two wait).
// Callbacks go to receivers on the loopback: the operator allows that network, as it would an
// internal one (the platform's own ports stay refused).
const auto* const kEnv = ::testing::AddGlobalTestEnvironment(new SharedSystem(
    {"--concurrency-per-org", "1"},
    {"TOOLGATE_ASYNC_QUEUE_PER_ORG=2", "TOOLGATE_EGRESS_ALLOW_CIDR=127.0.0.1/32"}));

constexpr const char* kEcho = "function service_handler(event, context) return event end";
// Busy for a second or two of CPU: long enough to hold the organization's one slot while the
// test queues calls behind it (the test waits on the hold it reserves, never on time).
constexpr const char* kSlow =
    "function service_handler(event, context) local x = 0 for i = 1, 150000000 do x = x + i end "
    "return {x = x} end";

const http::HeaderList kAsync = {{"Prefer", "respond-async"}};

class AsyncTest : public ::testing::Test {
 protected:
  void SetUp() override {
    account_ = std::make_unique<Account>(*g_system, "Async Caller");
    account_->TopUp(10'000'000);
    key_ = account_->CreateKey();
    echo_ = account_->CreateFunction("echo");
    ASSERT_EQ(account_->PublishLua(echo_, "1.0", kEcho).status, 201);
  }

  http::HttpResponse Call(const std::string& function, const std::string& body,
                          const http::HeaderList& headers = {}) {
    return Invoke(*g_system, key_, function, "1.0", body, headers);
  }

  http::HttpResponse Status(const std::string& execution_id) {
    auto r =
        g_system->Client()->Get("/api/v1/executions/" + execution_id, {{"Authorization", key_}});
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : http::HttpResponse{};
  }

  // Waits until the execution's status is final; returns its last answer.
  http::HttpResponse WaitFinished(const std::string& execution_id) {
    http::HttpResponse last;
    EXPECT_TRUE(WaitUntil(
        [&] {
          last = Status(execution_id);
          const std::string status = StringField(last.body, "status");
          return status != "queued" && status != "running" && !status.empty();
        },
        30'000, "execution " + execution_id + " to finish"));
    return last;
  }

  int64_t Reserved() {
    auto r = account_->session().Get("/api/v1/billing/balance");
    EXPECT_TRUE(r.ok() && r->status == 200);
    return r.ok() ? IntField(r->body, "reserved_micro_usd") : -1;
  }

  // Charges in the ledger for execution_id.
  int Charges(const std::string& execution_id) {
    int n = 0;
    for (const auto& entry : account_->Ledger()) {
      if (entry.at("type") == "charge" && entry.count("execution_id") &&
          entry.at("execution_id") == execution_id) {
        ++n;
      }
    }
    return n;
  }

  // Starts a synchronous call of a slow function on its own thread and returns once its hold
  // is placed (the organization's one slot is taken); join the thread to end it.
  std::thread OccupySlot(const std::string& slow) {
    std::thread t([this, slow] {
      http::HttpResponse r = Call(slow, R"({"event":{}})");
      EXPECT_EQ(r.status, 200) << r.body;
    });
    EXPECT_TRUE(WaitUntil([&] { return Reserved() > 0; }, 20'000, "the slow call's hold"));
    return t;
  }

  std::string PublishSlow() {
    std::string slow = account_->CreateFunction("slow");
    EXPECT_EQ(account_->PublishLua(slow, "1.0", kSlow, R"("timeout_ms":60000)").status, 201);
    return slow;
  }

  std::unique_ptr<Account> account_;
  std::string key_;
  std::string echo_;
};

TEST_F(AsyncTest, QueuedCallRunsAndItsResultIsReadAtLocation) {
  http::HttpResponse accepted = Call(echo_, R"({"event":{"city":"Paris"}})", kAsync);
  ASSERT_EQ(accepted.status, 202) << accepted.body;
  const std::string id = StringField(accepted.body, "execution_id");
  ASSERT_FALSE(id.empty());
  EXPECT_EQ(StringField(accepted.body, "status"), "queued");
  EXPECT_EQ(accepted.Header("Location"), "/api/v1/executions/" + id);
  EXPECT_EQ(StringField(accepted.body, "status_url"), "/api/v1/executions/" + id);
  EXPECT_EQ(accepted.Header("Preference-Applied"), "respond-async");

  http::HttpResponse done = WaitFinished(id);
  ASSERT_EQ(done.status, 200) << done.body;
  EXPECT_EQ(StringField(done.body, "status"), "succeeded") << done.body;
  auto doc = Json(done.body);
  simdjson::dom::element result;
  ASSERT_EQ(doc.root["result"].get(result), simdjson::SUCCESS) << done.body;
  int64_t status_code = 0;
  ASSERT_EQ(result["statusCode"].get(status_code), simdjson::SUCCESS);
  EXPECT_EQ(status_code, 200);
  std::string_view body;
  ASSERT_EQ(result["body"].get(body), simdjson::SUCCESS);
  EXPECT_NE(body.find("Paris"), std::string_view::npos);
  std::string_view summary_id;
  ASSERT_EQ(result["summary"]["execution_id"].get(summary_id), simdjson::SUCCESS);
  EXPECT_EQ(summary_id, id);
  // Charged exactly once, and nothing stays held.
  EXPECT_EQ(Charges(id), 1);
  EXPECT_TRUE(WaitUntil([&] { return Reserved() == 0; }, 10'000, "the hold to be captured"));

  // Another organization cannot see it.
  Account other(*g_system, "Async Other");
  auto foreign = other.session().Get("/api/v1/executions/" + id);
  ASSERT_TRUE(foreign.ok());
  EXPECT_EQ(foreign->status, 404);
}

TEST_F(AsyncTest, ConcurrencyLimitQueuesAsynchronousCallsAndTheQueueIsBounded) {
  const std::string slow = PublishSlow();
  std::thread occupant = OccupySlot(slow);
  // With the one slot taken, a synchronous call is refused...
  http::HttpResponse refused = Call(echo_, R"({"event":{"n":0}})");
  EXPECT_EQ(refused.status, 429) << refused.body;
  EXPECT_EQ(StringField(refused.body, "code"), "concurrency_limit");
  // ... while asynchronous ones wait in the queue, two at most.
  std::vector<std::string> ids;
  for (int i = 1; i <= 2; ++i) {
    http::HttpResponse r = Call(echo_, R"({"event":{"n":)" + std::to_string(i) + "}}", kAsync);
    ASSERT_EQ(r.status, 202) << r.body;
    ids.push_back(StringField(r.body, "execution_id"));
  }
  http::HttpResponse full = Call(echo_, R"({"event":{"n":3}})", kAsync);
  EXPECT_EQ(full.status, 429) << full.body;
  EXPECT_EQ(StringField(full.body, "code"), "queue_full");
  EXPECT_FALSE(full.Header("Retry-After").empty());
  occupant.join();
  for (const std::string& id : ids) {
    http::HttpResponse done = WaitFinished(id);
    EXPECT_EQ(StringField(done.body, "status"), "succeeded") << done.body;
    EXPECT_EQ(Charges(id), 1);
  }
}

TEST_F(AsyncTest, CancelledQueuedCallNeverRunsAndIsNotCharged) {
  const std::string slow = PublishSlow();
  std::thread occupant = OccupySlot(slow);
  http::HttpResponse accepted = Call(echo_, R"({"event":{"cancel":"me"}})", kAsync);
  ASSERT_EQ(accepted.status, 202) << accepted.body;
  const std::string id = StringField(accepted.body, "execution_id");
  auto cancelled = g_system->Client()->Post("/api/v1/executions/" + id + "/cancel", "",
                                            {{"Authorization", key_}});
  ASSERT_TRUE(cancelled.ok());
  EXPECT_EQ(cancelled->status, 202) << cancelled->body;
  EXPECT_EQ(StringField(cancelled->body, "status"), "cancelled");
  EXPECT_EQ(StringField(Status(id).body, "status"), "cancelled");
  // Once it has finished there is nothing to cancel.
  auto again = g_system->Client()->Post("/api/v1/executions/" + id + "/cancel", "",
                                        {{"Authorization", key_}});
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->status, 409) << again->body;
  occupant.join();
  // The slot is free again and every hold is gone: the cancelled call's was released, and the
  // dispatcher that meets its job skips it.
  EXPECT_TRUE(WaitUntil([&] { return Reserved() == 0; }, 10'000, "every hold to be gone"));
  http::HttpResponse after = Call(echo_, R"({"event":{"after":1}})", kAsync);
  ASSERT_EQ(after.status, 202);
  EXPECT_EQ(StringField(WaitFinished(StringField(after.body, "execution_id")).body, "status"),
            "succeeded");
  EXPECT_EQ(StringField(Status(id).body, "status"), "cancelled");
  EXPECT_EQ(Charges(id), 0);
}

TEST_F(AsyncTest, TwentyConcurrentRequestsWithOneKeyRunOnceAndChargeOnce) {
  const http::HeaderList keyed = {{"Idempotency-Key", "\"order-4711\""}};
  const std::string body = R"({"event":{"order":4711}})";
  constexpr int kRequests = 20;
  std::vector<http::HttpResponse> answers(kRequests);
  std::vector<std::thread> threads;
  for (int i = 0; i < kRequests; ++i) {
    threads.emplace_back([&, i] { answers[i] = Call(echo_, body, keyed); });
  }
  for (auto& t : threads) t.join();
  std::set<std::string> ids;
  int ran = 0;
  for (const auto& a : answers) {
    // The first answer, or the first execution's status while it ran.
    ASSERT_TRUE(a.status == 200 || a.status == 202) << a.status << " " << a.body;
    if (a.status == 200) {
      auto doc = Json(a.body);
      std::string_view id;
      ASSERT_EQ(doc.root["summary"]["execution_id"].get(id), simdjson::SUCCESS);
      ids.insert(std::string(id));
      if (a.Header("Idempotent-Replayed").empty()) ++ran;
    } else {
      EXPECT_EQ(a.Header("Idempotent-Replayed"), "true");
      ids.insert(StringField(a.body, "execution_id"));
    }
  }
  EXPECT_EQ(ids.size(), 1u);
  EXPECT_EQ(ran, 1);
  const std::string id = *ids.begin();
  WaitFinished(id);
  EXPECT_EQ(Charges(id), 1);
  // Repeated later: the first answer again, nothing run.
  http::HttpResponse replay = Call(echo_, body, keyed);
  ASSERT_EQ(replay.status, 200) << replay.body;
  EXPECT_EQ(replay.Header("Idempotent-Replayed"), "true");
  EXPECT_NE(replay.body.find(id), std::string::npos);
  int charges = 0;
  for (const auto& entry : account_->Ledger()) charges += entry.at("type") == "charge";
  EXPECT_EQ(charges, 1);
}

TEST_F(AsyncTest, UsedKeyWithAnotherRequestIsRefusedAndRunsNothing) {
  const http::HeaderList keyed = {{"Idempotency-Key", "invoice-9"}};
  http::HttpResponse first = Call(echo_, R"({"event":{"amount":1}})", keyed);
  ASSERT_EQ(first.status, 200) << first.body;
  http::HttpResponse changed = Call(echo_, R"({"event":{"amount":2}})", keyed);
  EXPECT_EQ(changed.status, 422) << changed.body;
  EXPECT_EQ(StringField(changed.body, "code"), "idempotency_key_reused");
  // Another X-Env-Keys is another request too; a malformed key is refused before anything.
  http::HttpResponse malformed = Call(echo_, R"({"event":{}})", {{"Idempotency-Key", "\"open"}});
  EXPECT_EQ(malformed.status, 400) << malformed.body;
  EXPECT_EQ(StringField(malformed.body, "code"), "invalid_idempotency_key");
  int charges = 0;
  for (const auto& entry : account_->Ledger()) charges += entry.at("type") == "charge";
  EXPECT_EQ(charges, 1);
}

TEST_F(AsyncTest, RepeatedKeyOfAnAsynchronousCallAnswersTheSameExecution) {
  const http::HeaderList headers = {{"Prefer", "respond-async"}, {"Idempotency-Key", "job-1"}};
  http::HttpResponse first = Call(echo_, R"({"event":{"job":1}})", headers);
  ASSERT_EQ(first.status, 202) << first.body;
  const std::string id = StringField(first.body, "execution_id");
  WaitFinished(id);
  http::HttpResponse repeat = Call(echo_, R"({"event":{"job":1}})", headers);
  // Finished: the first execution's answer, as a synchronous call would have had it.
  ASSERT_EQ(repeat.status, 200) << repeat.body;
  EXPECT_EQ(repeat.Header("Idempotent-Replayed"), "true");
  EXPECT_NE(repeat.body.find(id), std::string::npos);
  EXPECT_EQ(Charges(id), 1);
}

TEST_F(AsyncTest, CancelledRunningCallIsStoppedAndChargedForWhatRan) {
  // Long enough that it cannot finish on its own before the cancel reaches it.
  std::string endless = account_->CreateFunction("endless");
  ASSERT_EQ(account_
                ->PublishLua(endless, "1.0", "function service_handler(e, c) while true do end end",
                             R"("timeout_ms":60000)")
                .status,
            201);
  http::HttpResponse accepted = Call(endless, R"({"event":{}})", kAsync);
  ASSERT_EQ(accepted.status, 202) << accepted.body;
  const std::string id = StringField(accepted.body, "execution_id");
  ASSERT_TRUE(WaitUntil([&] { return StringField(Status(id).body, "status") == "running"; }, 20'000,
                        "the call to start"));
  auto cancelled = g_system->Client()->Post("/api/v1/executions/" + id + "/cancel", "",
                                            {{"Authorization", key_}});
  ASSERT_TRUE(cancelled.ok());
  EXPECT_EQ(cancelled->status, 202) << cancelled->body;
  EXPECT_EQ(StringField(cancelled->body, "status"), "running");
  // Stopped, not run to its 60 s timeout: it ends cancelled. Its sandbox may have been killed
  // while the handler ran (charged for that time: statusCode 499) or, had the cancel reached
  // the executor before the handler started, it never ran (execution_cancelled, uncharged).
  http::HttpResponse done = WaitFinished(id);
  EXPECT_EQ(StringField(done.body, "status"), "cancelled") << done.body;
  auto doc = Json(done.body);
  int64_t status_code = 0;
  if (doc.root["result"].is_null()) {
    std::string_view code;
    ASSERT_EQ(doc.root["error"]["code"].get(code), simdjson::SUCCESS) << done.body;
    EXPECT_EQ(code, "execution_cancelled");
    EXPECT_EQ(Charges(id), 0);
  } else {
    ASSERT_EQ(doc.root["result"]["statusCode"].get(status_code), simdjson::SUCCESS) << done.body;
    EXPECT_EQ(status_code, 499);
    std::string_view body;
    ASSERT_EQ(doc.root["result"]["body"].get(body), simdjson::SUCCESS);
    EXPECT_NE(body.find("Cancelled"), std::string_view::npos);
    EXPECT_EQ(Charges(id), 1);  // the handler ran: charged, once, for the time it ran
  }
  EXPECT_TRUE(WaitUntil([&] { return Reserved() == 0; }, 10'000, "the hold to be settled"));
}

// Verifies one delivery against secret ("whsec_..."): some signature of its header is the
// secret's over its id, timestamp and body.
bool SignedWith(const Delivery& d, const std::string& secret) {
  auto key = webhook::SigningKey(secret);
  return key && webhook::Verify(*key, d.id, std::stoll(d.timestamp), d.body, d.signature);
}

class CallbackTest : public AsyncTest {
 protected:
  std::string MakeSecret() {
    auto r = account_->session().Post("/api/v1/webhooks/secret", "");
    EXPECT_TRUE(r.ok() && r->status == 201) << (r.ok() ? r->body : r.status().ToString());
    return r.ok() ? StringField(r->body, "secret") : "";
  }
  http::HeaderList With(const std::string& url) {
    return {{"Prefer", "respond-async"}, {"X-Callback-Url", url}};
  }
};

TEST_F(CallbackTest, SignedCallbackIsRetriedAfterTwo500sUntilDelivered) {
  const std::string secret = MakeSecret();
  ASSERT_EQ(secret.rfind("whsec_", 0), 0u) << secret;
  WebhookReceiver receiver(/*failures=*/2);
  http::HttpResponse accepted = Call(echo_, R"({"event":{"deliver":"me"}})", With(receiver.Url()));
  ASSERT_EQ(accepted.status, 202) << accepted.body;
  const std::string id = StringField(accepted.body, "execution_id");
  ASSERT_TRUE(WaitUntil([&] { return receiver.Deliveries().size() >= 3; }, 60'000,
                        "three callback attempts"));
  for (const Delivery& d : receiver.Deliveries()) {
    EXPECT_EQ(d.id, id);  // the same webhook-id on every attempt
    EXPECT_TRUE(SignedWith(d, secret)) << d.signature;
    EXPECT_EQ(StringField(d.body, "status"), "succeeded") << d.body;
    EXPECT_NE(d.body.find("deliver"), std::string::npos);
  }
  http::HttpResponse shown;
  ASSERT_TRUE(WaitUntil(
      [&] {
        shown = Status(id);
        return shown.body.find(R"("outcome":"delivered","attempts")") != std::string::npos;
      },
      10'000, "the callback shown delivered"))
      << shown.body;
  auto doc = Json(shown.body);
  simdjson::dom::array attempts;
  ASSERT_EQ(doc.root["callback"]["attempts"].get(attempts), simdjson::SUCCESS);
  ASSERT_EQ(attempts.size(), 3u);
  std::vector<int64_t> codes;
  for (simdjson::dom::element a : attempts) codes.push_back(int64_t(a["status_code"]));
  EXPECT_EQ(codes, (std::vector<int64_t>{500, 500, 200}));
  EXPECT_EQ(std::string_view(attempts.at(2)["outcome"]), "delivered");
  EXPECT_EQ(receiver.Deliveries().size(), 3u);
}

TEST_F(CallbackTest, AfterARotationBothSecretsSign) {
  const std::string old_secret = MakeSecret();
  const std::string new_secret = MakeSecret();
  ASSERT_NE(old_secret, new_secret);
  auto info = account_->session().Get("/api/v1/webhooks/secret");
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->status, 200);
  EXPECT_EQ(info->body.find("whsec_"), std::string::npos);  // never shown again
  WebhookReceiver receiver;
  http::HttpResponse accepted = Call(echo_, R"({"event":{}})", With(receiver.Url()));
  ASSERT_EQ(accepted.status, 202) << accepted.body;
  ASSERT_TRUE(WaitUntil([&] { return !receiver.Deliveries().empty(); }, 30'000, "the callback"));
  const Delivery d = receiver.Deliveries().front();
  EXPECT_NE(d.signature.find(' '), std::string::npos) << d.signature;  // two signatures
  EXPECT_TRUE(SignedWith(d, new_secret));
  EXPECT_TRUE(SignedWith(d, old_secret));
}

TEST_F(CallbackTest, UnacceptableCallbacksAreRefusedBeforeAnythingRuns) {
  WebhookReceiver receiver;
  // No secret yet: nothing to sign with.
  http::HttpResponse no_secret = Call(echo_, R"({"event":{}})", With(receiver.Url()));
  EXPECT_EQ(no_secret.status, 409) << no_secret.body;
  EXPECT_EQ(StringField(no_secret.body, "code"), "callback_secret_missing");
  MakeSecret();
  // Only with an asynchronous call.
  http::HttpResponse sync = Call(echo_, R"({"event":{}})", {{"X-Callback-Url", receiver.Url()}});
  EXPECT_EQ(sync.status, 400) << sync.body;
  EXPECT_EQ(StringField(sync.body, "code"), "invalid_callback_url");
  // A private address the operator did not allow.
  http::HttpResponse private_net = Call(echo_, R"({"event":{}})", With("http://10.1.2.3/hook"));
  EXPECT_EQ(private_net.status, 400) << private_net.body;
  EXPECT_EQ(StringField(private_net.body, "code"), "invalid_callback_url");
  EXPECT_TRUE(receiver.Deliveries().empty());
  EXPECT_EQ(Reserved(), 0);
}

TEST_F(CallbackTest, ThePlatformsOwnPortsAreNeverReached) {
  MakeSecret();
  const std::string port = g_system->url().substr(g_system->url().rfind(':') + 1);
  // The edge itself, on the loopback the operator allowed: refused outright by address...
  http::HttpResponse literal =
      Call(echo_, R"({"event":{}})", With("http://127.0.0.1:" + port + "/api/v1/billing/balance"));
  EXPECT_EQ(literal.status, 400) << literal.body;
  EXPECT_EQ(StringField(literal.body, "code"), "invalid_callback_url");
  // ... and by a name, judged on the address it resolves to when delivered.
  http::HttpResponse accepted =
      Call(echo_, R"({"event":{}})", With("http://localhost:" + port + "/api/v1/billing/balance"));
  ASSERT_EQ(accepted.status, 202) << accepted.body;
  const std::string id = StringField(accepted.body, "execution_id");
  http::HttpResponse shown;
  ASSERT_TRUE(WaitUntil(
      [&] {
        shown = Status(id);
        return shown.body.find(R"("outcome":"failed")") != std::string::npos;
      },
      30'000, "the callback to fail"))
      << shown.body;
  EXPECT_NE(shown.body.find(R"("outcome":"refused")"), std::string::npos) << shown.body;
}
// kill -9 of billing, the executor or nats-server with one asynchronous execution running and
// two queued: each then runs and is charged exactly once, or ends failed uncharged (the one the
// killed executor was running), and nothing stays held.
class AsyncKillTest : public AsyncTest, public ::testing::WithParamInterface<std::string> {};

TEST_P(AsyncKillTest, QueuedAndRunningExecutionsSurviveAKilledService) {
  const std::string victim = GetParam();
  std::string slow = account_->CreateFunction("slow");
  ASSERT_EQ(account_->PublishLua(slow, "1.0", kSlow, R"("timeout_ms":8000)").status, 201);
  std::vector<std::string> ids;
  http::HttpResponse running = Call(slow, R"({"event":{}})", kAsync);
  ASSERT_EQ(running.status, 202) << running.body;
  ids.push_back(StringField(running.body, "execution_id"));
  ASSERT_TRUE(WaitUntil([&] { return StringField(Status(ids[0]).body, "status") == "running"; },
                        20'000, "the slow call to start"));
  for (int i = 0; i < 2; ++i) {
    http::HttpResponse queued = Call(echo_, R"({"event":{"n":)" + std::to_string(i) + "}}", kAsync);
    ASSERT_EQ(queued.status, 202) << queued.body;
    ids.push_back(StringField(queued.body, "execution_id"));
  }
  const pid_t old_pid = g_system->Pid(victim);
  g_system->Kill(victim, SIGKILL);
  ASSERT_TRUE(g_system->WaitRestarted(victim, old_pid, 60'000)) << victim << " did not come back";
  int64_t charged = 0;
  for (size_t i = 0; i < ids.size(); ++i) {
    http::HttpResponse done;
    ASSERT_TRUE(WaitUntil(
        [&] {
          done = Status(ids[i]);
          const std::string status = StringField(done.body, "status");
          return !status.empty() && status != "queued" && status != "running";
        },
        90'000, "execution " + ids[i] + " to finish after " + victim + " was killed"))
        << done.body;
    const std::string status = StringField(done.body, "status");
    const int charges = Charges(ids[i]);
    if (status == "succeeded") {
      EXPECT_EQ(charges, 1) << done.body;
      ++charged;
    } else {
      // Only the running call of a killed executor may be lost, and then it is not charged.
      EXPECT_EQ(status, "failed") << done.body;
      EXPECT_TRUE(victim == "executor" && i == 0) << victim << ": " << done.body;
      EXPECT_EQ(charges, 0) << done.body;
    }
  }
  EXPECT_GE(charged, 2);  // the queued ones always run
  EXPECT_TRUE(WaitUntil([&] { return Reserved() == 0; }, 30'000, "every hold to be settled"));
}

INSTANTIATE_TEST_SUITE_P(Victims, AsyncKillTest, ::testing::Values("billing", "executor", "nats"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace toolgate::testing
