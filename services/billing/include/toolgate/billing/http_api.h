// The billing routes of the management API (contract section 6), served on tg.billing.http:
//   GET  /billing/balance      {balance_micro_usd, reserved_micro_usd, available_micro_usd,
//                              funding}
//   POST /billing/top-ups      201 {top_up_id, amount_micro_usd, balance_micro_usd}; only with
//                              demo funding, else 403 funding_by_grant_only
//   POST /admin/organizations/{id}/credits
//                              an operator's grant: 201 {grant_id, organization_id,
//                              amount_micro_usd, balance_micro_usd, reason, granted_by}
//   GET  /billing/ledger       {items, next_cursor}, newest first
//   GET  /executions           the caller organization's executions, newest first, each with
//                              the client_name of the connected app that made it (or null)
//   GET  /executions/{id}      one of them; logs only for the function's owner
// Thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "toolgate/base/json_writer.h"
#include "toolgate/billing/balance_store.h"
#include "toolgate/billing/funding.h"
#include "toolgate/billing/ledger_store.h"
#include "toolgate/billing/organization_directory.h"
#include "toolgate/billing/retry_queue.h"
#include "toolgate/core/http.h"

namespace toolgate::billing {

class HttpApi {
 public:
  // Every reference must outlive the HttpApi. funding decides whether members may top up.
  HttpApi(LedgerStore& ledger, BalanceStore& balances, RetryQueue& retries,
          OrganizationDirectory& organizations, FundingMode funding);

  // Adds the routes above to router; router must not outlive this object.
  void AddRoutes(core::Router& router);

  v1::HttpResponse Balance(const core::Request& request);
  v1::HttpResponse TopUp(const core::Request& request);
  v1::HttpResponse Grant(const core::Request& request);
  v1::HttpResponse Ledger(const core::Request& request);
  v1::HttpResponse Executions(const core::Request& request);
  v1::HttpResponse Execution(const core::Request& request);

 private:
  // Records credit in the ledger and then the cached balance (retried, else left to
  // reconcile); a repeat of an idempotency key records nothing and answers the first outcome.
  Result<CreditOutcome> RecordCredit(const NewCredit& credit);

  LedgerStore& ledger_;
  BalanceStore& balances_;
  RetryQueue& retries_;
  OrganizationDirectory& organizations_;
  const FundingMode funding_;
};

// ?cursor= of a list: the position (a positive integer) where the page starts, nullopt inside
// when absent; nullopt with *problem set (422) for a cursor no list returned.
std::optional<std::optional<int64_t>> ParseCursor(const core::Request& request,
                                                  v1::HttpResponse* problem);
// "next_cursor": the cursor of the page starting at next_before, or null on the last page.
void NextCursor(JsonWriter& w, const std::optional<int64_t>& next_before);

// JSON of one ledger entry and of one execution, as the API shows them. with_logs adds "logs".
std::string LedgerItemJson(const LedgerItem& item);
std::string ExecutionJson(const ExecutionItem& item, bool with_logs);

}  // namespace toolgate::billing
