#include "toolgate/billing/http_api.h"

#include <cctype>
#include <charconv>

#include "toolgate/base/crypto.h"
#include "toolgate/base/json_writer.h"
#include "toolgate/base/log.h"
#include "toolgate/base/time.h"
#include "toolgate/billing/balance_loader.h"
#include "toolgate/billing/credit_application.h"
#include "toolgate/billing/credit_grant.h"
#include "toolgate/billing/top_up.h"
#include "toolgate/core/problem.h"

namespace toolgate::billing {

std::optional<std::optional<int64_t>> ParseCursor(const core::Request& request,
                                                  v1::HttpResponse* problem) {
  std::string cursor = request.Query("cursor");
  if (cursor.empty()) return std::optional<int64_t>();
  auto position = core::DecodeCursor(cursor);
  int64_t value = 0;
  if (position) {
    auto [ptr, ec] = std::from_chars(position->data(), position->data() + position->size(), value);
    if (ec == std::errc() && ptr == position->data() + position->size() && value > 0) {
      return std::optional<int64_t>(value);
    }
  }
  *problem = core::ProblemResponse(
      core::ValidationProblem("cursor", "is not a next_cursor this list returned"));
  return std::nullopt;
}

void NextCursor(JsonWriter& w, const std::optional<int64_t>& next_before) {
  w.Key("next_cursor");
  if (next_before) {
    w.String(core::EncodeCursor(std::to_string(*next_before)));
  } else {
    w.Null();
  }
}

namespace {

std::string TopUpJson(const TopUpOutcome& outcome) {
  JsonWriter w;
  w.BeginObject()
      .Field("top_up_id", std::to_string(outcome.ledger_id))
      .Field("amount_micro_usd", outcome.amount_micro_usd)
      .Field("balance_micro_usd", outcome.balance_micro_usd)
      .EndObject();
  return w.Take();
}

v1::HttpResponse KeyReused(const CreditOutcome& first) {
  return core::ProblemResponse(core::ValidationProblem(
      "Idempotency-Key", "was used for a " +
                             std::string(first.type == EntryType::kGrant ? "grant" : "top-up") +
                             " of " + std::to_string(first.amount_micro_usd) +
                             " micro-USD; send a new key for a different one"));
}

void GrantedBy(JsonWriter& w, const std::string& user_id, const std::string& email) {
  w.Key("granted_by").BeginObject().Field("user_id", user_id).Field("email", email).EndObject();
}

std::string GrantJson(const std::string& org_id, const CreditOutcome& outcome) {
  JsonWriter w;
  w.BeginObject()
      .Field("grant_id", std::to_string(outcome.ledger_id))
      .Field("organization_id", org_id)
      .Field("amount_micro_usd", outcome.amount_micro_usd)
      .Field("balance_micro_usd", outcome.balance_micro_usd)
      .Field("reason", outcome.reason);
  GrantedBy(w, outcome.granted_by_user_id, outcome.granted_by_email);
  w.EndObject();
  return w.Take();
}

}  // namespace

std::string LedgerItemJson(const LedgerItem& item) {
  const LedgerEntry& e = item.entry;
  JsonWriter w;
  w.BeginObject().Field("id", std::to_string(item.id)).Field("type", EntryTypeName(e.type));
  if (!e.execution_id.empty()) w.Field("execution_id", e.execution_id);
  if (!e.function_id.empty()) w.Field("function_id", e.function_id);
  if (!e.version.empty()) w.Field("version", e.version);
  w.Field("compute_micro_usd", e.compute_micro_usd)
      .Field("function_micro_usd", e.function_micro_usd)
      .Field("amount_micro_usd", e.amount_micro_usd)
      .Field("created_at", FormatRfc3339(item.created_ms));
  // Where the money came from: the operator's reason and name, kept with the row.
  if (e.type == EntryType::kGrant) {
    w.Field("reason", e.reason);
    GrantedBy(w, e.granted_by_user_id, e.granted_by_email);
  }
  // A payment, refund or dispute: the payment provider's ids, which it answers for.
  if (!e.payment.provider.empty()) {
    const PaymentSource& p = e.payment;
    w.Key("payment")
        .BeginObject()
        .Field("provider", p.provider)
        .Field("event_id", p.event_id)
        .Field("checkout_session_id", p.checkout_session_id)
        .FieldOrNull("payment_intent_id", p.payment_intent_id);
    if (!p.dispute_id.empty()) w.Field("dispute_id", p.dispute_id);
    w.EndObject();
  }
  w.EndObject();
  return w.Take();
}

std::string ExecutionJson(const ExecutionItem& item, bool with_logs) {
  const ExecutionRecord& r = item.record;
  JsonWriter w;
  w.BeginObject()
      .Field("execution_id", r.execution_id)
      .Field("function_id", r.function_id)
      .Field("version", r.version)
      .Field("status_code", r.status_code)
      .Field("runtime_ms", r.runtime_ms)
      .Field("memory_used_mb", r.memory_used_mb)
      .Field("compute_type", r.compute_type);
  w.Key("cost")
      .BeginObject()
      .Field("compute_micro_usd", r.charge.compute_micro_usd)
      .Field("function_micro_usd", r.charge.function_micro_usd)
      .Field("total_micro_usd", r.charge.total_micro_usd)
      .EndObject();
  w.FieldOrNull("trace_id", r.trace_id).Field("created_at", FormatRfc3339(item.created_ms));
  w.Field("egress_bytes", r.egress_bytes);
  // The connected app (OAuth client) the call was made through; null for an API key or a
  // session.
  w.Key("client_name");
  if (r.grant_id.empty()) {
    w.Null();
  } else {
    w.String(r.client_name);
  }
  if (with_logs) {
    w.Field("logs", r.logs);
    w.Key("egress").Raw(r.egress_json);
  }
  // Written by HopsJson: valid JSON.
  if (!r.hops_json.empty()) w.Key("hops").Raw(r.hops_json);
  w.EndObject();
  return w.Take();
}

HttpApi::HttpApi(LedgerStore& ledger, BalanceStore& balances, RetryQueue& retries,
                 OrganizationDirectory& organizations, FundingMode funding)
    : ledger_(ledger),
      balances_(balances),
      retries_(retries),
      organizations_(organizations),
      funding_(funding) {}

void HttpApi::AddRoutes(core::Router& router) {
  router.Add("GET", "/billing/balance", [this](const core::Request& r) { return Balance(r); });
  router.Add("POST", "/billing/top-ups", [this](const core::Request& r) { return TopUp(r); });
  router.Add("GET", "/billing/ledger", [this](const core::Request& r) { return Ledger(r); });
  router.Add("POST", "/admin/organizations/{id}/credits",
             [this](const core::Request& r) { return Grant(r); });
  router.Add("GET", "/executions", [this](const core::Request& r) { return Executions(r); });
}

v1::HttpResponse HttpApi::Balance(const core::Request& request) {
  const std::string& org = request.principal().org_id();
  auto view = balances_.Read(org);
  if (view.ok() && !view->balance_micro_usd) {
    Status loaded = LoadBalances(balances_, ledger_, {org});
    if (!loaded.ok()) return core::Unavailable(loaded);
    view = balances_.Read(org);
  }
  if (!view.ok()) return core::Unavailable(view.status());
  if (!view->balance_micro_usd) return core::Unavailable(Status::Internal("balance not loaded"));
  int64_t balance = *view->balance_micro_usd;
  JsonWriter w;
  w.BeginObject()
      .Field("balance_micro_usd", balance)
      .Field("reserved_micro_usd", view->reserved_micro_usd)
      .Field("available_micro_usd", balance - view->reserved_micro_usd)
      .Field("funding", FundingModeName(funding_))
      .EndObject();
  return core::JsonResponse(200, w.Take());
}

v1::HttpResponse HttpApi::TopUp(const core::Request& request) {
  // Before the body is read: whatever it says, a member cannot mint credit outside demo.
  if (auto refusal = TopUpRefusal(funding_)) return core::ProblemResponse(std::move(*refusal));
  auto parsed = ParseTopUp(request.http);
  if (auto* problem = std::get_if<v1::Problem>(&parsed)) {
    return core::ProblemResponse(std::move(*problem));
  }
  const TopUpRequest& top_up = std::get<TopUpRequest>(parsed);
  const std::string& org = request.principal().org_id();

  if (!top_up.idempotency_key.empty()) {
    auto earlier = ledger_.FindCredit(org, top_up.idempotency_key);
    if (!earlier.ok()) return core::Unavailable(earlier.status());
    if (earlier->has_value()) {
      if ((*earlier)->type != EntryType::kTopUp ||
          (*earlier)->amount_micro_usd != top_up.amount_micro_usd) {
        return KeyReused(**earlier);
      }
      return core::JsonResponse(201, TopUpJson(**earlier));
    }
  }
  NewCredit credit;
  credit.org_id = org;
  credit.type = EntryType::kTopUp;
  credit.amount_micro_usd = top_up.amount_micro_usd;
  credit.idempotency_key = top_up.idempotency_key;
  auto outcome = RecordCredit(credit);
  if (!outcome.ok()) return core::Unavailable(outcome.status());
  if (!outcome->first && (outcome->type != EntryType::kTopUp ||
                          outcome->amount_micro_usd != top_up.amount_micro_usd)) {
    return KeyReused(*outcome);  // a concurrent request with the same key made another credit
  }
  return core::JsonResponse(201, TopUpJson(*outcome));
}

v1::HttpResponse HttpApi::Grant(const core::Request& request) {
  const v1::Principal& principal = request.principal();
  if (auto refusal = GrantRefusal(principal)) return core::ProblemResponse(std::move(*refusal));
  auto parsed = ParseCreditGrant(request.http, request.params[0]);
  if (auto* problem = std::get_if<v1::Problem>(&parsed)) {
    return core::ProblemResponse(std::move(*problem));
  }
  const CreditGrantRequest& grant = std::get<CreditGrantRequest>(parsed);
  auto same = [&grant](const CreditOutcome& first) {
    return first.type == EntryType::kGrant && first.amount_micro_usd == grant.amount_micro_usd;
  };
  if (!grant.idempotency_key.empty()) {
    auto earlier = ledger_.FindCredit(grant.org_id, grant.idempotency_key);
    if (!earlier.ok()) return core::Unavailable(earlier.status());
    if (earlier->has_value()) {
      if (!same(**earlier)) return KeyReused(**earlier);
      return core::JsonResponse(201, GrantJson(grant.org_id, **earlier));
    }
  }
  // Organizations live in auth: credit for an id nobody has would be money no one can spend or
  // account for.
  auto organization = organizations_.Lookup(grant.org_id, principal.user_id());
  if (!organization.ok()) return core::Unavailable(organization.status());
  if (!organization->found) {
    return core::ProblemResponse("not_found", "No organization has this id.");
  }
  auto outcome = RecordCredit(NewCredit{.org_id = grant.org_id,
                                        .type = EntryType::kGrant,
                                        .amount_micro_usd = grant.amount_micro_usd,
                                        .idempotency_key = grant.idempotency_key,
                                        .reason = grant.reason,
                                        .granted_by_user_id = principal.user_id(),
                                        .granted_by_email = organization->user_email});
  if (!outcome.ok()) return core::Unavailable(outcome.status());
  if (!outcome->first && !same(*outcome)) return KeyReused(*outcome);
  if (outcome->first) {
    log::Info("credit granted")
        .Str("org_id", grant.org_id)
        .Int("amount_micro_usd", grant.amount_micro_usd)
        .Str("operator_user_id", principal.user_id())
        .Str("ledger_id", std::to_string(outcome->ledger_id));
  }
  return core::JsonResponse(201, GrantJson(grant.org_id, *outcome));
}

Result<CreditOutcome> HttpApi::RecordCredit(const NewCredit& credit) {
  // Loaded before the credit commits, so that the credit is applied exactly once.
  Status loaded = LoadBalances(balances_, ledger_, {credit.org_id});
  if (!loaded.ok()) return loaded;
  auto outcome = ledger_.Credit(credit);
  if (!outcome.ok() || !outcome->first) return outcome;  // a repeat credits nothing
  // The credit is durable: a Redis failure now only delays it in the cached balance.
  ApplyToCachedBalance(balances_, retries_,
                       "credit " + std::string(EntryTypeName(credit.type)) + " " +
                           std::to_string(outcome->ledger_id),
                       credit.org_id, outcome->ledger_id, outcome->amount_micro_usd);
  return outcome;
}

v1::HttpResponse HttpApi::Ledger(const core::Request& request) {
  v1::HttpResponse problem;
  auto limit = core::ParseLimit(request, &problem);
  if (!limit) return problem;
  auto before = ParseCursor(request, &problem);
  if (!before) return problem;
  auto page = ledger_.Entries(request.principal().org_id(), *limit, *before);
  if (!page.ok()) return core::Unavailable(page.status());
  JsonWriter w;
  w.BeginObject().Key("items").BeginArray();
  for (const LedgerItem& item : page->items) w.Raw(LedgerItemJson(item));
  w.EndArray();
  NextCursor(w, page->next_before);
  w.EndObject();
  return core::JsonResponse(200, w.Take());
}

v1::HttpResponse HttpApi::Executions(const core::Request& request) {
  v1::HttpResponse problem;
  auto limit = core::ParseLimit(request, &problem);
  if (!limit) return problem;
  auto before = ParseCursor(request, &problem);
  if (!before) return problem;
  std::string function_id = request.Query("function_id");
  if (!function_id.empty() && !IsUuid(function_id)) {
    return core::ProblemResponse(core::ValidationProblem("function_id", "must be a UUID"));
  }
  for (char& c : function_id) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  auto page = ledger_.Executions(request.principal().org_id(), function_id, *limit, *before);
  if (!page.ok()) return core::Unavailable(page.status());
  JsonWriter w;
  w.BeginObject().Key("items").BeginArray();
  for (const ExecutionItem& item : page->items) w.Raw(ExecutionJson(item, false));
  w.EndArray();
  NextCursor(w, page->next_before);
  w.EndObject();
  return core::JsonResponse(200, w.Take());
}

v1::HttpResponse HttpApi::Execution(const core::Request& request) {
  const std::string& org = request.principal().org_id();
  auto item = ledger_.Execution(org, request.params[0]);
  if (!item.ok()) return core::Unavailable(item.status());
  if (!item->has_value()) {
    return core::ProblemResponse("not_found", "No execution with this id in your organization.");
  }
  bool owner = (*item)->record.owner_org_id == org;
  return core::JsonResponse(200, ExecutionJson(**item, owner));
}

}  // namespace toolgate::billing
