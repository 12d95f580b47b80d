// Applying a committed ledger credit or debit to the organization's cached balance in Redis,
// exactly once per ledger id (BalanceStore::Credit marks the id), whatever its sign. The ledger
// is the record: a Redis failure only delays the cached balance (retried on the RetryQueue, else
// repaired by reconcile). Load the balance (LoadBalances) before the entry commits, so that no
// load can count it and the application add it again. Thread-safe.
#pragma once

#include <cstdint>
#include <string>

#include "toolgate/billing/balance_store.h"
#include "toolgate/billing/retry_queue.h"

namespace toolgate::billing {

// label names the entry in the retry queue and the log ("credit payment 42").
void ApplyToCachedBalance(BalanceStore& balances, RetryQueue& retries, const std::string& label,
                          const std::string& org_id, int64_t ledger_id, int64_t amount_micro_usd);

}  // namespace toolgate::billing
