// Settler: the capture side of an invocation (docs/architecture.md, "Settlement").
//
// An executor sends each ExecutionResult to tg.billing.settle.<execution_id> as a request and
// retries until a billing replica acks. The settler queues results; one batcher thread takes
// every result waiting (up to Config::settle_batch) and writes their ledger entries and
// executions rows in ONE PostgreSQL transaction (group commit), then captures each hold in Redis
// (or releases it when the handler did not run: a timeout's sandbox time is then spent from its
// organization's allowance of uncharged timeouts, balance_store.h), answers each edge, acks the
// executors, and announces the batch's new executions in one ExecutionsRecorded on
// tg.events.execution. Acks are off the answer path (they only end the executor's retries), so
// they gather for Config::ack_linger_ms and leave as one SettleAcks per executor connection:
// under load one message per linger, not one per batch (settle_acks.h).
// Nothing is acked before it is durable: when PostgreSQL (or Redis, before the commit) is
// unreachable, the batch is dropped unacked and the executors' retries bring it back. A Redis
// capture that fails after the commit is retried in the background (RetryQueue); the charge is
// durable, so the edge is answered anyway.
//
// The NATS server tells the publisher of an executor job that nobody serves its subject by a
// "no responders" notice on the job's reply subject (tg.billing.unserved.<execution_id>),
// delivered only to a plain (non-queue) subscription of the publishing connection:
// OnNoResponders releases the hold and answers the edge 503 no_capacity. That reply subject is
// not the settle subject, so results are delivered once, to the queue group, not also to every
// replica's plain subscription.
//
// Thread-safe: OnResult and OnNoResponders may run on any thread.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "toolgate/base/batch_queue.h"
#include "toolgate/billing/balance_store.h"
#include "toolgate/billing/compute_medians.h"
#include "toolgate/billing/config.h"
#include "toolgate/billing/ledger_store.h"
#include "toolgate/billing/retry_queue.h"
#include "toolgate/billing/settle_acks.h"
#include "toolgate/bus/batch.h"
#include "toolgate/bus/bus.h"

namespace toolgate::billing {

// A call whose charge a settled batch captured: what watches spending needs of it
// (budget_alerts.h).
struct CapturedCharge {
  std::string org_id;  // the caller
  std::string key_id;  // the API key it was made with; empty: a session or an OAuth grant
};

class Settler {
 public:
  // Every reference must outlive the Settler. Starts the batcher thread.
  // recent learns each charged execution's compute charge (the medians MCP prices show).
  Settler(bus::Bus& bus, LedgerStore& ledger, BalanceStore& balances, RetryQueue& retries,
          const Config& config, RecentComputeCharges& recent);
  // Stop().
  ~Settler();
  Settler(const Settler&) = delete;
  Settler& operator=(const Settler&) = delete;

  // An ExecutionResult from an executor (the queue subscription of tg.billing.settle.*).
  void OnResult(bus::Message&& message);
  // A no-responders notice for an executor job (the plain subscription of
  // tg.billing.unserved.*); every other message is ignored.
  void OnNoResponders(const bus::Message& message);

  // Settles what is queued, then stops the batcher. Results arriving later are left unacked.
  void Stop();

  // Told after each batch's captures which charges they captured (a retried result's repeat
  // capture is not among them), on the batcher thread: it must only queue. Set it before the
  // first result arrives.
  using CaptureListener = std::function<void(std::vector<CapturedCharge>)>;
  void SetCaptureListener(CaptureListener listener) { capture_listener_ = std::move(listener); }
  // Told (execution id, organization) of an asynchronous execution's job that no executor was
  // subscribed to take, instead of releasing its hold: it waits in its queue again
  // (async_queue.h). Set it before the first job leaves.
  void SetAsyncUnserved(std::function<void(const std::string&, const std::string&)> unserved) {
    unserved_async_ = std::move(unserved);
  }

 private:
  struct Pending;
  using Batch = std::vector<std::unique_ptr<Pending>>;

  // Records batch durably, then applies, answers and acks each settlement.
  void Commit(Batch batch);
  // applied: the outcome of the batch's capture of this hold (the handler ran) or release (it
  // did not); a batch applies each kind in one Redis round trip. A transient failure goes to
  // the retry queue.
  void Finish(Pending& pending, const Status& applied);
  // The edge's answer to a settled result, added to answers.
  void AnswerEdge(const Pending& pending, bus::Batch& answers);
  // Logs the release that spent what was left of an organization's allowance of uncharged
  // timeouts: from then on its calls are refused until the allowance refills.
  void NoteAllowanceSpent(const UnrunRelease& release, const Result<ReleaseOutcome>& outcome) const;
  // Hands the acks of a recorded batch to acks_.
  void AckAll(const Batch& batch);
  // Tells capture_listener_ the charges of batch that captures (index_of: batch -> captures)
  // captured.
  void NotifyCaptured(const Batch& batch, const std::vector<Result<bool>>& captures,
                      const std::vector<size_t>& index_of) const;

  bus::Bus& bus_;
  LedgerStore& ledger_;
  BalanceStore& balances_;
  RetryQueue& retries_;
  const Config& config_;
  RecentComputeCharges& recent_;

  // The registry's execution events (its counters), gathered for up to 100 ms after each
  // message: under load one message a tenth of a second rather than one per settlement batch.
  // Counters, not money: a full queue drops events rather than hold up a settlement.
  BatchQueue<v1::ExecutionRecorded> recorded_;
  // A linger of acks ends early once the results they ack pass this: an executor keeps each
  // result until its ack arrives.
  static constexpr size_t kAckLingerBytes = 8 << 20;
  SettleAcks acks_;
  CaptureListener capture_listener_;
  std::function<void(const std::string&, const std::string&)> unserved_async_;
  BatchQueue<std::unique_ptr<Pending>> queue_;  // last: its thread calls Commit
};

}  // namespace toolgate::billing
