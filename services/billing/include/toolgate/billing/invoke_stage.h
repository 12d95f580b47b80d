// InvokeStage: the billing stage of the invoke chain (tg.invoke.billing, contract section 3,
// rows 7 and 8). It places the hold in one atomic step (per-key rate, per-organization
// concurrency, available balance) and forwards the job to the executor pool of its compute type
// and runtime, with tg.billing.unserved.<execution_id> as the reply subject (see charge.h); or it
// answers the edge with the first check that failed.
//
// Holds are group-committed like settlements: Handle only checks and queues the job, and one
// thread places every queued hold in one pipelined Redis round trip (BalanceStore::HoldMany), so
// that under `appendfsync always` concurrent calls share one fsync instead of paying one each.
// The batch's jobs then leave in one message per executor pool, its refusals in one per edge
// (bus::Batch).
// A hold that finds its organization's balance not yet loaded from the ledger is finished on the
// worker pool, which loads it (PostgreSQL) and tries again, so the batch never waits on that.
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
#include "toolgate/bus/batch.h"
#include "toolgate/bus/bus.h"
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
    v1::InvokeJob job;
    HoldRecord hold;
    std::string exec_subject;
    std::unique_ptr<trace::Span> span;  // "billing.hold": from arrival to the forward
  };
  using CallPtr = std::unique_ptr<Call>;

  // What one batch of holds sends: the held jobs by executor subject, and the edges' answers.
  // Each executor pool gets the batch's jobs in one message, each edge its answers in one.
  struct Outbox {
    explicit Outbox(bus::Bus& bus) : answers(bus) {}
    std::map<std::string, std::vector<Call*>> forwards;
    bus::Batch answers;
  };

  void HoldBatch(std::vector<CallPtr> batch);
  // Holds, loading the balance from the ledger first when Redis does not have it yet.
  Result<HoldOutcome> PlaceHold(const HoldRecord& hold);
  // Queues the call for its executors, or an answer for the edge, after the hold's outcome.
  void Proceed(Call& call, const Result<HoldOutcome>& outcome, Outbox& out);
  // Sends out's jobs, then its answers; the holds of jobs that cannot be sent are released and
  // their callers answered 503.
  void Send(Outbox& out);
  void Answer(const v1::InvokeJob& job, v1::Problem problem, const std::string& traceparent,
              bus::Batch& answers);

  bus::Bus& bus_;
  BalanceStore& balances_;
  LedgerStore& ledger_;
  ThreadPool& pool_;
  const Config& config_;
  BatchQueue<CallPtr> holds_;  // last: its thread uses the members above
};

// The problem the edge gets for a hold that was refused; nullopt for kHeld and kAlreadyHeld.
std::optional<v1::Problem> ProblemFor(const HoldOutcome& outcome, int64_t hold_micro_usd,
                                      const Limits& limits);

}  // namespace toolgate::billing
