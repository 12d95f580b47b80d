#include "toolgate/billing/budget_api.h"

#include <cctype>
#include <optional>
#include <utility>

#include "toolgate/base/crypto.h"
#include "toolgate/base/json.h"
#include "toolgate/base/json_writer.h"
#include "toolgate/base/time.h"
#include "toolgate/core/problem.h"

namespace toolgate::billing {
namespace {

constexpr int kMaxUsageGroups = 1000;

void CapField(JsonWriter& w, std::string_view name, const std::optional<int64_t>& cap) {
  w.Key(name);
  if (cap) {
    w.Int(*cap);
  } else {
    w.Null();
  }
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

std::variant<BudgetSettings, v1::Problem> ParseBudgetSettings(const std::string& body) {
  auto doc = ParseJson(body);
  simdjson::dom::object object;
  if (!doc.ok() || doc->root.get_object().get(object)) {
    return core::MakeProblem("invalid_json",
                             "Send a JSON object such as {\"daily_micro_usd\": 5000000, "
                             "\"monthly_micro_usd\": null}.");
  }
  BudgetSettings out;
  v1::Problem problem;
  const std::string range =
      "must be null or an integer from 1 to " + std::to_string(kMaxBudgetMicroUsd);
  for (auto [name, cap] : {std::pair{"daily_micro_usd", &out.daily_micro_usd},
                           std::pair{"monthly_micro_usd", &out.monthly_micro_usd}}) {
    simdjson::dom::element value;
    if (object[name].get(value) || value.is_null()) continue;
    int64_t v = 0;
    if (GetInt(object, name, &v) != Field::kOk || v < 1 || v > kMaxBudgetMicroUsd) {
      if (problem.code().empty()) {
        problem = core::ValidationProblem(name, range);
      } else {
        core::AddFieldError(&problem, name, range);
      }
      continue;
    }
    *cap = v;
  }
  if (!problem.code().empty()) return problem;
  return out;
}

BudgetApi::BudgetApi(BudgetSettingsStore& settings, BudgetSettingsCache& cache, LedgerStore& ledger,
                     std::function<int64_t()> now_ms)
    : settings_(settings),
      cache_(cache),
      ledger_(ledger),
      now_ms_(now_ms ? std::move(now_ms) : [] { return NowMs(); }) {}

void BudgetApi::AddRoutes(core::Router& router) {
  router.Add("GET", "/billing/budget", [this](const core::Request& r) { return Get(r, ""); });
  router.Add("PUT", "/billing/budget", [this](const core::Request& r) { return Put(r, ""); });
  router.Add("GET", "/api-keys/{id}/budget", [this](const core::Request& r) {
    return IsUuid(r.params[0]) ? Get(r, Lower(r.params[0]))
                               : core::ProblemResponse("not_found", "No such API key.");
  });
  router.Add("PUT", "/api-keys/{id}/budget", [this](const core::Request& r) {
    return IsUuid(r.params[0]) ? Put(r, Lower(r.params[0]))
                               : core::ProblemResponse("not_found", "No such API key.");
  });
  router.Add("GET", "/billing/usage", [this](const core::Request& r) { return Usage(r); });
}

v1::HttpResponse BudgetApi::Get(const core::Request& request, const std::string& key_id) {
  const std::string& org = request.principal().org_id();
  auto settings = settings_.Get(org, key_id);
  if (!settings.ok()) return core::Unavailable(settings.status());
  const BudgetSettings shown = settings->value_or(BudgetSettings{});
  const int64_t now = now_ms_();
  JsonWriter w;
  w.BeginObject();
  CapField(w, "daily_micro_usd", shown.daily_micro_usd);
  CapField(w, "monthly_micro_usd", shown.monthly_micro_usd);
  // What the ledger charged in the current UTC day and month (calls in flight are not in it).
  for (auto [name, unit] : {std::pair{"spent_today_micro_usd", PeriodUnit::kDay},
                            std::pair{"spent_this_month_micro_usd", PeriodUnit::kMonth}}) {
    Budget b;
    b.kind = key_id.empty() ? BudgetKind::kOrg : BudgetKind::kKey;
    b.id = key_id.empty() ? org : key_id;
    b.org_id = org;
    b.period = PeriodAt(unit, now);
    auto spent = ledger_.BudgetSpent(b);
    if (!spent.ok()) return core::Unavailable(spent.status());
    w.Field(name, *spent);
  }
  w.EndObject();
  return core::JsonResponse(200, w.Take());
}

v1::HttpResponse BudgetApi::Put(const core::Request& request, const std::string& key_id) {
  auto parsed = ParseBudgetSettings(request.http.body());
  if (auto* problem = std::get_if<v1::Problem>(&parsed)) {
    return core::ProblemResponse(std::move(*problem));
  }
  const std::string& org = request.principal().org_id();
  Status stored = settings_.Put(org, key_id, std::get<BudgetSettings>(parsed));
  // Dropped even on a failure: the write may have committed and only its answer been lost.
  cache_.Invalidate(org);
  if (!stored.ok()) return core::Unavailable(stored);
  return Get(request, key_id);
}

v1::HttpResponse BudgetApi::Usage(const core::Request& request) {
  const std::string group_by = request.Query("group_by", "day");
  UsageGroup group;
  std::string field;
  if (group_by == "key") {
    group = UsageGroup::kKey;
    field = "key_id";
  } else if (group_by == "function") {
    group = UsageGroup::kFunction;
    field = "function_id";
  } else if (group_by == "day") {
    group = UsageGroup::kDay;
    field = "day";
  } else {
    return core::ProblemResponse(
        core::ValidationProblem("group_by", "must be key, function or day"));
  }
  const int64_t now = now_ms_();
  // By default the current UTC calendar month up to now.
  int64_t from = PeriodAt(PeriodUnit::kMonth, now).start_ms;
  int64_t to = now + 1;
  v1::Problem problem;
  for (auto [name, bound] : {std::pair{"from", &from}, std::pair{"to", &to}}) {
    std::string text = request.Query(name);
    if (text.empty()) continue;
    auto parsed = ParseRfc3339(text);
    if (!parsed) {
      if (problem.code().empty()) {
        problem = core::ValidationProblem(name, "must be an RFC 3339 timestamp");
      } else {
        core::AddFieldError(&problem, name, "must be an RFC 3339 timestamp");
      }
      continue;
    }
    *bound = *parsed;
  }
  if (problem.code().empty() && to <= from) {
    problem = core::ValidationProblem("to", "must be after from");
  }
  if (!problem.code().empty()) return core::ProblemResponse(std::move(problem));
  auto rows = ledger_.Usage(request.principal().org_id(), group, from, to, kMaxUsageGroups);
  if (!rows.ok()) return core::Unavailable(rows.status());
  JsonWriter w;
  w.BeginObject()
      .Field("group_by", group_by)
      .Field("from", FormatRfc3339(from))
      .Field("to", FormatRfc3339(to));
  w.Key("items").BeginArray();
  for (const UsageRow& row : *rows) {
    w.BeginObject();
    // A call without a key (a session, a connected app) is null.
    if (group == UsageGroup::kKey && row.group.empty()) {
      w.Key(field).Null();
    } else {
      w.Field(field, row.group);
    }
    w.Field("calls", row.calls).Field("spent_micro_usd", row.spent_micro_usd).EndObject();
  }
  w.EndArray().EndObject();
  return core::JsonResponse(200, w.Take());
}

}  // namespace toolgate::billing
