// InvokeStage: the billing stage of the invoke chain (tg.invoke.billing, contract section 3,
// rows 7 and 8). It places the hold in one atomic step (per-key rate, per-organization
// concurrency, available balance) and forwards the job to the executor pool of its compute type
// and runtime, with tg.billing.settle.<execution_id> as the reply subject; or it answers the
// edge with the first check that failed. Thread-safe.
#pragma once

#include "toolgate/billing/balance_store.h"
#include "toolgate/billing/config.h"
#include "toolgate/billing/ledger_store.h"
#include "toolgate/bus/bus.h"
#include "toolgate/v1/toolgate.pb.h"

namespace toolgate::billing {

class InvokeStage {
 public:
  // Every reference must outlive the stage.
  InvokeStage(bus::Bus& bus, BalanceStore& balances, LedgerStore& ledger, const Config& config);

  // One InvokeJob with principal and function set.
  void Handle(bus::Message&& message);

 private:
  // Holds, loading the balance from the ledger first when Redis does not have it yet.
  Result<HoldOutcome> PlaceHold(const HoldRecord& hold);
  void Answer(const v1::InvokeJob& job, v1::Problem problem, const std::string& traceparent);

  bus::Bus& bus_;
  BalanceStore& balances_;
  LedgerStore& ledger_;
  const Config& config_;
};

// The problem the edge gets for a hold that was refused; nullopt for kHeld and kAlreadyHeld.
std::optional<v1::Problem> ProblemFor(const HoldOutcome& outcome, int64_t hold_micro_usd,
                                      const Limits& limits);

}  // namespace toolgate::billing
