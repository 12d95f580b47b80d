// Checkout funding (docs/operations.md "Checkout funding"): a system started with --funding
// checkout and a stand-in for Stripe's API on loopback. Members buy credit through checkout
// sessions billing creates on the stand-in; the credit comes only from webhook events signed,
// as Stripe signs them, with the endpoint's secret, and refunds and disputes take it back.
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <regex>
#include <thread>

#include "system.h"
#include "toolgate/base/crypto.h"
#include "toolgate/base/time.h"

namespace toolgate::testing {
namespace {

constexpr const char* kSecretKey = "sk_test_toolgate_stand_in_0123456789";
constexpr const char* kWebhookSecret = "whsec_toolgate_stand_in_secret";

// One request the stand-in received.
struct StripeRequest {
  std::string method;
  std::string path;
  std::map<std::string, std::string> headers;  // names in lower case
  std::map<std::string, std::string> form;     // the decoded form fields
};

std::string FormDecode(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '+') {
      out += ' ';
    } else if (s[i] == '%' && i + 2 < s.size()) {
      out += static_cast<char>(std::stoi(std::string(s.substr(i + 1, 2)), nullptr, 16));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

// Stripe's API reduced to POST /v1/checkout/sessions, answered as Stripe answers it (an id
// cs_test_..., the url of the payment page), the same session again for a repeated
// Idempotency-Key. One request per connection.
class StandInStripe {
 public:
  StandInStripe() {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        ::listen(fd_, 64) != 0 ||
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      std::perror("stand-in stripe");
      std::abort();
    }
    url_ = "http://127.0.0.1:" + std::to_string(ntohs(addr.sin_port));
    thread_ = std::thread([this] { Loop(); });
  }

  const std::string& url() const { return url_; }

  std::vector<StripeRequest> Requests() {
    std::lock_guard<std::mutex> lock(mu_);
    return requests_;
  }

 private:
  void Loop() {
    for (;;) {
      int conn = ::accept(fd_, nullptr, nullptr);
      if (conn < 0) return;
      Serve(conn);
      ::close(conn);
    }
  }

  void Serve(int conn) {
    std::string data;
    char buf[65536];
    size_t head_end = std::string::npos;
    size_t length = 0;
    for (;;) {
      if (head_end != std::string::npos && data.size() >= head_end + 4 + length) break;
      ssize_t n = ::read(conn, buf, sizeof buf);
      if (n <= 0) return;
      data.append(buf, static_cast<size_t>(n));
      if (head_end == std::string::npos &&
          (head_end = data.find("\r\n\r\n")) != std::string::npos) {
        std::smatch m;
        std::string head = data.substr(0, head_end);
        static const std::regex kLength(R"(\r\ncontent-length:\s*(\d+))", std::regex::icase);
        if (std::regex_search(head, m, kLength)) length = std::stoul(m[1]);
      }
    }
    StripeRequest request;
    std::string head = data.substr(0, head_end);
    std::string first = head.substr(0, head.find("\r\n"));
    request.method = first.substr(0, first.find(' '));
    request.path = first.substr(first.find(' ') + 1, first.rfind(' ') - first.find(' ') - 1);
    size_t at = head.find("\r\n");
    while (at != std::string::npos) {
      size_t next = head.find("\r\n", at + 2);
      std::string line = head.substr(at + 2, next == std::string::npos ? next : next - at - 2);
      size_t colon = line.find(':');
      if (colon != std::string::npos) {
        std::string name = line.substr(0, colon);
        for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        size_t v = line.find_first_not_of(' ', colon + 1);
        request.headers[name] = v == std::string::npos ? "" : line.substr(v);
      }
      at = next;
    }
    std::string_view body = std::string_view(data).substr(head_end + 4, length);
    while (!body.empty()) {
      size_t amp = body.find('&');
      std::string_view pair = body.substr(0, amp);
      size_t eq = pair.find('=');
      request.form[FormDecode(pair.substr(0, eq))] =
          eq == std::string_view::npos ? "" : FormDecode(pair.substr(eq + 1));
      body = amp == std::string_view::npos ? std::string_view() : body.substr(amp + 1);
    }

    std::string status = "200 OK";
    std::string answer;
    {
      std::lock_guard<std::mutex> lock(mu_);
      requests_.push_back(request);
      if (request.method != "POST" || request.path != "/v1/checkout/sessions") {
        status = "404 Not Found";
        answer =
            R"({"error":{"type":"invalid_request_error","message":"Unrecognized request URL"}})";
      } else if (request.headers["authorization"] != std::string("Bearer ") + kSecretKey) {
        status = "401 Unauthorized";
        answer = R"({"error":{"type":"invalid_request_error","message":"Invalid API Key"}})";
      } else {
        std::string& id = sessions_[request.headers["idempotency-key"]];
        if (id.empty()) id = "cs_test_" + HexEncode(RandomBytes(12));
        answer = R"({"id":")" + id +
                 R"(","object":"checkout.session","mode":"payment","status":"open",)"
                 R"("payment_status":"unpaid","currency":"usd","amount_total":)" +
                 request.form["line_items[0][price_data][unit_amount]"] +
                 R"(,"client_reference_id":")" + request.form["client_reference_id"] +
                 R"(","url":"https://checkout.stripe.com/c/pay/)" + id + "\"}";
      }
    }
    const std::string reply =
        "HTTP/1.1 " + status +
        "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(answer.size()) +
        "\r\nConnection: close\r\n\r\n" + answer;
    (void)!::write(conn, reply.data(), reply.size());
  }

  int fd_ = -1;
  std::string url_;
  std::mutex mu_;
  std::vector<StripeRequest> requests_;          // guarded by mu_
  std::map<std::string, std::string> sessions_;  // Idempotency-Key -> id, guarded by mu_
  std::thread thread_;
};

