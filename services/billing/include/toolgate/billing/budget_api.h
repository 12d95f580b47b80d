// The spending-limit routes of the management API (docs/api.md "Spending limits"), served on
// tg.billing.http for the caller's organization:
//   GET  /billing/budget             {daily_micro_usd, monthly_micro_usd (each null: none),
//                                     spent_today_micro_usd, spent_this_month_micro_usd}
//   PUT  /billing/budget             {daily_micro_usd, monthly_micro_usd}: the same answer
//   GET  /api-keys/{id}/budget       the same, for one API key of the organization
//   PUT  /api-keys/{id}/budget
//   GET  /billing/usage?group_by=key|function|day[&from=&to=]
//                                    {group_by, from, to, items: [{key_id|function_id|day,
//                                     calls, spent_micro_usd}]}
// A change drops this replica's cached settings at once (BudgetSettingsCache::Invalidate).
// Thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "toolgate/billing/budget_settings.h"
#include "toolgate/billing/ledger_store.h"
#include "toolgate/core/http.h"

namespace toolgate::billing {

class BudgetApi {
 public:
  // Every reference must outlive the BudgetApi; now_ms: the wall clock (Unix ms).
  BudgetApi(BudgetSettingsStore& settings, BudgetSettingsCache& cache, LedgerStore& ledger,
            std::function<int64_t()> now_ms = {});

  // Adds the routes above to router; router must not outlive this object.
  void AddRoutes(core::Router& router);

  v1::HttpResponse Get(const core::Request& request, const std::string& key_id);
  v1::HttpResponse Put(const core::Request& request, const std::string& key_id);
  v1::HttpResponse Usage(const core::Request& request);

 private:
  BudgetSettingsStore& settings_;
  BudgetSettingsCache& cache_;
  LedgerStore& ledger_;
  std::function<int64_t()> now_ms_;
};

// The most a limit may be: $1,000,000,000 a period.
inline constexpr int64_t kMaxBudgetMicroUsd = 1'000'000'000'000'000LL;

// The body of a PUT: both fields, each an integer from 1 to kMaxBudgetMicroUsd or null (absent:
// null); otherwise the problem to answer.
std::variant<BudgetSettings, v1::Problem> ParseBudgetSettings(const std::string& body);

}  // namespace toolgate::billing
