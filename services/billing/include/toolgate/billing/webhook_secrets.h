// An organization's webhook secret: what its asynchronous calls' callbacks are signed with
// (Standard Webhooks, "whsec_" + base64 of 32 random bytes; docs/api.md "Callbacks"), in
// PostgreSQL (billing.webhook_secrets). Made or rotated by POST /webhooks/secret, which shows it
// that once; after a rotation the previous secret signs alongside for kPreviousSecretMs, so a
// receiver can switch without missing a callback. Never logged.
//
//   POST /webhooks/secret  201 {secret, created_at, previous_valid_until}
//   GET  /webhooks/secret  200 {created_at, previous_valid_until}, never the secret; 404 when
//                          none was made
// Thread-safe (pg::Pool is).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "toolgate/base/status.h"
#include "toolgate/core/http.h"
#include "toolgate/pg/pg.h"

namespace toolgate::billing {

// How long a rotated-out secret still signs.
inline constexpr int64_t kPreviousSecretMs = 24LL * 3600 * 1000;

struct WebhookSecret {
  std::string secret;           // "whsec_..."
  std::string previous_secret;  // empty: none signs alongside (now)
  int64_t created_ms = 0;
  int64_t previous_until_ms = 0;  // 0: no previous secret
};

class WebhookSecrets {
 public:
  // pool must outlive the store.
  explicit WebhookSecrets(pg::Pool& pool) : pool_(pool) {}

  // Makes the organization's secret, or replaces it (the old one signing on for
  // kPreviousSecretMs). The answer holds the new secret.
  Result<WebhookSecret> Rotate(const std::string& org_id);
  // The secrets that sign now (previous_secret only while it is valid); nullopt: none made.
  Result<std::optional<WebhookSecret>> Signing(const std::string& org_id);

 private:
  pg::Pool& pool_;
};

class WebhookSecretApi {
 public:
  explicit WebhookSecretApi(WebhookSecrets& secrets) : secrets_(secrets) {}
  // Adds the routes above to router; router must not outlive this object.
  void AddRoutes(core::Router& router);

 private:
  WebhookSecrets& secrets_;
};

}  // namespace toolgate::billing