// Bound before the system starts, so that billing is given its URL.
StandInStripe& Stripe() {
  static StandInStripe* stripe = new StandInStripe();
  return *stripe;
}

// A file holding secret, readable by its owner only, as an operator keeps it.
std::string SecretFile(const std::string& name, const std::string& secret) {
  static const std::string dir = [] {
    std::string tmpl = "/tmp/toolgate-payments-XXXXXX";
    if (::mkdtemp(tmpl.data()) == nullptr) std::abort();
    return tmpl;
  }();
  const std::string path = dir + "/" + name;
  std::ofstream(path) << secret << "\n";
  ::chmod(path.c_str(), 0600);
  return path;
}

const auto* const kEnv = ::testing::AddGlobalTestEnvironment(new SharedSystem(
    {"--funding", "checkout", "--stripe-api-base", Stripe().url(), "--stripe-secret-key-file",
     SecretFile("stripe.key", kSecretKey), "--stripe-webhook-secret-file",
     SecretFile("stripe-webhook.secret", kWebhookSecret)}));

int64_t NowS() {
  return NowMs() / 1000;
}

// The Stripe-Signature header Stripe sends with payload at t, under secret.
std::string Signature(const std::string& payload, int64_t t = NowS(),
                      const std::string& secret = kWebhookSecret) {
  return "t=" + std::to_string(t) +
         ",v1=" + HexEncode(HmacSha256(secret, std::to_string(t) + "." + payload));
}

// Delivers payload to the webhook endpoint as Stripe does: no API key, no cookie.
Result<http::HttpResponse> Deliver(const std::string& payload, const std::string& signature) {
  auto client = g_system->Client();
  http::HeaderList headers = {{"Content-Type", "application/json; charset=utf-8"}};
  if (!signature.empty()) headers.emplace_back("Stripe-Signature", signature);
  return client->Post("/api/v1/billing/webhooks/stripe", payload, headers);
}

std::string NewId(const std::string& prefix) {
  return prefix + HexEncode(RandomBytes(8));
}

