#include "toolgate/billing/webhook_secrets.h"

#include "toolgate/base/json_writer.h"
#include "toolgate/base/time.h"
#include "toolgate/core/problem.h"
#include "toolgate/webhook/signature.h"

namespace toolgate::billing {
namespace {

constexpr std::string_view kColumns =
    "secret, CASE WHEN previous_until > now() THEN COALESCE(previous_secret, '') ELSE '' END, "
    "(extract(epoch FROM created_at) * 1000)::bigint, "
    "CASE WHEN previous_until > now() THEN (extract(epoch FROM previous_until) * 1000)::bigint "
    "ELSE 0 END";

WebhookSecret SecretOf(const pg::Rows& rows) {
  WebhookSecret s;
  s.secret = rows.Str(0, 0);
  s.previous_secret = rows.Str(0, 1);
  s.created_ms = rows.Int(0, 2);
  s.previous_until_ms = rows.Int(0, 3);
  return s;
}

void WriteTimes(JsonWriter& w, const WebhookSecret& s) {
  w.Field("created_at", FormatRfc3339(s.created_ms)).Key("previous_valid_until");
  if (s.previous_until_ms > 0) {
    w.String(FormatRfc3339(s.previous_until_ms));
  } else {
    w.Null();
  }
}

}  // namespace

Result<WebhookSecret> WebhookSecrets::Rotate(const std::string& org_id) {
  auto r = pool_.Exec(
      "INSERT INTO billing.webhook_secrets (org_id, secret) VALUES ($1, $2) "
      "ON CONFLICT (org_id) DO UPDATE SET previous_secret = billing.webhook_secrets.secret, "
      "previous_until = now() + make_interval(secs => $3::bigint / 1000.0), "
      "secret = EXCLUDED.secret, created_at = now() "
      "RETURNING " +
          std::string(kColumns),
      {org_id, webhook::NewSecret(), std::to_string(kPreviousSecretMs)});
  if (!r.ok()) return r.status();
  return SecretOf(*r);
}

Result<std::optional<WebhookSecret>> WebhookSecrets::Signing(const std::string& org_id) {
  auto r = pool_.Exec(
      "SELECT " + std::string(kColumns) + " FROM billing.webhook_secrets WHERE org_id = $1",
      {org_id});
  if (!r.ok()) return r.status();
  if (r->size() == 0) return std::optional<WebhookSecret>();
  return std::optional<WebhookSecret>(SecretOf(*r));
}

void WebhookSecretApi::AddRoutes(core::Router& router) {
  router.Add("POST", "/webhooks/secret", [this](const core::Request& request) {
    auto rotated = secrets_.Rotate(request.principal().org_id());
    if (!rotated.ok()) return core::Unavailable(rotated.status());
    JsonWriter w;
    w.BeginObject().Field("secret", rotated->secret);
    WriteTimes(w, *rotated);
    w.EndObject();
    return core::JsonResponse(201, w.Take());
  });
  router.Add("GET", "/webhooks/secret", [this](const core::Request& request) {
    auto current = secrets_.Signing(request.principal().org_id());
    if (!current.ok()) return core::Unavailable(current.status());
    if (!current->has_value()) {
      return core::ProblemResponse("not_found",
                                   "Your organization has no webhook secret; make one with POST "
                                   "/api/v1/webhooks/secret.");
    }
    JsonWriter w;
    w.BeginObject();
    WriteTimes(w, **current);
    w.EndObject();
    return core::JsonResponse(200, w.Take());
  });
}

}  // namespace toolgate::billing
