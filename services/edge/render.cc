#include "render.h"

#include "toolgate/base/json_writer.h"
#include "toolgate/base/strings.h"
#include "toolgate/base/time.h"
#include "toolgate/core/invoke_envelope.h"
#include "toolgate/core/problem.h"
#include "toolgate/core/runtime_names.h"

namespace toolgate::edge {
namespace {
constexpr int64_t kExpiryWarningMs = 14LL * 24 * 3600 * 1000;
// A 429 or 503 whose maker named no wait (a service down, a bus failure) still tells the
// client when to come back: the contract promises Retry-After on both.
constexpr int32_t kDefaultRetryAfterS = 1;
}  // namespace

HttpAnswer RenderProblem(const v1::Problem& problem, std::string_view request_id) {
  HttpAnswer a;
  a.status = problem.status();
  a.content_type = "application/problem+json";
  a.body = core::RenderProblem(problem, request_id);
  int32_t retry_after_s = problem.retry_after_s();
  if (retry_after_s <= 0 && (a.status == 429 || a.status == 503))
    retry_after_s = kDefaultRetryAfterS;
  if (retry_after_s > 0) a.headers.emplace_back("Retry-After", std::to_string(retry_after_s));
  return a;
}

HttpAnswer RenderInvokeReply(const v1::InvokeReply& reply, std::string_view request_id,
                             int64_t now_ms) {
  HttpAnswer a;
  if (reply.has_problem()) {
    a = RenderProblem(reply.problem(), request_id);
  } else if (reply.has_accepted()) {
    // Queued (Prefer: respond-async), or a repeated Idempotency-Key's execution under way: its
    // status is at Location.
    const std::string& id = reply.accepted().execution_id();
    const std::string status_url = "/api/v1/executions/" + id;
    JsonWriter w;
    w.BeginObject()
        .Field("execution_id", id)
        .Field("status", reply.accepted().status())
        .Field("status_url", status_url)
        .EndObject();
    a.status = 202;
    a.body = w.Take();
    a.headers.emplace_back("Location", status_url);
  } else {
    a.status = reply.result().status_code();
    a.body = core::InvokeEnvelopeJson(reply.result());
  }
  // What the call was charged, for callers (agents) that read headers rather than bodies: the
  // total for a call that ran; 0 for a refusal, which is never charged; nothing when the outcome
  // is unknown (504: a stage did not answer, the call may yet be charged).
  if (reply.has_result()) {
    const v1::Summary& s = reply.result().summary();
    a.headers.emplace_back("X-Toolgate-Cost", std::to_string(s.cost().total_micro_usd()));
    // What is left to spend after it: the available balance, and the tightest spending limit's
    // remainder (with the limit's name) when one applied.
    if (s.has_available_after_micro_usd()) {
      a.headers.emplace_back("X-Toolgate-Balance", std::to_string(s.available_after_micro_usd()));
    }
    if (s.has_budget_remaining_micro_usd()) {
      a.headers.emplace_back(
          "X-Toolgate-Budget-Remaining",
          std::to_string(s.budget_remaining_micro_usd()) + "; limit=" + s.budget_limit());
    }
  } else if (reply.has_problem() && reply.problem().code() != "upstream_timeout") {
    a.headers.emplace_back("X-Toolgate-Cost", "0");
  }
  // The answer is a repeated Idempotency-Key's first execution's: nothing ran again.
  if (reply.replayed()) a.headers.emplace_back("Idempotent-Replayed", "true");
  int64_t expires = reply.key_expires_at_ms();
  if (expires > 0 && expires - now_ms <= kExpiryWarningMs) {
    a.headers.emplace_back("X-Api-Key-Expires-At", FormatRfc3339(expires));
  }
  return a;
}

HttpAnswer RenderEstimateReply(const v1::InvokeReply& reply, std::string_view request_id,
                               int64_t now_ms) {
  HttpAnswer a;
  if (reply.has_problem()) {
    a = RenderProblem(reply.problem(), request_id);
  } else if (!reply.has_estimate()) {
    a = RenderProblem(core::MakeProblem("internal_error", "Billing answered an estimate oddly."),
                      request_id);
  } else {
    const v1::Estimate& e = reply.estimate();
    JsonWriter w;
    w.BeginObject()
        .Field("max_hold_micro_usd", e.max_hold_micro_usd())
        .Field("function_micro_usd", e.function_micro_usd())
        .Field("max_compute_micro_usd", e.max_compute_micro_usd())
        .Field("available_micro_usd", e.available_micro_usd());
    w.Key("budget_remaining_micro_usd");
    if (e.has_budget_remaining_micro_usd()) {
      w.Int(e.budget_remaining_micro_usd());
    } else {
      w.Null();
    }
    w.Key("budget_limit");
    if (e.budget_limit().empty()) {
      w.Null();
    } else {
      w.String(e.budget_limit());
    }
    w.EndObject();
    a.body = w.Take();
  }
  int64_t expires = reply.key_expires_at_ms();
  if (expires > 0 && expires - now_ms <= kExpiryWarningMs) {
    a.headers.emplace_back("X-Api-Key-Expires-At", FormatRfc3339(expires));
  }
  return a;
}

HttpAnswer RenderHttpResponse(const v1::HttpResponse& response, std::string_view request_id) {
  HttpAnswer a;
  if (response.has_problem()) {
    a = RenderProblem(response.problem(), request_id);
  } else {
    a.status = response.status();
    a.body = response.body();
    if (a.status == 204) a.content_type.clear();
  }
  for (const auto& [name, value] : response.headers()) {
    // A service that answers with another type than JSON (billing's CSV statement) names it.
    if (AsciiLower(name) == "content-type") {
      if (!response.has_problem()) a.content_type = value;
      continue;
    }
    a.headers.emplace_back(name, value);
  }
  for (const auto& cookie : response.set_cookies()) a.headers.emplace_back("Set-Cookie", cookie);
  return a;
}

}  // namespace toolgate::edge
