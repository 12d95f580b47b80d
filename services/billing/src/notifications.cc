#include "toolgate/billing/notifications.h"

#include <utility>

namespace toolgate::billing {
namespace {

webhook::HttpTransport::Options TransportOptions(const Config& config) {
  webhook::HttpTransport::Options options;
  options.policy.allow_private_targets = config.webhook_allow_private_targets;
  options.connect_timeout_ms = 3'000;
  // The test route waits for one attempt within the edge's management timeout (15 s).
  options.timeout_ms = 5'000;
  return options;
}

webhook::Dispatcher::Options DispatcherOptions() {
  webhook::Dispatcher::Options options;
  options.source = "billing_notifications";
  // 4 attempts over about 7 s at most: an alert is worth little an hour late.
  options.retry = webhook::RetryPolicy{.max_attempts = 4,
                                       .initial_backoff_ms = 1'000,
                                       .max_backoff_ms = 4'000,
                                       .max_total_ms = 60'000};
  options.max_queue = 10'000;
  return options;
}

}  // namespace

Notifications::Notifications(pg::Pool& pool, redis::Client& redis, BalanceStore& balances,
                             BudgetSettingsCache& budgets, const Config& config)
    : transport_(TransportOptions(config)),
      dispatcher_(transport_, DispatcherOptions()),
      store_(pool),
      cache_(store_, NotificationEndpointCache::Options{}),
      api_(store_, cache_, transport_,
           webhook::TargetPolicy{.allow_private_targets = config.webhook_allow_private_targets}),
      alerts_(balances, budgets, cache_, redis, dispatcher_) {}

Settler::CaptureListener Notifications::CaptureListener() {
  return [this](std::vector<CapturedCharge> charges) { alerts_.OnCaptured(std::move(charges)); };
}

void Notifications::Stop() {
  alerts_.Stop();
  dispatcher_.Stop();
}

}  // namespace toolgate::billing
