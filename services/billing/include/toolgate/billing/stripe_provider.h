// StripeProvider: the PaymentProvider of Stripe Checkout.
//   CreateCheckoutSession  POST {api_base}/v1/checkout/sessions, form-encoded, with
//                          Authorization: Bearer <secret key> and the request's Idempotency-Key:
//                          mode=payment, one line item (price_data: currency, unit_amount in
//                          cents, product_data.name; quantity 1), client_reference_id and
//                          metadata[toolgate_org_id] = the organization, success_url, cancel_url.
//   VerifyWebhook          the Stripe-Signature header over the raw body (stripe_signature.h),
//                          then the event (stripe_event.h).
// The secret key and the webhook signing secret are held in memory only: no message, log line
// or error of this class contains them. Thread-safe (each request uses its own HTTP client).
#pragma once

#include <chrono>
#include <string>

#include "toolgate/billing/payment_provider.h"

namespace toolgate::billing {

struct StripeOptions {
  std::string api_base = "https://api.stripe.com";  // tests point it at a stand-in
  std::string secret_key;                           // sk_live_... / sk_test_...
  std::string webhook_secret;                       // whsec_...
  std::chrono::milliseconds timeout{10'000};
};

class StripeProvider : public PaymentProvider {
 public:
  // Stripe's limits for a USD charge: at least $0.50, at most eight digits of cents.
  static constexpr CheckoutLimits kUsdLimits{50, 99'999'999};

  explicit StripeProvider(StripeOptions options);

  std::string_view name() const override { return "stripe"; }
  CheckoutLimits limits() const override { return kUsdLimits; }
  Result<CheckoutSession> CreateCheckoutSession(const CheckoutSessionRequest& request) override;
  Result<PaymentEvent> VerifyWebhook(const v1::HttpRequest& request, int64_t now_s) override;

 private:
  const StripeOptions options_;
};

// The form body of a Checkout Session for request (application/x-www-form-urlencoded, Stripe's
// bracket notation for nested fields). Pure.
std::string CheckoutSessionForm(const CheckoutSessionRequest& request);

}  // namespace toolgate::billing
