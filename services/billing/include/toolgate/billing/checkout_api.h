// The checkout funding routes (docs/api.md "Checkout"), served on tg.billing.http with the
// other billing routes:
//   POST /billing/checkout-sessions   a member buys credit: 201 {checkout_session_id,
//                                     checkout_url, amount_micro_usd, currency, status,
//                                     created_at}; Idempotency-Key answers the same session
//   POST /billing/webhooks/stripe     the provider's signed events (no API key: the signature
//                                     is the credential): 200 {event_id, outcome}; 400
//                                     invalid_signature for a missing, wrong or stale signature
// Outside checkout funding both answer 403 checkout_not_enabled. Credits and debits are made
// by PaymentStore::Apply (once per provider event) and then applied to the cached balance.
// Thread-safe.
#pragma once

#include <memory>
#include <string>

#include "toolgate/billing/balance_store.h"
#include "toolgate/billing/funding.h"
#include "toolgate/billing/ledger_store.h"
#include "toolgate/billing/payment_provider.h"
#include "toolgate/billing/payment_store.h"
#include "toolgate/billing/retry_queue.h"
#include "toolgate/core/http.h"

namespace toolgate::billing {

class CheckoutApi {
 public:
  struct Options {
    FundingMode funding = FundingMode::kGrants;
    // The web app's public URL, where the payer returns; empty: the public base the edge
    // reports with each request.
    std::string public_url;
  };

  // provider: null outside checkout funding. Every reference must outlive the CheckoutApi.
  CheckoutApi(std::unique_ptr<PaymentProvider> provider, PaymentStore& payments,
              LedgerStore& ledger, BalanceStore& balances, RetryQueue& retries, Options options);

  // Adds the routes above to router; router must not outlive this object.
  void AddRoutes(core::Router& router);

  v1::HttpResponse CreateSession(const core::Request& request);
  v1::HttpResponse Webhook(const core::Request& request);

 private:
  // The web app's base URL for this request: the configured one, else the edge's.
  std::string PublicBase(const v1::HttpRequest& request) const;

  const std::unique_ptr<PaymentProvider> provider_;
  PaymentStore& payments_;
  LedgerStore& ledger_;
  BalanceStore& balances_;
  RetryQueue& retries_;
  const Options options_;
};

// The JSON of a checkout session as the API shows it.
std::string CheckoutSessionJson(const CheckoutRecord& session);

}  // namespace toolgate::billing
