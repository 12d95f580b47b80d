// PaymentProvider: what checkout funding needs from a payment provider (docs/operations.md
// "Checkout funding"): create a hosted checkout session for an amount, and turn the provider's
// signed webhook deliveries into normalized events. StripeProvider (stripe_provider.h)
// implements it; a second provider implements the same two calls and is chosen by
// configuration, and nothing else in billing changes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "toolgate/base/status.h"
#include "toolgate/v1/toolgate.pb.h"

namespace toolgate::billing {

// The amounts a provider accepts for one checkout, in the currency's minor unit (cents).
struct CheckoutLimits {
  int64_t min_cents = 0;
  int64_t max_cents = 0;
};

struct CheckoutSessionRequest {
  std::string org_id;  // the provider returns it with the completed session
  int64_t amount_cents = 0;
  std::string currency;      // lower-case ISO 4217: "usd"
  std::string product_name;  // what the payer sees
  std::string success_url;
  std::string cancel_url;
  // Sent to the provider, so that a retried request creates no second session. Not empty.
  std::string idempotency_key;
};

struct CheckoutSession {
  std::string id;   // the provider's session id ("cs_test_...")
  std::string url;  // where the payer goes to pay
};

enum class PaymentEventKind {
  kCheckoutCompleted,  // a session was completed (paid says whether money was taken)
  kRefund,             // a payment was refunded, partly or fully
  kDispute,            // a payer disputed a payment and the funds are withdrawn
  kOther,              // anything else: acknowledged, nothing is done
};

// One verified webhook event, in the provider's own ids. Amounts are in the minor unit of
// currency as the provider reports it.
struct PaymentEvent {
  std::string provider;  // "stripe"
  std::string event_id;
  std::string type;  // the provider's name for it ("checkout.session.completed")
  PaymentEventKind kind = PaymentEventKind::kOther;
  std::string checkout_session_id;  // kCheckoutCompleted
  std::string org_id;               // kCheckoutCompleted: the reference given at creation
  bool paid = false;                // kCheckoutCompleted: the payment was taken
  std::string payment_intent_id;    // every kind but kOther; may be empty
  std::string currency;             // lower case
  // kCheckoutCompleted: the session's total; kRefund: the charge's amount; kDispute: the amount
  // disputed.
  int64_t amount_cents = 0;
  int64_t refunded_cents = 0;  // kRefund: everything refunded on the charge so far
  std::string dispute_id;      // kDispute
};

class PaymentProvider {
 public:
  virtual ~PaymentProvider() = default;

  // "stripe": the provider column of the rows it produces, and its webhook route's name.
  virtual std::string_view name() const = 0;
  virtual CheckoutLimits limits() const = 0;

  // Creates a session on the provider's API. Unavailable when the provider cannot be reached
  // or answers with an error (the message says which status and error type, never the secret
  // or the request). Blocks for at most the provider's request timeout. Thread-safe.
  virtual Result<CheckoutSession> CreateCheckoutSession(const CheckoutSessionRequest& request) = 0;

  // Verifies the delivery's signature over its raw body and parses its event. InvalidArgument
  // (its message fit for the sender) when the signature is missing, wrong or stale, or the body
  // is not an event. now_s: the current Unix time. Thread-safe.
  virtual Result<PaymentEvent> VerifyWebhook(const v1::HttpRequest& request, int64_t now_s) = 0;
};

}  // namespace toolgate::billing
