// The earnings and payout routes of the management API (docs/api.md "Earnings and payouts"),
// served on tg.billing.http:
//   GET  /billing/earnings?from=&to=   the caller organization's earnings statement: JSON, or
//                                      with Accept: text/csv a CSV statement
//   GET  /billing/payouts              its payouts, newest first
//   POST /admin/organizations/{id}/payouts
//                                      an operator records money sent to the organization:
//                                      201 the payout; 409 payout_exceeds_payable or
//                                      payout_exceeds_available, recording nothing
//   GET  /admin/organizations/{id}/payouts
//                                      the organization's payouts, for operators
// Thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "toolgate/billing/balance_store.h"
#include "toolgate/billing/earnings_store.h"
#include "toolgate/billing/function_names.h"
#include "toolgate/billing/ledger_store.h"
#include "toolgate/billing/organization_directory.h"
#include "toolgate/core/http.h"

namespace toolgate::billing {

// A statement lists at most this many day and function rows: a longer one is asked for in
// shorter periods (400 invalid_period).
inline constexpr int kMaxEarningsRows = 10'000;
// A statement lists at most this many of the period's payouts.
inline constexpr int kMaxStatementPayouts = 1'000;

class EarningsApi {
 public:
  // Every reference must outlive the EarningsApi. now_ms: the clock (tests pass their own).
  EarningsApi(EarningsStore& earnings, LedgerStore& ledger, BalanceStore& balances,
              OrganizationDirectory& organizations, FunctionNames& names,
              std::function<int64_t()> now_ms = {});

  // Adds the routes above to router; router must not outlive this object.
  void AddRoutes(core::Router& router);

  v1::HttpResponse Earnings(const core::Request& request);
  v1::HttpResponse MemberPayouts(const core::Request& request);
  v1::HttpResponse RecordPayout(const core::Request& request);
  v1::HttpResponse OperatorPayouts(const core::Request& request);

 private:
  // One page of org_id's payouts as {items, next_cursor}.
  v1::HttpResponse PayoutPage(const core::Request& request, const std::string& org_id,
                              bool with_operator);

  EarningsStore& earnings_;
  LedgerStore& ledger_;
  BalanceStore& balances_;
  OrganizationDirectory& organizations_;
  FunctionNames& names_;
  const std::function<int64_t()> now_ms_;
};

// Whether an Accept header asks for the CSV statement (text/csv, before any JSON type).
bool WantsCsv(const v1::HttpRequest& request);

}  // namespace toolgate::billing
