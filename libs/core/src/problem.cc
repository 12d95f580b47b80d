#include "toolgate/core/problem.h"

#include <unordered_map>

#include "toolgate/base/json_writer.h"

namespace toolgate::core {
namespace {

struct Entry {
  int status;
  const char* title;
};

const std::unordered_map<std::string_view, Entry>& Catalogue() {
  static const std::unordered_map<std::string_view, Entry> kCatalogue = {
      {"payload_too_large", {413, "Request body too large"}},
      {"missing_api_key", {401, "API key missing"}},
      {"invalid_api_key", {401, "API key invalid"}},
      {"api_key_expired", {401, "API key expired"}},
      {"api_key_revoked", {401, "API key revoked"}},
      {"not_authenticated", {401, "Not authenticated"}},
      {"invalid_token", {401, "Access token not accepted"}},
      {"oauth_request_not_found", {404, "Authorization request not found"}},
      {"grant_not_found", {404, "Connected app not found"}},
      {"invalid_credentials", {401, "Email or password is wrong"}},
      {"function_not_found", {404, "Function not found"}},
      {"version_not_found", {404, "Version not found"}},
      {"not_found", {404, "Not found"}},
      {"function_not_added", {403, "Function not added to the workspace"}},
      {"forbidden", {403, "Not allowed"}},
      {"csrf_rejected", {403, "Cross-site request refused"}},
      {"insufficient_scope", {403, "API key scope does not allow this"}},
      {"user_session_required", {403, "A signed-in user is required"}},
      {"funding_by_grant_only", {403, "Credit comes from the operator"}},
      {"checkout_not_enabled", {403, "Credit is not bought through checkout here"}},
      {"invalid_signature", {400, "Webhook signature not accepted"}},
      {"payment_provider_unavailable", {502, "Payment provider unavailable"}},
      {"invalid_json", {400, "Body is not valid JSON"}},
      {"notification_url_refused", {400, "Notification URL not allowed"}},
      {"missing_event", {400, "Body has no event"}},
      {"invalid_event", {400, "Event not accepted"}},
      {"invalid_env_keys", {400, "X-Env-Keys is malformed"}},
      {"missing_env_key", {400, "A declared key is not mapped"}},
      {"undeclared_env_key", {400, "X-Env-Keys names an undeclared key"}},
      {"unknown_secret", {400, "Unknown secret"}},
      {"bad_request", {400, "Bad request"}},
      {"invalid_period", {400, "Period not accepted"}},
      {"rate_limited", {429, "Too many requests"}},
      {"too_many_connections", {429, "Too many connections from this address"}},
      {"too_many_request_bytes", {429, "Too many request bytes in flight from this address"}},
      {"request_timeout", {408, "Request not received in time"}},
      {"headers_too_large", {431, "Request headers too large"}},
      {"concurrency_limit", {429, "Too many concurrent executions"}},
      {"queue_full", {429, "Too many queued executions"}},
      {"invalid_idempotency_key", {400, "Idempotency-Key is malformed"}},
      {"invalid_callback_url", {400, "Callback URL not accepted"}},
      {"callback_secret_missing", {409, "No webhook secret to sign callbacks with"}},
      {"idempotency_key_reused", {422, "Idempotency-Key used for another request"}},
      {"execution_lost", {502, "Execution lost"}},
      {"execution_cancelled", {409, "Execution cancelled"}},
      {"timeout_budget_exhausted", {429, "Allowance of uncharged timeouts spent"}},
      {"insufficient_balance", {402, "Insufficient balance"}},
      {"grant_cap_exceeded", {402, "Connected app's spending cap used up"}},
      {"budget_exceeded", {402, "Spending limit reached"}},
      {"max_cost_exceeded", {402, "Call may cost more than X-Toolgate-Max-Cost"}},
      {"no_capacity", {503, "No capacity for this function"}},
      {"service_unavailable", {503, "Service unavailable"}},
      {"timeout", {408, "Handler timed out"}},
      {"executor_failure", {502, "Executor failure"}},
      {"upstream_timeout", {504, "A service did not answer in time"}},
      {"conflict", {409, "Conflict"}},
      {"payout_exceeds_payable", {409, "Payout exceeds what can be paid out"}},
      {"payout_exceeds_available", {409, "Payout exceeds the available balance"}},
      {"email_taken", {409, "Email already registered"}},
      {"version_exists", {409, "Version already published"}},
      {"validation_failed", {422, "Validation failed"}},
      {"method_not_allowed", {405, "Method not allowed"}},
      {"internal_error", {500, "Internal error"}},
  };
  return kCatalogue;
}

}  // namespace

v1::Problem MakeProblem(std::string_view code, std::string_view detail) {
  v1::Problem p;
  auto it = Catalogue().find(code);
  if (it == Catalogue().end()) {
    p.set_status(500);
    p.set_code("internal_error");
    p.set_title("Internal error");
  } else {
    p.set_status(it->second.status);
    p.set_code(std::string(code));
    p.set_title(it->second.title);
  }
  p.set_detail(std::string(detail));
  return p;
}

v1::Problem ValidationProblem(std::string_view field, std::string_view message) {
  v1::Problem p = MakeProblem("validation_failed", "Fix the fields listed in errors.");
  AddFieldError(&p, field, message);
  return p;
}

void AddFieldError(v1::Problem* problem, std::string_view field, std::string_view message) {
  auto* e = problem->add_errors();
  e->set_field(std::string(field));
  e->set_message(std::string(message));
}

std::string RenderProblem(const v1::Problem& p, std::string_view request_id) {
  JsonWriter w;
  w.BeginObject()
      .Field("type", "urn:toolgate:error:" + p.code())
      .Field("title", p.title())
      .Field("status", p.status())
      .Field("detail", p.detail())
      .Field("code", p.code())
      .Field("request_id", request_id);
  if (p.errors_size() > 0) {
    w.Key("errors").BeginArray();
    for (const auto& e : p.errors()) {
      w.BeginObject().Field("field", e.field()).Field("message", e.message()).EndObject();
    }
    w.EndArray();
  }
  w.EndObject();
  return w.Take();
}

}  // namespace toolgate::core