std::string CompletedEvent(const std::string& event_id, const std::string& session_id,
                           const std::string& org_id, int64_t amount_cents,
                           const std::string& payment_intent, const std::string& currency = "usd",
                           const std::string& payment_status = "paid") {
  return R"({"id":")" + event_id +
         R"(","object":"event","api_version":"2024-06-20","type":"checkout.session.completed",)"
         R"("livemode":false,"data":{"object":{"id":")" +
         session_id + R"(","object":"checkout.session","mode":"payment","client_reference_id":")" +
         org_id + R"(","metadata":{"toolgate_org_id":")" + org_id + R"("},"amount_subtotal":)" +
         std::to_string(amount_cents) + R"(,"amount_total":)" + std::to_string(amount_cents) +
         R"(,"currency":")" + currency + R"(","payment_status":")" + payment_status +
         R"(","status":"complete","payment_intent":")" + payment_intent + R"("}}})";
}

std::string RefundEvent(const std::string& event_id, const std::string& payment_intent,
                        int64_t amount_cents, int64_t refunded_cents) {
  return R"({"id":")" + event_id +
         R"(","object":"event","type":"charge.refunded","data":{"object":{"id":"ch_)" +
         payment_intent.substr(3) + R"(","object":"charge","amount":)" +
         std::to_string(amount_cents) + R"(,"amount_refunded":)" + std::to_string(refunded_cents) +
         R"(,"currency":"usd","refunded":)" + (refunded_cents == amount_cents ? "true" : "false") +
         R"(,"payment_intent":")" + payment_intent + R"("}}})";
}

std::string DisputeEvent(const std::string& event_id, const std::string& type,
                         const std::string& dispute_id, const std::string& payment_intent,
                         int64_t amount_cents) {
  return R"({"id":")" + event_id + R"(","object":"event","type":")" + type +
         R"(","data":{"object":{"id":")" + dispute_id + R"(","object":"dispute","amount":)" +
         std::to_string(amount_cents) + R"(,"charge":"ch_1","currency":"usd","payment_intent":")" +
         payment_intent + R"(","status":"needs_response"}}})";
}

Result<http::HttpResponse> CreateSession(Account& member, int64_t amount_micro_usd,
                                         const std::string& key = "") {
  http::HeaderList headers;
  if (!key.empty()) headers.emplace_back("Idempotency-Key", key);
  return member.session().Post("/api/v1/billing/checkout-sessions",
                               R"({"amount_micro_usd":)" + std::to_string(amount_micro_usd) + "}",
                               headers);
}

// A checkout session of member's for amount, created through the API.
std::string SessionOf(Account& member, int64_t amount_micro_usd) {
  auto r = CreateSession(member, amount_micro_usd);
  EXPECT_TRUE(r.ok() && r->status == 201) << (r.ok() ? r->body : r.status().ToString());
  return r.ok() ? StringField(r->body, "checkout_session_id") : "";
}

// Delivers a signed event and returns the outcome billing answered with ("" on another status).
std::string Outcome(const std::string& payload) {
  auto r = Deliver(payload, Signature(payload));
  EXPECT_TRUE(r.ok() && r->status == 200) << (r.ok() ? r->body : r.status().ToString());
  return r.ok() && r->status == 200 ? StringField(r->body, "outcome") : "";
}

