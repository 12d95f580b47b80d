// `toolgate-billing reconcile`: makes Redis balances agree with the ledger again (after a Redis
// restore, a lost credit, a manual edit). For every organization with ledger entries it compares
// tg:bal with SUM(ledger). Reserved amounts and executions in flight are left alone. A balance
// not loaded in Redis is no difference: it is loaded from the ledger on first use.
//
// Run it when billing is quiet: a charge committed but not yet captured in Redis shows as a
// difference for a moment. A balance that moves while it is being repaired is left alone (the
// repair is a compare-and-set) and counted as failed.
#pragma once

#include <cstdint>
#include <cstdio>

#include "toolgate/billing/balance_store.h"
#include "toolgate/billing/ledger_store.h"

namespace toolgate::billing {

struct ReconcileReport {
  int64_t organizations = 0;
  int64_t differences = 0;
  int64_t repaired = 0;
  int64_t not_loaded = 0;
};

// Writes one JSON line {"org_id", "redis", "ledger"} per difference to out, repairs each unless
// dry_run, and writes a summary line. A non-OK status when the ledger or Redis cannot be read.
Result<ReconcileReport> Reconcile(LedgerStore& ledger, BalanceStore& balances, bool dry_run,
                                  std::FILE* out);

}  // namespace toolgate::billing
