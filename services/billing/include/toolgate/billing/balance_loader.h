// Loading balances into Redis from the ledger.
//
// A credit (a top-up, an owner's revenue) is applied to tg:bal only when that key exists, after
// the credit's ledger entry is durable. A load is SUM(ledger), then SET NX. Were the key
// absent when a credit commits, a load running at the same time could read a sum that includes
// the credit and still set it after the credit found the key present: counted twice. Loading the
// credited organization's balance BEFORE committing the credit closes that race: a load that
// sets the key then finishes before the credit commits (its sum excludes it, the credit is
// added), and every later load is a no-op. Charges need no such care: a hold exists only while
// its organization's balance is loaded, and a balance is never unloaded.
#pragma once

#include <string>
#include <vector>

#include "toolgate/base/status.h"
#include "toolgate/billing/balance_store.h"
#include "toolgate/billing/ledger_store.h"

namespace toolgate::billing {

// Ensures tg:bal of every organization in org_ids is present. Thread-safe; Unavailable when
// Redis or PostgreSQL cannot be reached.
Status LoadBalances(BalanceStore& balances, LedgerStore& ledger,
                    const std::vector<std::string>& org_ids);

// Ensures budget is loaded: its spent set to what the ledger charged it (a grant's: its
// executions' charges) unless another replica loaded it first. Thread-safe; Unavailable when
// Redis or PostgreSQL cannot be reached.
Status LoadBudget(BalanceStore& balances, LedgerStore& ledger, const Budget& budget);

}  // namespace toolgate::billing
