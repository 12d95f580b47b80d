#include "toolgate/billing/checkout_api.h"

#include <utility>

#include "toolgate/base/crypto.h"
#include "toolgate/base/json_writer.h"
#include "toolgate/base/log.h"
#include "toolgate/base/time.h"
#include "toolgate/billing/balance_loader.h"
#include "toolgate/billing/checkout_request.h"
#include "toolgate/billing/credit_application.h"
#include "toolgate/core/problem.h"

namespace toolgate::billing {
namespace {

constexpr const char* kCurrency = "usd";
constexpr const char* kProductName = "Toolgate credit";
// Where the web app shows the balance; the provider substitutes {CHECKOUT_SESSION_ID}.
constexpr const char* kSuccessPath =
    "/settings/billing?checkout=success&session_id={CHECKOUT_SESSION_ID}";
constexpr const char* kCancelPath = "/settings/billing?checkout=cancelled";

v1::HttpResponse NotEnabled() {
  return core::ProblemResponse(
      "checkout_not_enabled",
      "Credit is not bought through checkout on this system (its funding is not checkout).");
}

// The key sent to the provider: the same for a member's repeated request, so that the provider
// answers it with the same session, and different across organizations, whose keys may match.
std::string ProviderIdempotencyKey(const std::string& org_id, const std::string& member_key) {
  if (member_key.empty()) return "toolgate-" + HexEncode(RandomBytes(16));
  return "toolgate-" + HexEncode(Sha256(org_id + "\n" + member_key));
}

v1::HttpResponse KeyReused(const CheckoutRecord& first) {
  return core::ProblemResponse(core::ValidationProblem(
      "Idempotency-Key", "was used for a checkout of " + std::to_string(first.amount_micro_usd) +
                             " micro-USD; send a new key for a different one"));
}

}  // namespace

std::string CheckoutSessionJson(const CheckoutRecord& session) {
  JsonWriter w;
  w.BeginObject()
      .Field("checkout_session_id", session.session_id)
      .Field("checkout_url", session.url)
      .Field("provider", session.provider)
      .Field("amount_micro_usd", session.amount_micro_usd)
      .Field("currency", session.currency)
      .Field("status", session.status)
      .Field("created_at", FormatRfc3339(session.created_ms))
      .EndObject();
  return w.Take();
}

CheckoutApi::CheckoutApi(std::unique_ptr<PaymentProvider> provider, PaymentStore& payments,
                         LedgerStore& ledger, BalanceStore& balances, RetryQueue& retries,
                         Options options)
    : provider_(std::move(provider)),
      payments_(payments),
      ledger_(ledger),
      balances_(balances),
      retries_(retries),
      options_(std::move(options)) {}

void CheckoutApi::AddRoutes(core::Router& router) {
  router.Add("POST", "/billing/checkout-sessions",
             [this](const core::Request& r) { return CreateSession(r); });
  // Public: the provider has no API key; the signature over the body is its credential.
  router.Add(
      "POST", "/billing/webhooks/stripe", [this](const core::Request& r) { return Webhook(r); },
      /*require_auth=*/false);
}

std::string CheckoutApi::PublicBase(const v1::HttpRequest& request) const {
  std::string base = options_.public_url;
  if (base.empty()) {
    auto told = request.headers().find(std::string(core::kPublicBaseHeader));
    if (told != request.headers().end()) base = told->second;
  }
  while (!base.empty() && base.back() == '/') base.pop_back();
  return base;
}

v1::HttpResponse CheckoutApi::CreateSession(const core::Request& request) {
  if (options_.funding != FundingMode::kCheckout || !provider_) return NotEnabled();
  auto parsed = ParseCheckoutRequest(request.http, provider_->limits());
  if (auto* problem = std::get_if<v1::Problem>(&parsed)) {
    return core::ProblemResponse(std::move(*problem));
  }
  const CheckoutRequest& checkout = std::get<CheckoutRequest>(parsed);
  const std::string& org = request.principal().org_id();
  if (!checkout.idempotency_key.empty()) {
    auto earlier = payments_.FindSession(org, checkout.idempotency_key);
    if (!earlier.ok()) return core::Unavailable(earlier.status());
    if (earlier->has_value()) {
      if ((*earlier)->amount_micro_usd != checkout.amount_micro_usd) return KeyReused(**earlier);
      return core::JsonResponse(201, CheckoutSessionJson(**earlier));
    }
  }
  const std::string base = PublicBase(request.http);
  if (base.empty()) {
    return core::Unavailable(Status::Internal("no public URL to return the payer to"));
  }
  CheckoutSessionRequest create;
  create.org_id = org;
  create.amount_cents = checkout.amount_micro_usd / kMicroUsdPerCent;
  create.currency = kCurrency;
  create.product_name = kProductName;
  create.success_url = base + kSuccessPath;
  create.cancel_url = base + kCancelPath;
  create.idempotency_key = ProviderIdempotencyKey(org, checkout.idempotency_key);
  auto created = provider_->CreateCheckoutSession(create);
  if (!created.ok()) {
    log::Error("checkout session not created")
        .Str("org_id", org)
        .Str("provider", provider_->name())
        .Str("error", created.status().message());
    return core::ProblemResponse("payment_provider_unavailable",
                                 "The payment provider did not create a checkout session; try "
                                 "again in a moment.");
  }
  CheckoutRecord record;
  record.provider = std::string(provider_->name());
  record.session_id = created->id;
  record.org_id = org;
  record.amount_micro_usd = checkout.amount_micro_usd;
  record.currency = kCurrency;
  record.url = created->url;
  record.idempotency_key = checkout.idempotency_key;
  auto stored = payments_.RecordSession(record);
  if (!stored.ok()) return core::Unavailable(stored.status());
  if (stored->amount_micro_usd != checkout.amount_micro_usd) return KeyReused(*stored);
  log::Info("checkout session created")
      .Str("org_id", org)
      .Str("checkout_session_id", stored->session_id)
      .Int("amount_micro_usd", stored->amount_micro_usd);
  return core::JsonResponse(201, CheckoutSessionJson(*stored));
}

v1::HttpResponse CheckoutApi::Webhook(const core::Request& request) {
  if (options_.funding != FundingMode::kCheckout || !provider_) return NotEnabled();
  auto event = provider_->VerifyWebhook(request.http, NowMs() / 1000);
  if (!event.ok()) {
    log::Warn("webhook refused")
        .Str("provider", provider_->name())
        .Str("request_id", request.http.request_id())
        .Str("why", event.status().message());
    return core::ProblemResponse("invalid_signature", event.status().message());
  }
  EventResult result;
  if (event->kind != PaymentEventKind::kOther) {
    auto org = payments_.OrganizationOf(*event);
    if (!org.ok()) return core::Unavailable(org.status());
    // Before the entry commits (credit_application.h).
    if (org->has_value()) {
      if (Status s = LoadBalances(balances_, ledger_, {**org}); !s.ok()) {
        return core::Unavailable(s);
      }
    }
    auto applied = payments_.Apply(*event);
    if (!applied.ok()) return core::Unavailable(applied.status());
    result = std::move(*applied);
  } else {
    result.detail = "not an event billing acts on";
  }
  if (result.outcome == EventOutcome::kCredited || result.outcome == EventOutcome::kDebited) {
    ApplyToCachedBalance(balances_, retries_,
                         std::string(EventOutcomeName(result.outcome)) + " " + event->type + " " +
                             std::to_string(result.ledger_id),
                         result.org_id, result.ledger_id, result.amount_micro_usd);
  }
  log::LogLine line(
      result.outcome == EventOutcome::kRefused ? log::Level::kWarn : log::Level::kInfo,
      result.outcome == EventOutcome::kRefused ? "payment event refused" : "payment event");
  line.Str("provider", event->provider)
      .Str("event_id", event->event_id)
      .Str("type", event->type)
      .Str("outcome", EventOutcomeName(result.outcome))
      .Str("detail", result.detail)
      .Str("org_id", result.org_id)
      .Int("amount_micro_usd", result.amount_micro_usd);
  // 2xx for every verified event, refused ones included: the provider retries anything else,
  // and a refusal is final.
  JsonWriter w;
  w.BeginObject()
      .Field("event_id", event->event_id)
      .Field("outcome", EventOutcomeName(result.outcome))
      .EndObject();
  return core::JsonResponse(200, w.Take());
}

}  // namespace toolgate::billing
