// The whole-ledger identity (docs/operations.md "The ledger identity"): every micro-USD that
// entered the platform from outside is somewhere, so
//
//   external credits (top-ups, grants, provider payments) - provider debits (refunds, disputes)
//     = the organizations' balances + platform income (compute + commission) + payouts
//
// Each side comes from its own source, so that a fault in one shows as a difference instead of
// cancelling out: credits and debits from the ledger's rows of those types; balances from Redis
// (tg:bal, which still holds what calls in flight have reserved; the ledger's sum only for an
// organization whose balance is not loaded); platform income from the charges (the charged
// executions, and the ledger's charge rows from before "One row per call") joined to the revenue
// rows paid for them: compute, plus each fee less its revenue row; payouts from billing.payouts.
// A revenue row without its charge, a Redis balance edited by hand, a lost capture or credit,
// a payout's row without its ledger entry: each breaks it by its amount.
//
// A charge committed but not yet captured in Redis shows as a difference for a moment: alert on a
// difference that lasts.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "toolgate/base/status.h"
#include "toolgate/billing/balance_store.h"
#include "toolgate/net/periodic_task.h"
#include "toolgate/pg/pg.h"

namespace toolgate::billing {

struct LedgerIdentity {
  int64_t external_credits_micro_usd = 0;
  int64_t provider_debits_micro_usd = 0;  // positive: what refunds and disputes took back
  int64_t balances_micro_usd = 0;
  int64_t compute_micro_usd = 0;
  int64_t commission_micro_usd = 0;
  int64_t payouts_micro_usd = 0;
  int64_t organizations_in_redis = 0;
  int64_t organizations_from_ledger = 0;  // not loaded in Redis: their ledger sums

  int64_t platform_income_micro_usd() const { return compute_micro_usd + commission_micro_usd; }
  // (credits - debits) - (balances + income + payouts): 0 when the identity holds; positive when
  // money is missing from the right side (less is held than came in).
  int64_t difference_micro_usd() const;
  // One JSON line: every term, the difference and whether it holds.
  std::string Json() const;
};

// Computes both sides: PostgreSQL's terms in one REPEATABLE READ transaction (one snapshot),
// then Redis's balances. Unavailable when a store cannot be read. Thread-safe.
Result<LedgerIdentity> CheckLedgerIdentity(pg::Pool& pool, BalanceStore& balances);

// The identity as metrics, every interval on a PeriodicTask of its own:
// toolgate_billing_ledger_imbalance_micro_usd (the last difference),
// toolgate_billing_ledger_identity_checked_timestamp_seconds (when it was last computed) and
// toolgate_billing_ledger_identity_errors_total (checks that could not read a store; the gauges
// keep their last values then). Logs an error while the identity does not hold.
class LedgerIdentityWatch {
 public:
  // pool and balances must outlive the watch. interval 0: Start does nothing.
  LedgerIdentityWatch(pg::Pool& pool, BalanceStore& balances, std::chrono::milliseconds interval);

  // Checks every interval from now on, until Stop (or destruction).
  void Start();
  void Stop();
  // One check; sets the metrics. Returns the identity, or why a store could not be read.
  Result<LedgerIdentity> CheckOnce();

 private:
  pg::Pool& pool_;
  BalanceStore& balances_;
  const std::chrono::milliseconds interval_;
  std::unique_ptr<net::PeriodicTask> task_;  // last: runs CheckOnce, which uses the above
};

}  // namespace toolgate::billing
