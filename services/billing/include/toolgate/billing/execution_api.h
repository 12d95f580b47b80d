// The execution routes of the management API that know of asynchronous calls, served on
// tg.billing.http:
//   GET  /executions/{id}         the execution: its status (queued, running, succeeded,
//                                 failed, timed_out, cancelled), its result once it finished
//                                 (the invoke envelope, or the problem), and, once recorded,
//                                 what GET /executions lists of it (logs for the owner)
//   POST /executions/{id}/cancel  202: a queued asynchronous execution is cancelled (nothing
//                                 charged, its hold released); a running one's sandbox is
//                                 killed (tg.exec.cancel to every executor) and it is charged
//                                 for the time it ran.
//                                 409 conflict once it has finished; 404 for an execution that
//                                 is not an asynchronous one of the caller's organization.
// Thread-safe.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "toolgate/billing/balance_store.h"
#include "toolgate/billing/execution_states.h"
#include "toolgate/billing/ledger_store.h"
#include "toolgate/bus/bus.h"
#include "toolgate/core/http.h"

namespace toolgate::billing {

class ExecutionApi {
 public:
  // Every reference must outlive the ExecutionApi.
  ExecutionApi(LedgerStore& ledger, ExecutionStates& states, BalanceStore& balances, bus::Bus& bus);

  // Adds the routes above to router; router must not outlive this object.
  void AddRoutes(core::Router& router);

  v1::HttpResponse Execution(const core::Request& request);
  v1::HttpResponse Cancel(const core::Request& request);

 private:
  LedgerStore& ledger_;
  ExecutionStates& states_;
  BalanceStore& balances_;
  bus::Bus& bus_;
};

// The JSON GET /executions/{id} answers: state (nullopt: a synchronous call without a key,
// known from its record only) merged with its record (nullopt: not recorded yet, while it is
// queued or running); at least one of them is set. with_logs as ExecutionJson.
// callback_attempts (with a state that has a callback URL): the "callback" member, with
// each attempt; null: no such member (the callback's own body).
std::string ExecutionStatusJson(const std::optional<ExecutionState>& state,
                                const std::optional<ExecutionItem>& record, bool with_logs,
                                const std::vector<CallbackAttempt>* callback_attempts = nullptr);

}  // namespace toolgate::billing
