#include "toolgate/billing/earnings_api.h"

#include <set>
#include <utility>

#include "toolgate/base/crypto.h"
#include "toolgate/base/json_writer.h"
#include "toolgate/base/log.h"
#include "toolgate/base/strings.h"
#include "toolgate/base/time.h"
#include "toolgate/billing/balance_loader.h"
#include "toolgate/billing/credit_grant.h"
#include "toolgate/billing/http_api.h"
#include "toolgate/billing/payout.h"
#include "toolgate/core/problem.h"

namespace toolgate::billing {
namespace {

std::string Trimmed(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return std::string(s);
}

v1::HttpResponse CsvResponse(const EarningsStatement& statement) {
  v1::HttpResponse response;
  response.set_status(200);
  response.set_body(EarningsCsv(statement));
  auto& headers = *response.mutable_headers();
  headers["Content-Type"] = "text/csv; charset=utf-8";
  // The name is made of dates only: nothing a caller chose reaches the header.
  headers["Content-Disposition"] =
      "attachment; filename=\"" + EarningsCsvFilename(statement.period) + "\"";
  return response;
}

std::string PayoutAnswer(const PayoutItem& payout) {
  return PayoutJson(payout, /*with_operator=*/true);
}

}  // namespace

bool WantsCsv(const v1::HttpRequest& request) {
  auto accept = request.headers().find("accept");
  if (accept == request.headers().end()) return false;
  std::string_view rest = accept->second;
  while (!rest.empty()) {
    size_t comma = rest.find(',');
    std::string_view range = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    std::string type = AsciiLower(Trimmed(range.substr(0, range.find(';'))));
    if (type == "text/csv") return true;
    if (type == "application/json") return false;
  }
  return false;
}

EarningsApi::EarningsApi(EarningsStore& earnings, LedgerStore& ledger, BalanceStore& balances,
                         OrganizationDirectory& organizations, FunctionNames& names,
                         std::function<int64_t()> now_ms)
    : earnings_(earnings),
      ledger_(ledger),
      balances_(balances),
      organizations_(organizations),
      names_(names),
      now_ms_(now_ms ? std::move(now_ms) : [] { return NowMs(); }) {}

void EarningsApi::AddRoutes(core::Router& router) {
  router.Add("GET", "/billing/earnings", [this](const core::Request& r) { return Earnings(r); });
  router.Add("GET", "/billing/payouts",
             [this](const core::Request& r) { return MemberPayouts(r); });
  router.Add("POST", "/admin/organizations/{id}/payouts",
             [this](const core::Request& r) { return RecordPayout(r); });
  router.Add("GET", "/admin/organizations/{id}/payouts",
             [this](const core::Request& r) { return OperatorPayouts(r); });
}

v1::HttpResponse EarningsApi::Earnings(const core::Request& request) {
  auto period = ParseEarningsPeriod(request.Query("from"), request.Query("to"), now_ms_());
  if (auto* problem = std::get_if<v1::Problem>(&period)) {
    return core::ProblemResponse(std::move(*problem));
  }
  EarningsStatement statement;
  statement.org_id = request.principal().org_id();
  statement.period = std::get<EarningsPeriod>(period);
  auto rows = earnings_.Rows(statement.org_id, statement.period, kMaxEarningsRows + 1);
  if (!rows.ok()) return core::Unavailable(rows.status());
  if (static_cast<int>(rows->size()) > kMaxEarningsRows) {
    v1::Problem problem =
        core::MakeProblem("invalid_period",
                          "The period has more than 10000 day and function rows: ask for it in "
                          "shorter periods.");
    core::AddFieldError(&problem, "from", "is too far before to for this organization's earnings");
    return core::ProblemResponse(std::move(problem));
  }
  statement.rows = std::move(*rows);
  auto payouts = earnings_.PayoutsIn(statement.org_id, statement.period, kMaxStatementPayouts);
  if (!payouts.ok()) return core::Unavailable(payouts.status());
  statement.payouts = std::move(*payouts);
  auto payable = earnings_.PayableOf(statement.org_id);
  if (!payable.ok()) return core::Unavailable(payable.status());
  statement.payable = *payable;

  // Each function once, however many days it earned on.
  std::set<std::string> functions;
  for (const EarningsRow& row : statement.rows) functions.insert(row.function_id);
  auto names =
      names_.Names(statement.org_id, std::vector<std::string>(functions.begin(), functions.end()));
  for (EarningsRow& row : statement.rows) {
    auto it = names.find(row.function_id);
    if (it != names.end()) row.function_name = it->second;
  }
  if (WantsCsv(request.http)) return CsvResponse(statement);
  return core::JsonResponse(200, EarningsJson(statement));
}

v1::HttpResponse EarningsApi::PayoutPage(const core::Request& request, const std::string& org_id,
                                         bool with_operator) {
  v1::HttpResponse problem;
  auto limit = core::ParseLimit(request, &problem);
  if (!limit) return problem;
  auto before = ParseCursor(request, &problem);
  if (!before) return problem;
  auto page = earnings_.Payouts(org_id, *limit, *before);
  if (!page.ok()) return core::Unavailable(page.status());
  JsonWriter w;
  w.BeginObject().Key("items").BeginArray();
  for (const PayoutItem& payout : page->items) w.Raw(PayoutJson(payout, with_operator));
  w.EndArray();
  NextCursor(w, page->next_before);
  w.EndObject();
  return core::JsonResponse(200, w.Take());
}

v1::HttpResponse EarningsApi::MemberPayouts(const core::Request& request) {
  return PayoutPage(request, request.principal().org_id(), /*with_operator=*/false);
}

v1::HttpResponse EarningsApi::OperatorPayouts(const core::Request& request) {
  if (auto refusal = OperatorRefusal(request.principal(), "list an organization's payouts")) {
    return core::ProblemResponse(std::move(*refusal));
  }
  if (!IsUuid(request.params[0])) {
    return core::ProblemResponse("not_found", "No organization has this id.");
  }
  return PayoutPage(request, AsciiLower(request.params[0]), /*with_operator=*/true);
}

v1::HttpResponse EarningsApi::RecordPayout(const core::Request& request) {
  const v1::Principal& principal = request.principal();
  if (auto refusal = OperatorRefusal(principal, "record a payout")) {
    return core::ProblemResponse(std::move(*refusal));
  }
  auto parsed = ParsePayout(request.http, request.params[0]);
  if (auto* problem = std::get_if<v1::Problem>(&parsed)) {
    return core::ProblemResponse(std::move(*problem));
  }
  const PayoutRequest& payout = std::get<PayoutRequest>(parsed);
  // The operator's email goes on the record as it is now; an organization auth does not know has
  // no earnings to pay.
  auto organization = organizations_.Lookup(payout.org_id, principal.user_id());
  if (!organization.ok()) return core::Unavailable(organization.status());
  if (!organization->found) {
    return core::ProblemResponse("not_found", "No organization has this id.");
  }
  // Loaded before the lock, so that the payout's step finds the cached balance.
  if (Status loaded = LoadBalances(balances_, ledger_, {payout.org_id}); !loaded.ok()) {
    return core::Unavailable(loaded);
  }
  PayoutBalanceSteps steps;
  steps.take = [this, &payout](int64_t ledger_id) {
    return balances_.TakePayout(payout.org_id, ledger_id, payout.amount_micro_usd);
  };
  steps.give_back = [this, &payout](int64_t ledger_id) {
    auto given = balances_.ReturnPayout(payout.org_id, ledger_id, payout.amount_micro_usd);
    if (!given.ok()) {
      log::Error("uncommitted payout not given back to the cached balance; reconcile repairs it")
          .Str("org_id", payout.org_id)
          .Str("ledger_id", std::to_string(ledger_id))
          .Str("error", given.status().ToString());
    }
  };
  auto outcome = earnings_.RecordPayout(NewPayout{.org_id = payout.org_id,
                                                  .amount_micro_usd = payout.amount_micro_usd,
                                                  .reference = payout.reference,
                                                  .idempotency_key = payout.idempotency_key,
                                                  .recorded_by_user_id = principal.user_id(),
                                                  .recorded_by_email = organization->user_email},
                                        steps);
  if (!outcome.ok()) return core::Unavailable(outcome.status());
  switch (outcome->kind) {
    case PayoutOutcome::Kind::kRecorded:
      log::Info("payout recorded")
          .Str("org_id", payout.org_id)
          .Int("amount_micro_usd", payout.amount_micro_usd)
          .Str("operator_user_id", principal.user_id())
          .Str("ledger_id", std::to_string(outcome->payout.payout_id));
      return core::JsonResponse(201, PayoutAnswer(outcome->payout));
    case PayoutOutcome::Kind::kRepeated:
      return core::JsonResponse(201, PayoutAnswer(outcome->payout));
    case PayoutOutcome::Kind::kKeyReused:
      return core::ProblemResponse(core::ValidationProblem(
          "Idempotency-Key",
          "was used for " + outcome->key_use + "; send a new key for a different payout"));
    case PayoutOutcome::Kind::kExceedsPayable:
      return core::ProblemResponse(*PayoutRefusal(payout.amount_micro_usd, outcome->payable));
    case PayoutOutcome::Kind::kExceedsAvailable:
      return core::ProblemResponse(
          PayoutExceedsAvailable(payout.amount_micro_usd, outcome->available_micro_usd));
  }
  return core::Unavailable(Status::Internal("unknown payout outcome"));
}

}  // namespace toolgate::billing
