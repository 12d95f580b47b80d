#include "toolgate/billing/billing_service.h"

#include "toolgate/billing/grant_usage.h"
#include "toolgate/core/subjects.h"

namespace toolgate::billing {
namespace {

constexpr int kOrganizationLookupTimeoutMs = 5'000;
// A statement names its functions within this, or lists them without names.
constexpr int kFunctionNamesTimeoutMs = 2'000;

}  // namespace

BillingService::BillingService(bus::Service& service, pg::Pool& pool, redis::Client& redis,
                               Config config, std::unique_ptr<PaymentProvider> payments)
    : service_(service),
      config_(config),
      ledger_(pool),
      balances_(redis, config_.limits),
      settler_(service.bus(), ledger_, balances_, retries_, config_, recent_compute_),
      reaper_(ledger_, balances_, config_),
      reconcile_watch_(ledger_, balances_, config_.reconcile_check_interval_ms),
      identity_watch_(pool, balances_,
                      std::chrono::milliseconds(config_.ledger_identity_interval_ms)),
      budget_settings_(pool),
      budget_cache_(budget_settings_, BudgetSettingsCache::Options{}),
      budget_api_(budget_settings_, budget_cache_, ledger_),
      stage_(service.bus(), balances_, ledger_, service.pool(), budget_cache_, config_),
      // Within the management timeout the edge waits for the whole answer.
      organizations_(service.bus(), kOrganizationLookupTimeoutMs),
      api_(ledger_, balances_, retries_, organizations_, config_.funding),
      earnings_(pool),
      function_names_(service.bus(), kFunctionNamesTimeoutMs),
      earnings_api_(earnings_, ledger_, balances_, organizations_, function_names_),
      payment_store_(pool),
      checkout_api_(
          std::move(payments), payment_store_, ledger_, balances_, retries_,
          CheckoutApi::Options{.funding = config_.funding, .public_url = config_.public_url}),
      notifications_(pool, redis, balances_, budget_cache_, config_) {
  api_.AddRoutes(router_);
  budget_api_.AddRoutes(router_);
  earnings_api_.AddRoutes(router_);
  notifications_.AddRoutes(router_);
  settler_.SetCaptureListener(notifications_.CaptureListener());
  checkout_api_.AddRoutes(router_);
}

Status BillingService::Start() {
  // Settlement first, so that no job is forwarded before its result can be received. Inline:
  // OnResult only parses and queues for the settler's batcher thread.
  Status s = service_.HandleInline(core::kSettleSubjects, "billing",
                                   [this](bus::Message&& m) { settler_.OnResult(std::move(m)); });
  if (s.ok()) {
    s = service_.Handle(core::kUnservedSubjects, "",
                        [this](bus::Message&& m) { settler_.OnNoResponders(m); });
  }
  if (s.ok()) {
    // Inline: Handle only checks the job and queues its hold (see invoke_stage.h).
    s = service_.HandleInline(core::kBillingStageSubject, "billing",
                              [this](bus::Message&& m) { stage_.Handle(std::move(m)); });
  }
  // On the worker pool: it reads PostgreSQL.
  if (s.ok()) s = ServeGrantUsage(service_, ledger_);
  if (s.ok()) s = ServeComputeMedians(service_, recent_compute_, config_.rates);
  if (s.ok()) s = core::ServeHttp(service_, router_);
  if (s.ok()) reaper_.Start();
  if (s.ok()) reconcile_watch_.Start();
  if (s.ok()) identity_watch_.Start();
  return s;
}

void BillingService::Stop() {
  stage_.Stop();
  settler_.Stop();
  // After the settler: its last batches may still queue alerts.
  notifications_.Stop();
  reaper_.Stop();
  reconcile_watch_.Stop();
  identity_watch_.Stop();
}

}  // namespace toolgate::billing
