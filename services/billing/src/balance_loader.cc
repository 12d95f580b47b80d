#include "toolgate/billing/balance_loader.h"

namespace toolgate::billing {

Status LoadBalances(BalanceStore& balances, LedgerStore& ledger,
                    const std::vector<std::string>& org_ids) {
  auto missing = balances.NotLoaded(org_ids);
  if (!missing.ok()) return missing.status();
  for (const std::string& org : *missing) {
    auto sum = ledger.Sum(org);
    if (!sum.ok()) return sum.status();
    // Another replica may load it first; SET NX keeps whichever came first (both are sums).
    auto loaded = balances.Load(org, *sum);
    if (!loaded.ok()) return loaded.status();
  }
  return Status::Ok();
}

Status LoadBudget(BalanceStore& balances, LedgerStore& ledger, const Budget& budget) {
  auto spent = ledger.BudgetSpent(budget);
  if (!spent.ok()) return spent.status();
  // HSETNX keeps whichever load came first (both are the ledger's sum).
  auto loaded = balances.LoadBudget(budget, *spent);
  return loaded.ok() ? Status::Ok() : loaded.status();
}

}  // namespace toolgate::billing
