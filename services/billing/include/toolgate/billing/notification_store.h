// Notification endpoints as organizations set them (PUT /billing/notifications): one row per
// organization in billing.notification_endpoints, and the cache budget alerts read them from.
//
// An endpoint's secret signs what is sent to it (webhook/signature.h): it is answered once, when
// created or rotated, and never logged.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "toolgate/base/bounded_ttl_cache.h"
#include "toolgate/base/status.h"
#include "toolgate/pg/pg.h"

namespace toolgate::billing {

// The event types an endpoint may subscribe to.
inline constexpr std::string_view kBudgetThresholdEvent = "budget.threshold_reached";
// Sent by POST /billing/notifications/test whatever the subscription.
inline constexpr std::string_view kTestEvent = "notification.test";
const std::vector<std::string>& NotificationEventTypes();

struct NotificationEndpoint {
  std::string org_id;
  std::string url;
  std::vector<std::string> events;  // each one of NotificationEventTypes(), sorted, unique
  std::string secret;               // "whsec_..."
  int64_t created_at_ms = 0;
  int64_t updated_at_ms = 0;

  bool Subscribes(std::string_view event) const;
};

// billing.notification_endpoints. Thread-safe (pg::Pool is); Unavailable when PostgreSQL cannot
// be reached.
class NotificationStore {
 public:
  // pool must outlive the store.
  explicit NotificationStore(pg::Pool& pool) : pool_(pool) {}

  Result<std::optional<NotificationEndpoint>> Get(const std::string& org_id);
  // Creates the organization's endpoint with new_secret, or replaces its url and events keeping
  // the secret it has. Returns the endpoint as stored and whether it was created.
  struct PutOutcome {
    NotificationEndpoint endpoint;
    bool created = false;
  };
  Result<PutOutcome> Put(const std::string& org_id, const std::string& url,
                         const std::vector<std::string>& events, const std::string& new_secret);
  // false when the organization had none.
  Result<bool> Delete(const std::string& org_id);
  // Replaces the secret; nullopt when the organization has no endpoint.
  Result<std::optional<NotificationEndpoint>> RotateSecret(const std::string& org_id,
                                                           const std::string& new_secret);

 private:
  pg::Pool& pool_;
};

// The endpoints as budget alerts read them, cached for ttl_ms (also "none"), and dropped at once
// on this replica when they change through its API (Invalidate); another replica's change is
// seen within ttl_ms. Thread-safe.
class NotificationEndpointCache {
 public:
  struct Options {
    int64_t ttl_ms = 5000;
    size_t capacity = 10'000;
  };
  // store must outlive the cache.
  NotificationEndpointCache(NotificationStore& store, Options options);

  Result<std::optional<NotificationEndpoint>> Get(const std::string& org_id);
  void Invalidate(const std::string& org_id);

 private:
  using Entry = std::shared_ptr<const std::optional<NotificationEndpoint>>;
  NotificationStore& store_;
  const Options options_;
  BoundedTtlCache<std::string, Entry> cache_;
};

}  // namespace toolgate::billing
