// `toolgate-billing reconcile`: makes Redis balances and budgets agree with the ledger again
// (after a Redis restore, a lost credit or capture, a manual edit). For every organization with
// ledger entries it compares tg:bal with SUM(ledger), and for every OAuth grant with executions
// its budget's spent with what the ledger charged them. Reserved amounts and executions in
// flight are left alone. A balance or budget not loaded in Redis is no difference: it is loaded
// from the ledger on first use.
//
// Run it when billing is quiet: a charge committed but not yet captured in Redis shows as a
// difference for a moment. A balance that moves while it is being repaired is left alone (the
// repair is a compare-and-set) and counted as failed.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <thread>

#include "toolgate/billing/balance_store.h"
#include "toolgate/billing/ledger_store.h"

namespace toolgate::billing {

struct ReconcileReport {
  int64_t organizations = 0;
  int64_t differences = 0;
  int64_t repaired = 0;
  int64_t not_loaded = 0;
  int64_t difference_micro_usd = 0;  // the sum of |redis - ledger| over the differences
  // The same for the budgets of grants with executions (their spent).
  int64_t budgets = 0;
  int64_t budget_differences = 0;
  int64_t budgets_repaired = 0;
  int64_t budgets_not_loaded = 0;
};

// Writes one JSON line {"org_id", "redis", "ledger"} per balance and {"grant_id", "redis",
// "ledger"} per budget that differs to out (nullptr: nothing is written), repairs each unless
// dry_run, and writes a summary line. A non-OK status when the ledger or Redis cannot be read.
Result<ReconcileReport> Reconcile(LedgerStore& ledger, BalanceStore& balances, bool dry_run,
                                  std::FILE* out);

// ReconcileWatch: the reconciliation as a metric. Every interval it compares balances with the
// ledger (a dry run: it repairs nothing, that stays an operator's decision) and sets
// toolgate_billing_reconciliation_difference_micro_usd,
// toolgate_billing_reconciliation_organizations_differing and
// toolgate_billing_reconciliation_budgets_differing; a failed comparison counts in
// toolgate_billing_reconciliation_errors_total and leaves the gauges as they were. A charge
// committed but not yet captured shows as a difference for a moment: alert on a difference that
// lasts. Thread-safe.
class ReconcileWatch {
 public:
  // ledger and balances must outlive the watch. interval_ms 0: never runs.
  ReconcileWatch(LedgerStore& ledger, BalanceStore& balances, int64_t interval_ms);
  // Stop().
  ~ReconcileWatch();
  ReconcileWatch(const ReconcileWatch&) = delete;
  ReconcileWatch& operator=(const ReconcileWatch&) = delete;

  // Compares at once, then every interval, on a thread of its own.
  void Start();
  void Stop();
  // One comparison; sets the gauges. Returns the report, or why the stores could not be read.
  Result<ReconcileReport> CheckOnce();

 private:
  void Loop();

  LedgerStore& ledger_;
  BalanceStore& balances_;
  const int64_t interval_ms_;
  std::mutex mu_;
  std::condition_variable cv_;  // stopping_ was set
  bool stopping_ = false;       // guarded by mu_
  std::thread thread_;
};

}  // namespace toolgate::billing
