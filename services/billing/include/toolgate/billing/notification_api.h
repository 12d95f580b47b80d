// The notification routes of the management API (docs/api.md "Notifications"), served on
// tg.billing.http for the caller's organization:
//   GET    /billing/notifications                {url, events, created_at, updated_at}; 404
//                                                 when none is set
//   PUT    /billing/notifications                {url, events?}: 201 with the new endpoint's
//                                                 secret (shown this once), or 200 when it
//                                                 replaced one (its secret kept, not shown)
//   DELETE /billing/notifications                204
//   POST   /billing/notifications/rotate-secret  the endpoint with its new secret
//   POST   /billing/notifications/test           one signed notification.test delivery, made
//                                                 while the request waits: {webhook_id,
//                                                 delivered, status_code, error}
// A URL must pass webhook::UrlRefusal under the service's TargetPolicy (400
// notification_url_refused); each change drops this replica's cached endpoint at once. Secrets
// are never logged. Thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <variant>
#include <vector>

#include "toolgate/billing/notification_store.h"
#include "toolgate/core/http.h"
#include "toolgate/webhook/target_policy.h"
#include "toolgate/webhook/transport.h"

namespace toolgate::billing {

// A PUT's body, checked.
struct NotificationSettings {
  std::string url;
  std::vector<std::string> events;  // sorted, unique; every type when the body names none
};
// The body of a PUT, or the problem to answer: invalid_json, validation_failed (url missing or
// not a string, events not a non-empty array of known types) or notification_url_refused.
std::variant<NotificationSettings, v1::Problem> ParseNotificationSettings(
    const std::string& body, const webhook::TargetPolicy& policy);

class NotificationApi {
 public:
  // Every reference must outlive the object; transport makes the test deliveries; now_ms: the
  // wall clock (Unix ms).
  NotificationApi(NotificationStore& store, NotificationEndpointCache& cache,
                  webhook::Transport& transport, webhook::TargetPolicy policy,
                  std::function<int64_t()> now_ms = {});

  // Adds the routes above to router; router must not outlive this object.
  void AddRoutes(core::Router& router);

  v1::HttpResponse Get(const core::Request& request);
  v1::HttpResponse Put(const core::Request& request);
  v1::HttpResponse Delete(const core::Request& request);
  v1::HttpResponse RotateSecret(const core::Request& request);
  v1::HttpResponse Test(const core::Request& request);

 private:
  NotificationStore& store_;
  NotificationEndpointCache& cache_;
  webhook::Transport& transport_;
  const webhook::TargetPolicy policy_;
  std::function<int64_t()> now_ms_;
};

// The endpoint as the API shows it; with_secret adds "secret".
std::string NotificationEndpointJson(const NotificationEndpoint& endpoint, bool with_secret);

}  // namespace toolgate::billing
