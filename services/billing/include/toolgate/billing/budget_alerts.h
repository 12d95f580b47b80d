// Budget alerts: a signed webhook (budget.threshold_reached) to the organization's notification
// endpoint when a capture brings a spending limit's spent to 80 % and again to 100 % of its cap,
// once per (budget, period, threshold) however many replicas settle at once.
//
// The settler hands over which calls a batch charged (Settler::SetCaptureListener); one thread
// of this class then, per batch, reads the touched budgets' caps (BudgetSettingsCache) and spent
// (BalanceStore::ReadBudget, after the captures), and for each threshold reached with an
// endpoint subscribed claims the alert with SET NX on tg:budget_alert:<budget>:<threshold>
// (expiring with the period's budget key): the replica whose SET succeeds sends it, every other
// check of that threshold in the period finds it claimed. The claim comes before the delivery,
// so an alert whose delivery fails for good is not sent again (the endpoint's receiver sees its
// retries, all with one webhook-id). An endpoint set after a threshold was crossed hears of the
// next one.
//
// Alerts are not money: a full queue drops a batch's check (counted), and a check that cannot
// reach Redis or PostgreSQL is logged and skipped; the next capture of the budget checks again.
// Thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "toolgate/base/batch_queue.h"
#include "toolgate/billing/balance_store.h"
#include "toolgate/billing/budget_settings.h"
#include "toolgate/billing/notification_store.h"
#include "toolgate/billing/settler.h"
#include "toolgate/redis/redis.h"
#include "toolgate/webhook/dispatcher.h"

namespace toolgate::billing {

// The thresholds alerted, in percent of a budget's cap.
inline constexpr int kAlertThresholds[] = {80, 100};

// The thresholds of kAlertThresholds that spent has reached of cap (cap > 0), ascending.
std::vector<int> ThresholdsReached(int64_t spent_micro_usd, int64_t cap_micro_usd);

struct BudgetAlert {
  std::string org_id;
  Budget budget;  // kKey or kOrg, with its period and cap
  int threshold_percent = 0;
  int64_t spent_micro_usd = 0;
};

// The webhook's body: {"type": "budget.threshold_reached", "timestamp", "data": {organization_id,
// budget: {scope, key_id, period, period_start, resets_at}, threshold_percent, limit_micro_usd,
// spent_micro_usd}} (docs/api.md "Notifications").
std::string BudgetAlertJson(const BudgetAlert& alert, int64_t now_ms);
// tg:budget_alert:key:<key_id>:d:<day>:<threshold> (or org:<org_id>, m:<month>).
std::string AlertClaimKey(const Budget& budget, int threshold_percent);
// The alert's webhook-id, from its claim: the same for every replica and attempt.
std::string AlertMessageId(const std::string& claim_key);

class BudgetAlerts {
 public:
  // Every reference must outlive the object; now_ms: the wall clock (tests drive it). Starts
  // the checking thread.
  BudgetAlerts(BalanceStore& balances, BudgetSettingsCache& settings,
               NotificationEndpointCache& endpoints, redis::Client& redis,
               webhook::Dispatcher& dispatcher, std::function<int64_t()> now_ms = {});
  ~BudgetAlerts();
  BudgetAlerts(const BudgetAlerts&) = delete;
  BudgetAlerts& operator=(const BudgetAlerts&) = delete;

  // What a settled batch charged; queues the check and returns at once.
  void OnCaptured(std::vector<CapturedCharge> charges);
  // Checks what is queued, then stops the thread.
  void Stop();

 private:
  void Check(std::vector<CapturedCharge> charges);
  void CheckBudget(const std::string& org_id, const Budget& budget);
  // Claims the alert; true when this call claimed it.
  bool Claim(const std::string& claim_key, const Budget& budget);

  BalanceStore& balances_;
  BudgetSettingsCache& settings_;
  NotificationEndpointCache& endpoints_;
  redis::Client& redis_;
  webhook::Dispatcher& dispatcher_;
  std::function<int64_t()> now_ms_;
  BatchQueue<CapturedCharge> queue_;  // last: its thread calls Check
};

}  // namespace toolgate::billing
