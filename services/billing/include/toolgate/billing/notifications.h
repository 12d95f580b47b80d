// Notifications: billing's signed webhooks to the endpoint an organization sets, wired in one
// place: the endpoints' store and routes (notification_api.h), the budget alerts fed by the
// settler (budget_alerts.h), and the delivery they share (libs/webhook: one HttpTransport under
// the service's TargetPolicy, one Dispatcher with its queue, worker and retries).
//
// Stop() before the settler is destroyed: the settler's capture listener calls into this object.
// Thread-safe.
#pragma once

#include "toolgate/billing/balance_store.h"
#include "toolgate/billing/budget_alerts.h"
#include "toolgate/billing/budget_settings.h"
#include "toolgate/billing/config.h"
#include "toolgate/billing/notification_api.h"
#include "toolgate/billing/notification_store.h"
#include "toolgate/billing/settler.h"
#include "toolgate/core/http.h"
#include "toolgate/pg/pg.h"
#include "toolgate/redis/redis.h"
#include "toolgate/webhook/dispatcher.h"
#include "toolgate/webhook/http_transport.h"

namespace toolgate::billing {

class Notifications {
 public:
  // Every reference must outlive the object. Starts the alert checker and the delivery worker.
  Notifications(pg::Pool& pool, redis::Client& redis, BalanceStore& balances,
                BudgetSettingsCache& budgets, const Config& config);
  Notifications(const Notifications&) = delete;
  Notifications& operator=(const Notifications&) = delete;

  // Adds the notification routes to router; router must not outlive this object.
  void AddRoutes(core::Router& router) { api_.AddRoutes(router); }
  // For Settler::SetCaptureListener.
  Settler::CaptureListener CaptureListener();
  // Checks the queued alerts, then stops delivering (what still waits is dropped, counted).
  void Stop();

 private:
  webhook::HttpTransport transport_;
  webhook::Dispatcher dispatcher_;
  NotificationStore store_;
  NotificationEndpointCache cache_;
  NotificationApi api_;
  BudgetAlerts alerts_;
};

}  // namespace toolgate::billing
