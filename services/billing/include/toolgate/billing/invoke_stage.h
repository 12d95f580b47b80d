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
//
// Thread-safe.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "toolgate/base/batch_queue.h"
#include "toolgate/base/process.h"
#include "toolgate/billing/balance_store.h"
#include "toolgate/billing/config.h"
#include "toolgate/billing/ledger_store.h"
#include "toolgate/bus/bus.h"
#include "toolgate/core/chain_stage.h"
#include "toolgate/trace/trace.h"
#include "toolgate/v1/toolgate.pb.h"

namespace toolgate::billing {

class InvokeStage {
 public:
  // Every reference must outlive the stage. Starts the hold thread.
  InvokeStage(bus::Bus& bus, BalanceStore& balances, LedgerStore& ledger, ThreadPool& pool,
              const Config& config);

  // One InvokeJob with principal and function set. Cheap: may run on the delivery thread.
  void Handle(bus::Message&& message);

  // Places the holds already queued, then stops the hold thread; later jobs are answered 503.
  void Stop();

 private:
  struct Call {
    core::StageJob in;  // the job, the edge's reply, the "billing.hold" span (to the forward)
    HoldRecord hold;
    std::string exec_subject;
  };
  using CallPtr = std::unique_ptr<Call>;

  void HoldBatch(std::vector<CallPtr> batch);
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
  const Config& config_;
  core::ChainStage stage_;
  BatchQueue<CallPtr> holds_;  // last: its thread uses the members above
};

// The problem the edge gets for a hold that was refused; nullopt for kHeld and kAlreadyHeld.
std::optional<v1::Problem> ProblemFor(const HoldOutcome& outcome, const HoldRecord& hold,
                                      const Limits& limits);

// The budgets a call is counted against: its OAuth grant's, with the grant's cap (none without
// a grant).
std::vector<Budget> BudgetsFor(const v1::Principal& principal);

// An amount in US dollars as people read it: at least two decimals, more only when the amount
// has them ("$5.00", "$0.25", "$1.000001").
std::string FormatUsd(int64_t micro_usd);

}  // namespace toolgate::billing
