// Reaper: ends holds whose result never arrived (an executor lost the job, or kept failing to
// deliver its result). A hold is due Config::hold_grace_ms after its function's timeout. If the
// ledger has a charge for the execution the capture is applied, else the hold is released, as a
// tombstone, so a charge that still arrives is applied exactly once (BalanceStore::Settle).
// Every replica runs one; the scripts are atomic and idempotent, so two reaping the same hold is
// harmless. Thread-safe.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>

#include "toolgate/billing/balance_store.h"
#include "toolgate/billing/config.h"
#include "toolgate/billing/ledger_store.h"

namespace toolgate::billing {

class Reaper {
 public:
  // Every reference must outlive the Reaper.
  Reaper(LedgerStore& ledger, BalanceStore& balances, const Config& config);
  // Stop().
  ~Reaper();
  Reaper(const Reaper&) = delete;
  Reaper& operator=(const Reaper&) = delete;

  // Runs ReapDue every Config::reaper_interval_ms on a thread of its own.
  void Start();
  void Stop();

  // One pass over the holds due at now_ms (at most 256); returns how many it ended.
  Result<int> ReapDue(int64_t now_ms);
  // Captures holds, due or not, whose charge is already in the ledger (at most 256, earliest
  // expiry first): a Redis that lost its last writes comes back holding funds for executions
  // that were charged, and this heals it within a pass instead of after the grace period.
  Result<int> CaptureCharged();

 private:
  void Loop();

  LedgerStore& ledger_;
  BalanceStore& balances_;
  const Config& config_;
  std::mutex mu_;
  std::condition_variable cv_;  // stopping_ was set
  bool stopping_ = false;       // guarded by mu_
  std::thread thread_;
};

}  // namespace toolgate::billing
