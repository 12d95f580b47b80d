// BillingService: everything the billing process runs, wired to its bus::Service.
//
//   tg.invoke.billing       (queue "billing")       InvokeStage: hold, forward to the executors
//   tg.billing.settle.*     (queue "billing")       Settler: results, group commit, capture
//   tg.billing.settle.*     (plain, this replica)   Settler: no-responders notices of its jobs
//   tg.billing.grant_usage  (queue "billing")       what OAuth grants spent (grant_usage.h)
//   tg.billing.http: also EarningsApi (earnings statements and payouts)
//   tg.billing.compute_medians (queue "billing")    recent compute charges (compute_medians.h)
//   tg.billing.http         (queue "billing-http")  HttpApi
//   tg.billing.http: also NotificationApi; Notifications (notifications.h) sends budget alerts
//   tg.billing.http: also CheckoutApi (checkout funding: sessions and the provider's webhook)
//   tg.billing.http: also ExecutionApi (an execution's status, cancel) and WebhookSecretApi;
//   CallbackSender delivers asynchronous calls' callbacks
//   JetStream TG_ASYNC (consumer "dispatch")          AsyncQueue: asynchronous executions
// plus the hold reaper, the background retry of Redis captures, and the checks of balances and of
// the whole-ledger identity for their metrics.
#pragma once

#include <memory>

#include "toolgate/billing/async_queue.h"
#include "toolgate/billing/balance_store.h"
#include "toolgate/billing/budget_api.h"
#include "toolgate/billing/budget_settings.h"
#include "toolgate/billing/callbacks.h"
#include "toolgate/billing/checkout_api.h"
#include "toolgate/billing/config.h"
#include "toolgate/billing/earnings_api.h"
#include "toolgate/billing/earnings_store.h"
#include "toolgate/billing/execution_api.h"
#include "toolgate/billing/execution_states.h"
#include "toolgate/billing/function_names.h"
#include "toolgate/billing/http_api.h"
#include "toolgate/billing/invoke_stage.h"
#include "toolgate/billing/ledger_identity.h"
#include "toolgate/billing/ledger_store.h"
#include "toolgate/billing/notifications.h"
#include "toolgate/billing/payment_provider.h"
#include "toolgate/billing/payment_store.h"
#include "toolgate/billing/reaper.h"
#include "toolgate/billing/reconcile.h"
#include "toolgate/billing/retry_queue.h"
#include "toolgate/billing/settler.h"
#include "toolgate/billing/webhook_secrets.h"
#include "toolgate/bus/service.h"
#include "toolgate/core/http.h"
#include "toolgate/pg/pg.h"
#include "toolgate/redis/redis.h"
#include "toolgate/webhook/http_transport.h"

namespace toolgate::billing {

class BillingService {
 public:
  // service, pool and redis must outlive this object. payments: the payment provider of
  // checkout funding (null in the other modes).
  BillingService(bus::Service& service, pg::Pool& pool, redis::Client& redis, Config config,
                 std::unique_ptr<PaymentProvider> payments = nullptr);
  BillingService(const BillingService&) = delete;
  BillingService& operator=(const BillingService&) = delete;

  // Subscribes to the subjects above and starts the reaper.
  Status Start();
  // Call after service.Run() returned (nothing is delivered any more): settles what is queued
  // and stops the background threads.
  void Stop();

 private:
  bus::Service& service_;
  const Config config_;
  LedgerStore ledger_;
  BalanceStore balances_;
  RetryQueue retries_;
  RecentComputeCharges recent_compute_;
  Settler settler_;
  Reaper reaper_;
  ReconcileWatch reconcile_watch_;
  LedgerIdentityWatch identity_watch_;
  BudgetSettingsStore budget_settings_;
  BudgetSettingsCache budget_cache_;
  BudgetApi budget_api_;
  InvokeStage stage_;
  BusOrganizationDirectory organizations_;
  HttpApi api_;
  EarningsStore earnings_;
  BusFunctionNames function_names_;
  EarningsApi earnings_api_;
  PaymentStore payment_store_;
  CheckoutApi checkout_api_;
  core::Router router_;
  Notifications notifications_;
  ExecutionStates states_;
  AsyncQueue async_;
  ExecutionApi execution_api_;
  WebhookSecrets webhook_secrets_;
  WebhookSecretApi webhook_secret_api_;
  webhook::HttpTransport callback_transport_;
  CallbackSender callbacks_;
  std::unique_ptr<net::PeriodicTask> async_starter_;  // opens async_ once JetStream answers

  void StartAsyncQueue();
};

}  // namespace toolgate::billing
