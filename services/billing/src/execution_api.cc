#include "toolgate/billing/execution_api.h"

#include "toolgate/base/json_writer.h"
#include "toolgate/base/log.h"
#include "toolgate/base/time.h"
#include "toolgate/billing/http_api.h"
#include "toolgate/core/invoke_envelope.h"
#include "toolgate/core/key_decision.h"
#include "toolgate/core/problem.h"
#include "toolgate/core/subjects.h"

namespace toolgate::billing {
namespace {

std::string TimeOrNull(int64_t ms) {
  return ms > 0 ? JsonWriter().String(FormatRfc3339(ms)).Take() : "null";
}

// The status of a call known from its record alone (synchronous, no key): it finished.
std::string_view RecordedStatus(const ExecutionRecord& r) {
  if (r.status_code == 408) return "timed_out";
  return r.status_code >= 500 ? "failed" : "succeeded";
}

// Who may read or cancel an execution: a signed-in member or a key with the manage scope any of
// its organization's; a key with only the invoke scope (what made an asynchronous call) those
// it made itself. nullopt: allowed; otherwise the refusal.
std::optional<v1::HttpResponse> Refusal(const v1::Principal& p, const std::string& made_by_key) {
  const std::vector<std::string> scopes(p.scopes().begin(), p.scopes().end());
  auto has = [&scopes](std::string_view scope) { return core::HasScope(scopes, scope); };
  if (!p.grant_id().empty()) {
    return core::ProblemResponse("invalid_token",
                                 "OAuth access tokens are accepted only at the MCP endpoint they "
                                 "were issued for.");
  }
  if (p.key_id().empty() || has("manage")) return std::nullopt;
  if (has("invoke") && made_by_key == p.key_id()) return std::nullopt;
  return core::ProblemResponse("not_found", "No execution with this id in your organization.");
}

v1::HttpResponse NotAuthenticated() {
  return core::ProblemResponse("not_authenticated",
                               "Sign in, or send the API key that made the call (or one with "
                               "the manage scope).");
}

}  // namespace

std::string ExecutionStatusJson(const std::optional<ExecutionState>& state,
                                const std::optional<ExecutionItem>& record, bool with_logs,
                                const std::vector<CallbackAttempt>* callback_attempts) {
  // The state's members in one writer, then spliced after the record's: neither document is
  // parsed again (a result's body may be 6 MiB).
  JsonWriter w;
  w.BeginObject();
  if (!record) {
    w.Field("execution_id", state->execution_id)
        .Field("function_id", state->function_id)
        .Field("version", state->version)
        .Field("created_at", FormatRfc3339(state->created_ms));
  }
  if (!state) {
    w.Field("status", RecordedStatus(record->record)).Key("async").Bool(false);
  } else {
    w.Field("status", ExecutionStatusName(state->status))
        .Key("async")
        .Bool(state->async)
        .Key("cancel_requested")
        .Bool(state->cancel_requested)
        .Key("started_at")
        .Raw(TimeOrNull(state->started_ms))
        .Key("finished_at")
        .Raw(TimeOrNull(state->finished_ms));
    // The same envelope a synchronous call returns, or the problem it would have got.
    const bool ran = state->reply && state->reply->has_result();
    const bool refused = state->reply && state->reply->has_problem();
    w.Key("result").Raw(ran ? core::InvokeEnvelopeJson(state->reply->result()) : "null");
    w.Key("error").Raw(refused ? core::RenderProblem(state->reply->problem(), "") : "null");
    if (callback_attempts != nullptr && !state->callback_url.empty()) {
      w.Key("callback")
          .BeginObject()
          .Field("url", state->callback_url)
          .Field("outcome", state->callback_outcome.empty()
                                ? std::string_view("pending")
                                : std::string_view(state->callback_outcome));
      w.Key("attempts").BeginArray();
      for (const CallbackAttempt& a : *callback_attempts) {
        w.BeginObject()
            .Field("attempt", a.attempt)
            .Field("attempted_at", FormatRfc3339(a.attempted_ms))
            .Key("status_code");
        if (a.status_code > 0) {
          w.Int(a.status_code);
        } else {
          w.Null();
        }
        w.FieldOrNull("error", a.error).Field("outcome", a.outcome).EndObject();
      }
      w.EndArray().EndObject();
    }
  }
  w.EndObject();
  std::string members = w.Take();
  if (!record) return members;
  // Both are objects with members: "{record...}" + ",state...}".
  std::string json = ExecutionJson(*record, with_logs);
  json.back() = ',';
  json.append(members, 1, std::string::npos);
  return json;
}

ExecutionApi::ExecutionApi(LedgerStore& ledger, ExecutionStates& states, BalanceStore& balances,
                           bus::Bus& bus)
    : ledger_(ledger), states_(states), balances_(balances), bus_(bus) {}

void ExecutionApi::AddRoutes(core::Router& router) {
  // Authenticated here rather than by the router: a key with only the invoke scope reads and
  // cancels the executions it made (Refusal).
  router.Add(
      "GET", "/executions/{id}", [this](const core::Request& r) { return Execution(r); }, false);
  router.Add(
      "POST", "/executions/{id}/cancel", [this](const core::Request& r) { return Cancel(r); },
      false);
}

v1::HttpResponse ExecutionApi::Execution(const core::Request& request) {
  if (!request.http.authenticated()) return NotAuthenticated();
  const std::string& org = request.principal().org_id();
  const std::string& id = request.params[0];
  auto state = states_.Find(org, id);
  if (!state.ok()) return core::Unavailable(state.status());
  auto item = ledger_.Execution(org, id);
  if (!item.ok()) return core::Unavailable(item.status());
  if (!state->has_value() && !item->has_value()) {
    return core::ProblemResponse("not_found", "No execution with this id in your organization.");
  }
  const std::string& made_by = state->has_value() ? (*state)->key_id : (*item)->record.key_id;
  if (auto refused = Refusal(request.principal(), made_by)) return *refused;
  const bool owner = item->has_value() && (*item)->record.owner_org_id == org;
  std::vector<CallbackAttempt> attempts;
  if (state->has_value() && !(*state)->callback_url.empty()) {
    auto read = states_.CallbackAttempts(id);
    if (!read.ok()) return core::Unavailable(read.status());
    attempts = std::move(*read);
  }
  return core::JsonResponse(200, ExecutionStatusJson(*state, *item, owner, &attempts));
}

v1::HttpResponse ExecutionApi::Cancel(const core::Request& request) {
  if (!request.http.authenticated()) return NotAuthenticated();
  const std::string& org = request.principal().org_id();
  const std::string& id = request.params[0];
  auto state = states_.Find(org, id);
  if (!state.ok()) return core::Unavailable(state.status());
  if (state->has_value()) {
    if (auto refused = Refusal(request.principal(), (*state)->key_id)) return *refused;
  } else if (auto refused = Refusal(request.principal(), "")) {
    return *refused;
  }
  auto outcome = states_.Cancel(org, id);
  if (!outcome.ok()) return core::Unavailable(outcome.status());
  std::string status;
  switch (*outcome) {
    case CancelOutcome::kNotFound:
      return core::ProblemResponse("not_found",
                                   "No asynchronous execution with this id in your organization "
                                   "(only calls made with Prefer: respond-async can be "
                                   "cancelled).");
    case CancelOutcome::kFinished:
      return core::ProblemResponse("conflict",
                                   "This execution has finished; there is nothing to cancel.");
    case CancelOutcome::kCancelled: {
      // Nothing ran: the whole hold goes back (a dispatcher that finds it gone skips the job).
      auto released = balances_.Release(id, org, ReleaseMode::kDelete);
      if (!released.ok()) {
        log::Warn("cancelled execution's hold left to the reaper").Str("execution_id", id);
      }
      status = "cancelled";
      break;
    }
    case CancelOutcome::kStopping: {
      // It has left the queue: whichever executor runs it kills its sandbox (or, if its job
      // still waits there for a slot, never starts it); its result then settles it cancelled,
      // charged for the time it ran.
      v1::CancelExecution cancel;
      cancel.set_execution_id(id);
      Status sent = bus_.Publish(core::kCancelExecutionSubject, cancel.SerializeAsString());
      if (!sent.ok()) return core::Unavailable(sent);
      status = "running";
      break;
    }
  }
  JsonWriter w;
  w.BeginObject()
      .Field("execution_id", id)
      .Field("status", status)
      .Field("cancel_requested", true)
      .Field("status_url", "/api/v1/executions/" + id)
      .EndObject();
  return core::JsonResponse(202, w.Take());
}

}  // namespace toolgate::billing