// A paid session of member's: its payment intent.
std::string Paid(Account& member, int64_t amount_micro_usd) {
  const std::string session = SessionOf(member, amount_micro_usd);
  const std::string intent = NewId("pi_");
  EXPECT_EQ(Outcome(CompletedEvent(NewId("evt_"), session, member.org_id(),
                                   amount_micro_usd / 10'000, intent)),
            "credited");
  return intent;
}

// The ledger's rows of member of one type, newest first.
std::vector<std::map<std::string, std::string>> Rows(Account& member, const std::string& type) {
  std::vector<std::map<std::string, std::string>> out;
  for (auto& row : member.Ledger()) {
    if (row["type"] == type) out.push_back(row);
  }
  return out;
}

// The balance is the sum of the ledger's rows.
void ExpectBalanceIsTheLedger(Account& member) {
  int64_t sum = 0;
  for (auto& row : member.Ledger()) sum += std::stoll(row["amount_micro_usd"]);
  EXPECT_EQ(member.Balance(), sum);
}

TEST(PaymentsTest, ACheckoutSessionIsCreatedWithStripeForTheMembersOrganization) {
  Account member(*g_system, "Buyers");
  const size_t before = Stripe().Requests().size();
  auto r = CreateSession(member, 25'000'000, "buy-25");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->status, 201) << r->body;
  const std::string id = StringField(r->body, "checkout_session_id");
  EXPECT_EQ(id.rfind("cs_test_", 0), 0u) << r->body;
  EXPECT_EQ(StringField(r->body, "checkout_url"), "https://checkout.stripe.com/c/pay/" + id);
  EXPECT_EQ(IntField(r->body, "amount_micro_usd"), 25'000'000);
  EXPECT_EQ(StringField(r->body, "currency"), "usd");
  EXPECT_EQ(StringField(r->body, "status"), "open");

  auto requests = Stripe().Requests();
  ASSERT_EQ(requests.size(), before + 1);
  StripeRequest& sent = requests.back();
  EXPECT_EQ(sent.method, "POST");
  EXPECT_EQ(sent.path, "/v1/checkout/sessions");
  EXPECT_EQ(sent.headers["authorization"], std::string("Bearer ") + kSecretKey);
  EXPECT_EQ(sent.headers["content-type"], "application/x-www-form-urlencoded");
  EXPECT_FALSE(sent.headers["idempotency-key"].empty());
  EXPECT_EQ(sent.form["mode"], "payment");
  EXPECT_EQ(sent.form["line_items[0][price_data][currency]"], "usd");
  EXPECT_EQ(sent.form["line_items[0][price_data][unit_amount]"], "2500");  // cents
  EXPECT_EQ(sent.form["line_items[0][quantity]"], "1");
  EXPECT_FALSE(sent.form["line_items[0][price_data][product_data][name]"].empty());
  EXPECT_EQ(sent.form["client_reference_id"], member.org_id());
  EXPECT_EQ(sent.form["metadata[toolgate_org_id]"], member.org_id());
  EXPECT_EQ(sent.form["success_url"].rfind(g_system->url() + "/settings/billing?", 0), 0u)
      << sent.form["success_url"];
  EXPECT_EQ(sent.form["cancel_url"].rfind(g_system->url() + "/settings/billing?", 0), 0u)
      << sent.form["cancel_url"];

  // The same key answers the same session without a second one at Stripe; another amount with
  // it is refused.
  auto again = CreateSession(member, 25'000'000, "buy-25");
  ASSERT_TRUE(again.ok());
  ASSERT_EQ(again->status, 201) << again->body;
  EXPECT_EQ(StringField(again->body, "checkout_session_id"), id);
  EXPECT_EQ(Stripe().Requests().size(), before + 1);
  auto other = CreateSession(member, 30'000'000, "buy-25");
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(other->status, 422) << other->body;

  // Another organization's same key is its own session: keys never cross organizations.
  Account neighbour(*g_system, "Neighbours");
  auto theirs = CreateSession(neighbour, 25'000'000, "buy-25");
  ASSERT_TRUE(theirs.ok());
  ASSERT_EQ(theirs->status, 201) << theirs->body;
  EXPECT_NE(StringField(theirs->body, "checkout_session_id"), id);
  EXPECT_NE(Stripe().Requests().back().headers["idempotency-key"], sent.headers["idempotency-key"]);

  // Nothing is credited by creating a session.
  EXPECT_EQ(member.Balance(), 0);
}

TEST(PaymentsTest, AmountsMustBeWholeCentsWithinStripesLimits) {
  Account member(*g_system, "Odd amounts");
  const size_t before = Stripe().Requests().size();
  for (int64_t amount : {int64_t{490'000}, int64_t{10'000'001}, int64_t{0}, int64_t{-5'000'000},
                         int64_t{1'000'000'000'000}}) {
    auto r = CreateSession(member, amount);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->status, 422) << amount << ": " << r->body;
    EXPECT_NE(r->body.find(R"("field":"amount_micro_usd")"), std::string::npos) << r->body;
  }
  auto not_json = member.session().Post("/api/v1/billing/checkout-sessions", "amount=5");
  ASSERT_TRUE(not_json.ok());
  EXPECT_EQ(not_json->status, 400) << not_json->body;
  EXPECT_EQ(Stripe().Requests().size(), before);  // nothing reached Stripe
  // An API key with the manage scope may buy too (the CLI's), one with invoke only may not.
  auto invoke_only = g_system->Client();
  invoke_only->SetDefaultHeader("Authorization", "Bearer " + member.CreateKey(R"(["invoke"])"));
  auto r = invoke_only->Post("/api/v1/billing/checkout-sessions", R"({"amount_micro_usd":500000})");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 403) << r->body;
}

