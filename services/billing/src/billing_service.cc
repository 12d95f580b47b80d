#include "toolgate/billing/billing_service.h"

#include "toolgate/base/log.h"
#include "toolgate/billing/grant_usage.h"
#include "toolgate/core/subjects.h"

namespace toolgate::billing {
namespace {

constexpr int kOrganizationLookupTimeoutMs = 5'000;
// A statement names its functions within this, or lists them without names.
constexpr int kFunctionNamesTimeoutMs = 2'000;
// How often due callbacks are looked for: the first retry is due a second after a failure.
constexpr int64_t kCallbackIntervalMs = 250;

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
      notifications_(pool, redis, balances_, budget_cache_, config_),
      states_(pool),
      async_(service.bus(), balances_, states_, config_),
      execution_api_(ledger_, states_, balances_, service.bus()),
      webhook_secrets_(pool),
      webhook_secret_api_(webhook_secrets_),
      callback_transport_(webhook::HttpTransport::Options{.policy = config_.callback_targets}),
      callbacks_(states_, webhook_secrets_, callback_transport_) {
  api_.AddRoutes(router_);
  execution_api_.AddRoutes(router_);
  webhook_secret_api_.AddRoutes(router_);
  stage_.SetAsync(&states_, &async_, &webhook_secrets_);
  settler_.SetAsyncUnserved([this](const std::string& execution_id, const std::string& org_id) {
    async_.Unserved(execution_id, org_id);
  });
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
  if (s.ok()) {
    // Asynchronous calls need JetStream; synchronous ones do not wait for it. Until the queue
    // opens, asynchronous calls are refused 503.
    StartAsyncQueue();
    async_starter_ = std::make_unique<net::PeriodicTask>(std::chrono::seconds(2), [this] {
      if (!async_.started()) StartAsyncQueue();
    });
    callbacks_.Start(kCallbackIntervalMs);
  }
  return s;
}

void BillingService::StartAsyncQueue() {
  Status started = async_.Start();
  if (!started.ok()) {
    log::Warn("execution queue not open yet; asynchronous calls refused until it is")
        .Str("error", started.ToString());
  }
}

void BillingService::Stop() {
  callbacks_.Stop();
  async_starter_.reset();
  async_.Stop();
  stage_.Stop();
  settler_.Stop();
  // After the settler: its last batches may still queue alerts.
  notifications_.Stop();
  reaper_.Stop();
  reconcile_watch_.Stop();
  identity_watch_.Stop();
}

}  // namespace toolgate::billing
