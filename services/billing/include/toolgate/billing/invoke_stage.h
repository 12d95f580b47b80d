// InvokeStage: the billing stage of the invoke chain (tg.invoke.billing, contract section 3,
// rows 7 and 8). It places the hold in one atomic step (per-key rate, per-organization
// concurrency, a call's OAuth grant's spending cap, available balance) and forwards the job to
// the executor pool of its compute type and runtime, with tg.billing.unserved.<execution_id> as
// the reply subject (see charge.h); or it answers the edge with the first check that failed.
// A call made with an OAuth grant is counted against the grant's budget (balance_store.h)
// whether or not the grant has a cap, so that a cap set later counts what the grant spent
// before it.
//
// Holds are group-committed like settlements: Handle only checks and queues the job, and one
// thread places every queued hold in one pipelined Redis round trip (BalanceStore::HoldMany), so
// that under `appendfsync always` concurrent calls share one fsync instead of paying one each.
// The batch's jobs then leave in one message per executor pool, its refusals in one per edge
// (core::ChainStage's outbox).
// A hold that finds its organization's balance, or its grant's budget, not yet loaded from the
// ledger is finished on the worker pool, which loads it (PostgreSQL) and tries again, so the
// batch never waits on that.
// Spending limits: a call is also counted against its key's and its organization's daily and
// monthly budgets (budget_settings.h), whose settings come from a cache; a call whose settings
// are not cached is held from the worker pool, which reads them first. A call whose hold would
// pass its X-Toolgate-Max-Cost (InvokeJob.max_cost_micro_usd) is refused before anything is
// held.
//
// Thread-safe.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "toolgate/base/batch_queue.h"
#include "toolgate/base/process.h"
#include "toolgate/billing/async_queue.h"
#include "toolgate/billing/balance_store.h"
#include "toolgate/billing/budget_settings.h"
#include "toolgate/billing/config.h"
#include "toolgate/billing/execution_states.h"
#include "toolgate/billing/ledger_store.h"
#include "toolgate/billing/webhook_secrets.h"
#include "toolgate/bus/bus.h"
#include "toolgate/core/chain_stage.h"
#include "toolgate/trace/trace.h"
#include "toolgate/v1/toolgate.pb.h"

namespace toolgate::billing {

class InvokeStage {
 public:
  // Every reference must outlive the stage. Starts the hold thread.
  // now_ms: the wall clock (Unix ms) that decides which day and month a call counts in.
  InvokeStage(bus::Bus& bus, BalanceStore& balances, LedgerStore& ledger, ThreadPool& pool,
              BudgetSettingsCache& budget_settings, const Config& config,
              std::function<int64_t()> now_ms = {});

  // One InvokeJob with principal and function set. Cheap: may run on the delivery thread.
  void Handle(bus::Message&& message);

  // Places the holds already queued, then stops the hold thread; later jobs are answered 503.
  void Stop();

  // Asynchronous calls and Idempotency-Keys: where their states are kept and where accepted
  // asynchronous jobs wait. Without them (unset), both are refused 503. Set before the first
  // job; both must outlive the stage.
  void SetAsync(ExecutionStates* states, AsyncQueue* queue, WebhookSecrets* secrets) {
    states_ = states;
    async_ = queue;
    secrets_ = secrets;
  }

 private:
  struct Call {
    core::StageJob in;  // the job, the edge's reply, the "billing.hold" span (to the forward)
    HoldRecord hold;
    std::string exec_subject;
    bool state_claimed = false;  // its execution state was inserted (ExecutionStates::Claim)
  };
  using CallPtr = std::unique_ptr<Call>;

  // Whether the call keeps an execution state: an asynchronous call, or one with a key.
  bool NeedsState(const Call& call) const;
  // Claims the call's state (PostgreSQL; on the pool): true to go on and hold; otherwise the
  // edge has been answered (a repeated key's first execution, a reused key, a failure) or the
  // job was a duplicate.
  bool Claim(Call& call);
  // Why an asynchronous call's X-Callback-Url is refused (a target the operator's egress rules
  // refuse, or no webhook secret to sign with), or nullopt. Reads PostgreSQL.
  std::optional<v1::Problem> CallbackRefusal(const std::string& url, const std::string& org_id);
  // Deletes the state of a call refused before it ran, so that its key may be used again.
  void ForgetState(const Call& call);
  // Reads the call's spending limits (from the pool on a cache miss), then QueueWithLimits.
  void WithLimits(CallPtr call);
  // An asynchronous call held: stored in the queue (on the pool), answered 202-to-be.
  void QueueAsync(Call& call);
  void HoldBatch(std::vector<CallPtr> batch);
  // Adds the call's spending limits to its hold, then queues it for the hold thread (from the
  // worker pool when its settings had to be read first).
  void QueueWithLimits(CallPtr call, const CallBudgetSettings& settings);
  // Holds, loading the balance and the budgets from the ledger first when Redis does not have
  // them yet.
  Result<HoldOutcome> PlaceHold(const HoldRecord& hold);
  // Queues the call for its executors (the hold released should it not leave), or the edge's
  // answer, after the hold's outcome. A batch's outbox leaves as one message per executor pool
  // and one per edge (core::ChainStage).
  void Proceed(Call& call, const Result<HoldOutcome>& outcome, core::ChainStage::Outbox& out);

  bus::Bus& bus_;
  BalanceStore& balances_;
  LedgerStore& ledger_;
  ThreadPool& pool_;
  BudgetSettingsCache& budget_settings_;
  const Config& config_;
  std::function<int64_t()> now_ms_;
  ExecutionStates* states_ = nullptr;
  AsyncQueue* async_ = nullptr;
  WebhookSecrets* secrets_ = nullptr;
  core::ChainStage stage_;
  BatchQueue<CallPtr> holds_;  // last: its thread uses the members above
};

// The problem the edge gets for a hold that was refused; nullopt for kHeld and kAlreadyHeld.
std::optional<v1::Problem> ProblemFor(const HoldOutcome& outcome, const HoldRecord& hold,
                                      const Limits& limits);

// The budgets a call is counted against: its OAuth grant's, with the grant's cap (none without
// a grant).
std::vector<Budget> BudgetsFor(const v1::Principal& principal);

// The answer to an estimate_only job whose check passed (outcome kHeld): the hold it would
// place, the fee within it, and the balance and tightest budget remainder available now.
v1::Estimate EstimateOf(const HoldRecord& hold, const HoldOutcome& outcome,
                        int64_t function_micro_usd);

// The answer to a repeated Idempotency-Key (replayed set): its first execution's final answer,
// or, while that is under way (or was cancelled before it started), its status.
v1::InvokeReply RepeatReply(const ExecutionState& first);

// 402 max_cost_exceeded when a hold of amount_micro_usd passes the call's X-Toolgate-Max-Cost
// (max_cost_micro_usd; 0: none), else nullopt.
std::optional<v1::Problem> MaxCostProblem(int64_t amount_micro_usd, int64_t max_cost_micro_usd);
// 402 budget_exceeded for a key's or an organization's period budget that cannot take a hold:
// which limit, its cap, when it resets (RFC 3339, and Retry-After from now_ms).
v1::Problem PeriodBudgetProblem(const Budget& budget, int64_t now_ms);

// An amount in US dollars as people read it: at least two decimals, more only when the amount
// has them ("$5.00", "$0.25", "$1.000001").
std::string FormatUsd(int64_t micro_usd);

}  // namespace toolgate::billing