TEST(PaymentsTest, AMemberCannotTopUpThemselvesAndTheCliOpensACheckout) {
  Account member(*g_system, "Self-funding");
  auto r = member.session().Post("/api/v1/billing/top-ups", R"({"amount_micro_usd":5000000})");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 403) << r->body;
  EXPECT_EQ(StringField(r->body, "code"), "funding_by_grant_only");
  auto balance = member.session().Get("/api/v1/billing/balance");
  ASSERT_TRUE(balance.ok());
  EXPECT_EQ(StringField(balance->body, "funding"), "checkout") << balance->body;

  const std::string key = member.CreateKey(R"(["manage"])");
  const std::string config = g_system->data_dir() + "/cli-payments";
  auto [status, out] =
      RunCommand("env -u TOOLGATE_PROFILE XDG_CONFIG_HOME=" + config +
                 " TOOLGATE_URL=" + g_system->url() + " TOOLGATE_API_KEY=" + key + " " +
                 std::string(TOOLGATE_BIN_DIR) + "/toolgate topup --amount 5000000 2>&1");
  EXPECT_EQ(status, 0) << out;
  EXPECT_NE(out.find("Open this page to pay: https://checkout.stripe.com/c/pay/cs_test_"),
            std::string::npos)
      << out;
  EXPECT_EQ(Stripe().Requests().back().form["client_reference_id"], member.org_id());
  EXPECT_EQ(member.Balance(), 0);  // bought once paid, not before
}

TEST(PaymentsTest, ACompletedPaymentCreditsOnceAndTheLedgerNamesItsStripeIds) {
  Account member(*g_system, "Payers");
  const std::string session = SessionOf(member, 25'000'000);
  const std::string event_id = NewId("evt_");
  const std::string intent = NewId("pi_");
  const std::string payload = CompletedEvent(event_id, session, member.org_id(), 2500, intent);
  auto r = Deliver(payload, Signature(payload));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(StringField(r->body, "event_id"), event_id);
  EXPECT_EQ(StringField(r->body, "outcome"), "credited");
  EXPECT_EQ(member.Balance(), 25'000'000);

  // Stripe delivers again (it retries until it has a 2xx, and may send twice anyway).
  EXPECT_EQ(Outcome(payload), "duplicate");
  // Another event for the same session (an async success after the completion) credits nothing.
  EXPECT_EQ(Outcome(CompletedEvent(NewId("evt_"), session, member.org_id(), 2500, intent)),
            "ignored");
  EXPECT_EQ(member.Balance(), 25'000'000);

  auto payments = Rows(member, "payment");
  ASSERT_EQ(payments.size(), 1u);
  EXPECT_EQ(payments[0]["amount_micro_usd"], "25000000");
  auto source = Json(payments[0]["payment"]);
  std::string_view provider, event, session_id, intent_id;
  ASSERT_EQ(source.root["provider"].get_string().get(provider), simdjson::SUCCESS)
      << payments[0]["payment"];
  EXPECT_EQ(provider, "stripe");
  ASSERT_EQ(source.root["event_id"].get_string().get(event), simdjson::SUCCESS);
  EXPECT_EQ(event, event_id);
  ASSERT_EQ(source.root["checkout_session_id"].get_string().get(session_id), simdjson::SUCCESS);
  EXPECT_EQ(session_id, session);
  ASSERT_EQ(source.root["payment_intent_id"].get_string().get(intent_id), simdjson::SUCCESS);
  EXPECT_EQ(intent_id, intent);
  ExpectBalanceIsTheLedger(member);
}

TEST(PaymentsTest, TwentyConcurrentDeliveriesOfOneEventCreditOnce) {
  Account member(*g_system, "Concurrent payers");
  const std::string session = SessionOf(member, 10'000'000);
  const std::string payload =
      CompletedEvent(NewId("evt_"), session, member.org_id(), 1000, NewId("pi_"));
  const std::string signature = Signature(payload);
  std::atomic<int> credited{0}, duplicates{0}, failures{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 20; ++i) {
    threads.emplace_back([&] {
      auto r = Deliver(payload, signature);
      if (!r.ok() || r->status != 200) {
        ++failures;
      } else if (StringField(r->body, "outcome") == "credited") {
        ++credited;
      } else if (StringField(r->body, "outcome") == "duplicate") {
        ++duplicates;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(credited.load(), 1);
  EXPECT_EQ(duplicates.load(), 19);
  EXPECT_EQ(member.Balance(), 10'000'000);
  EXPECT_EQ(Rows(member, "payment").size(), 1u);
  ExpectBalanceIsTheLedger(member);
}

TEST(PaymentsTest, ForgedStaleAndForeignDeliveriesCreditNothing) {
  Account member(*g_system, "Targets");
  const std::string session = SessionOf(member, 50'000'000);
  const std::string payload =
      CompletedEvent(NewId("evt_"), session, member.org_id(), 5000, NewId("pi_"));
  struct Case {
    const char* what;
    std::string signature;
    std::string body;
  };
  std::string tampered = payload;
  tampered.replace(tampered.find("\"amount_total\":5000"), 19, "\"amount_total\":9000");
  for (const Case& c : std::vector<Case>{
           {"no signature", "", payload},
           {"another secret", Signature(payload, NowS(), "whsec_attacker"), payload},
           {"a tampered body", Signature(payload), tampered},
           {"a replay ten minutes old", Signature(payload, NowS() - 600), payload},
           {"a timestamp ten minutes ahead", Signature(payload, NowS() + 600), payload},
           {"a malformed header",
            "v1=" + Signature(payload).substr(Signature(payload).find("v1=") + 3), payload},
       }) {
    auto r = Deliver(c.body, c.signature);
    ASSERT_TRUE(r.ok()) << c.what;
    EXPECT_EQ(r->status, 400) << c.what << ": " << r->body;
    EXPECT_EQ(StringField(r->body, "code"), "invalid_signature") << c.what;
    // Nothing was recorded either: the genuine delivery still credits below.
  }
  EXPECT_EQ(member.Balance(), 0);

  // Signed by Stripe, but nothing to credit: an event type billing does not act on, a session
  // paid in another currency (answered 2xx so Stripe stops, and logged), an unpaid session, a
  // session billing never created, a session for another organization.
  EXPECT_EQ(Outcome(R"({"id":")" + NewId("evt_") +
                    R"(","object":"event","type":"customer.created","data":{"object":{}}})"),
            "ignored");
  EXPECT_EQ(Outcome(CompletedEvent(NewId("evt_"), session, member.org_id(), 5000, NewId("pi_"),
                                   "usd", "unpaid")),
            "ignored");
  EXPECT_EQ(Outcome(CompletedEvent(NewId("evt_"), "cs_test_unknown", member.org_id(), 5000,
                                   NewId("pi_"))),
            "ignored");
  Account other(*g_system, "Other organization");
  EXPECT_EQ(Outcome(CompletedEvent(NewId("evt_"), session, other.org_id(), 5000, NewId("pi_"))),
            "refused");
  EXPECT_EQ(other.Balance(), 0);
  EXPECT_EQ(member.Balance(), 0);

  EXPECT_EQ(Outcome(payload), "credited");  // the genuine delivery
  EXPECT_EQ(member.Balance(), 50'000'000);

  const std::string euro_session = SessionOf(member, 10'000'000);
  EXPECT_EQ(Outcome(CompletedEvent(NewId("evt_"), euro_session, member.org_id(), 1000, NewId("pi_"),
                                   "eur")),
            "refused");
  EXPECT_EQ(member.Balance(), 50'000'000);
  EXPECT_EQ(Rows(member, "payment").size(), 1u);
  ExpectBalanceIsTheLedger(member);
}

TEST(PaymentsTest, PartialThenFullRefundsDebitExactlyWhatWasRefunded) {
  Account member(*g_system, "Refunded");
  const std::string intent = Paid(member, 25'000'000);
  ASSERT_EQ(member.Balance(), 25'000'000);

  const std::string partial = RefundEvent(NewId("evt_"), intent, 2500, 1000);  // $10 of $25
  EXPECT_EQ(Outcome(partial), "debited");
  EXPECT_EQ(member.Balance(), 15'000'000);
  EXPECT_EQ(Outcome(partial), "duplicate");
  EXPECT_EQ(member.Balance(), 15'000'000);

  EXPECT_EQ(Outcome(RefundEvent(NewId("evt_"), intent, 2500, 2500)), "debited");  // the rest
  EXPECT_EQ(member.Balance(), 0);
  // A late event with an older running total, and one claiming more than was paid, take nothing
  // more.
  EXPECT_EQ(Outcome(RefundEvent(NewId("evt_"), intent, 2500, 1000)), "ignored");
  EXPECT_EQ(Outcome(RefundEvent(NewId("evt_"), intent, 2500, 9000)), "ignored");
  // A refund of a payment billing never credited.
  EXPECT_EQ(Outcome(RefundEvent(NewId("evt_"), NewId("pi_"), 2500, 2500)), "ignored");
  EXPECT_EQ(member.Balance(), 0);

  auto refunds = Rows(member, "refund");
  ASSERT_EQ(refunds.size(), 2u);
  EXPECT_EQ(refunds[0]["amount_micro_usd"], "-15000000");  // newest first
  EXPECT_EQ(refunds[1]["amount_micro_usd"], "-10000000");
  auto source = Json(refunds[1]["payment"]);
  std::string_view intent_id;
  ASSERT_EQ(source.root["payment_intent_id"].get_string().get(intent_id), simdjson::SUCCESS);
  EXPECT_EQ(intent_id, intent);
  ExpectBalanceIsTheLedger(member);
}

TEST(PaymentsTest, ADisputeDebitsOnceAndABalanceBelowZeroCannotCall) {
  Account member(*g_system, "Disputed");
  const std::string intent = Paid(member, 10'000'000);
  // Some of the credit is spent before the payer disputes the payment.
  const std::string function_id = member.CreateFunction("echo");
  auto published = member.PublishLua(function_id, "1.0",
                                     "function service_handler(event, context) return event end");
  ASSERT_EQ(published.status, 201) << published.body;
  const std::string key = member.CreateKey();
  auto call = Invoke(*g_system, key, function_id, "", R"({"event": {}})");
  ASSERT_EQ(call.status, 200) << call.body;
  ASSERT_LT(member.Balance(), 10'000'000);

  const std::string dispute = NewId("dp_");
  EXPECT_EQ(Outcome(DisputeEvent(NewId("evt_"), "charge.dispute.created", dispute, intent, 1000)),
            "debited");
  // The funds leave Stripe's balance in a second event of the same dispute: one debit.
  EXPECT_EQ(
      Outcome(DisputeEvent(NewId("evt_"), "charge.dispute.funds_withdrawn", dispute, intent, 1000)),
      "ignored");
  const int64_t balance = member.Balance();
  EXPECT_LT(balance, 0);  // what was spent is owed
  EXPECT_LE(member.Available(), 0);
  auto refused = Invoke(*g_system, key, function_id, "", R"({"event": {}})");
  EXPECT_EQ(refused.status, 402) << refused.body;
  EXPECT_EQ(StringField(refused.body, "code"), "insufficient_balance");

  auto disputes = Rows(member, "dispute");
  ASSERT_EQ(disputes.size(), 1u);
  EXPECT_EQ(disputes[0]["amount_micro_usd"], "-10000000");
  auto source = Json(disputes[0]["payment"]);
  std::string_view dispute_id;
  ASSERT_EQ(source.root["dispute_id"].get_string().get(dispute_id), simdjson::SUCCESS);
  EXPECT_EQ(dispute_id, dispute);
  ExpectBalanceIsTheLedger(member);

  // Funded again, it calls again.
  Paid(member, 5'000'000);
  EXPECT_EQ(member.Balance(), balance + 5'000'000);
  EXPECT_EQ(Invoke(*g_system, key, function_id, "", R"({"event": {}})").status, 200);
}

TEST(PaymentsTest, ReconcileFindsRedisAndTheLedgerInAgreement) {
  Account member(*g_system, "Reconciled payers");
  const std::string intent = Paid(member, 20'000'000);
  EXPECT_EQ(Outcome(RefundEvent(NewId("evt_"), intent, 2000, 500)), "debited");
  EXPECT_EQ(member.Balance(), 15'000'000);
  auto state = Json(g_system->State());
  const std::string keys = g_system->data_dir() + "/keys/";
  const std::string env =
      "TOOLGATE_REDIS_URL=" + std::string(std::string_view(state.root["redis_url"])) +
      " TOOLGATE_POSTGRES_URL=" + std::string(std::string_view(state.root["postgres_url"])) +
      " TOOLGATE_NATS_URL=" + std::string(std::string_view(state.root["nats_url"])) +
      " TOOLGATE_REDIS_PASSWORD_FILE=" + keys + "redis.password" +
      " TOOLGATE_POSTGRES_PASSWORD_FILE=" + keys + "postgres.password";
  std::pair<int, std::string> dry;
  // The last call's capture may still be on its way to Redis: the two agree once it lands.
  EXPECT_TRUE(WaitUntil(
      [&] {
        dry = RunCommand("env -u TOOLGATE_FUNDING " + env + " " + std::string(TOOLGATE_BIN_DIR) +
                         "/toolgate-billing reconcile --dry-run");
        return dry.first == 0;
      },
      10'000, "reconcile to find no difference"))
      << dry.second;
}

TEST(PaymentsTest, BillingRefusesCheckoutWithoutItsSecretsAndNeverLogsThem) {
  const std::string billing = std::string(TOOLGATE_BIN_DIR) + "/toolgate-billing";
  auto [status, out] = RunCommand("env -u TOOLGATE_STRIPE_SECRET_KEY_FILE " + billing +
                                  " --funding checkout --stripe-webhook-secret-file " +
                                  SecretFile("w", kWebhookSecret) + " 2>&1");
  EXPECT_NE(status, 0) << out;
  EXPECT_NE(out.find("--funding checkout needs --stripe-secret-key-file"), std::string::npos)
      << out;
  auto [missing_status, missing_out] =
      RunCommand(billing + " --funding checkout --stripe-secret-key-file /nonexistent/sk " +
                 "--stripe-webhook-secret-file " + SecretFile("w", kWebhookSecret) + " 2>&1");
  EXPECT_NE(missing_status, 0) << missing_out;
  EXPECT_NE(missing_out.find("stripe-secret-key-file"), std::string::npos) << missing_out;

  // After a session and a payment, the running billing's log holds neither secret.
  Account member(*g_system, "Logged payers");
  const std::string intent = Paid(member, 1'000'000);
  std::string text;
  ASSERT_TRUE(WaitUntil(
      [&] {
        std::ifstream log(g_system->data_dir() + "/logs/billing.log");
        text.assign(std::istreambuf_iterator<char>(log), std::istreambuf_iterator<char>());
        return text.find(intent) != std::string::npos ||
               text.find(member.org_id()) != std::string::npos;
      },
      10'000, "billing to log the payment"));
  EXPECT_EQ(text.find(kSecretKey), std::string::npos);
  EXPECT_EQ(text.find(kWebhookSecret), std::string::npos);
}

TEST(PaymentsTest, TheWebhookNeedsNoKeyButTheSessionRouteDoes) {
  auto anonymous = g_system->Client();
  auto r = anonymous->Post("/api/v1/billing/checkout-sessions", R"({"amount_micro_usd":500000})");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 401) << r->body;
}

}  // namespace
}  // namespace toolgate::testing
