#include "toolgate/billing/settler.h"

#include <algorithm>
#include <set>

#include "toolgate/base/log.h"
#include "toolgate/base/time.h"
#include "toolgate/billing/balance_loader.h"
#include "toolgate/billing/charge.h"
#include "toolgate/core/invoke_stage.h"
#include "toolgate/core/problem.h"
#include "toolgate/core/subjects.h"
#include "toolgate/trace/trace.h"

namespace toolgate::billing {
namespace {

constexpr const char* kExecutionEvents = core::kExecutionEventsSubject;

v1::SettleAck Ack(bool ok) {
  v1::SettleAck ack;
  ack.set_ok(ok);
  return ack;
}

// The release of the hold of a result whose handler did not run.
UnrunRelease UnrunReleaseOf(const v1::ExecutionResult& result) {
  return UnrunRelease{result.job().execution_id(), result.job().principal().org_id(),
                      UnchargedTimeoutMs(result)};
}

}  // namespace

struct Settler::Pending {
  v1::ExecutionResult result;
  Settlement settlement;
  std::string ack_reply;
  size_t result_bytes = 0;  // what the executor keeps until the ack reaches it
  // From arrival to the edge's answer.
  std::unique_ptr<trace::Span> span;
};

Settler::Settler(bus::Bus& bus, LedgerStore& ledger, BalanceStore& balances, RetryQueue& retries,
                 const Config& config, RecentComputeCharges& recent)
    : bus_(bus),
      ledger_(ledger),
      balances_(balances),
      retries_(retries),
      config_(config),
      recent_(recent),
      recorded_(
          4096,
          [this](std::vector<v1::ExecutionRecorded> events) {
            v1::ExecutionsRecorded message;
            for (v1::ExecutionRecorded& e : events) *message.add_executions() = std::move(e);
            bus_.Publish(kExecutionEvents, message.SerializeAsString());
          },
          /*max_queue=*/65536, std::chrono::milliseconds(100)),
      acks_([this](const std::string& subject,
                   const std::string& data) { bus_.Publish(subject, data); },
            std::chrono::milliseconds(config.ack_linger_ms), kAckLingerBytes),
      queue_(config.settle_batch, [this](Batch batch) { Commit(std::move(batch)); }) {}

Settler::~Settler() {
  Stop();
}

void Settler::Stop() {
  queue_.Stop();
  // After the last batch: they send what the batches left.
  acks_.Stop();
  recorded_.Stop();
}

void Settler::OnResult(bus::Message&& message) {
  if (message.no_responders) return;
  auto pending = std::make_unique<Pending>();
  bool parsed = pending->result.ParseFromString(message.data);
  const v1::InvokeJob& job = pending->result.job();
  if (!parsed || !IsValidExecutionId(job.execution_id()) || !job.has_principal() ||
      !job.has_function()) {
    // It can never settle; an ack with ok=false stops the executor retrying it.
    log::Error("malformed execution result dropped").Str("subject", message.subject);
    if (!message.reply.empty()) bus_.Publish(message.reply, Ack(false).SerializeAsString());
    return;
  }
  const std::string& traceparent =
      message.traceparent.empty() ? job.traceparent() : message.traceparent;
  pending->span =
      std::make_unique<trace::Span>(trace::ContinueOrStart(traceparent), "billing.settle");
  core::AnnotateStageSpan(*pending->span, job);
  pending->settlement = SettlementFor(config_.rates, pending->result);
  pending->ack_reply = std::move(message.reply);
  pending->result_bytes = message.data.size();
  // Refused once stopping: unacked, the executor retries on another replica.
  queue_.Push(std::move(pending));
}

void Settler::OnNoResponders(const bus::Message& message) {
  if (!message.no_responders) return;
  std::string execution_id = ExecutionIdOfUnservedSubject(message.subject);
  if (execution_id.empty()) return;
  auto hold = balances_.GetHold(execution_id);
  if (!hold.ok()) {
    // The hold stays; the reaper releases it once it expires.
    log::Error("cannot release the hold of an unserved job")
        .Str("execution_id", execution_id)
        .Str("error", hold.status().ToString());
    return;
  }
  if (!hold->has_value() || (*hold)->released) return;
  const HoldRecord& h = **hold;
  // An asynchronous execution has no edge waiting (no edge_reply): it goes back to its queue.
  if (h.edge_reply.empty() && unserved_async_) {
    unserved_async_(execution_id, h.org_id);
    return;
  }
  auto released = balances_.Release(execution_id, h.org_id, ReleaseMode::kDelete);
  if (!released.ok()) {
    log::Error("cannot release the hold of an unserved job")
        .Str("execution_id", execution_id)
        .Str("error", released.status().ToString());
    return;
  }
  if (!*released) return;  // another replica answered it
  trace::Span span(trace::ContinueOrStart(h.traceparent), "billing.no_capacity");
  span.SetAttribute("faas.invocation_id", execution_id);
  v1::InvokeReply reply;
  reply.set_key_expires_at_ms(h.key_expires_at_ms);
  *reply.mutable_problem() =
      core::MakeProblem("no_capacity", "No executor serves " + h.runtime + " on " + h.compute_type +
                                           " right now; nothing was charged. Retry later.");
  if (!h.edge_reply.empty()) {
    bus_.Publish(h.edge_reply, reply.SerializeAsString(), {}, span.traceparent());
  }
}

void Settler::Commit(Batch batch) {
  // Owners about to be credited revenue must have their balance loaded first (see
  // balance_loader.h).
  std::vector<std::string> owners;
  for (const auto& p : batch) {
    for (const LedgerEntry& e : p->settlement.entries) {
      if (e.type == EntryType::kRevenue) owners.push_back(e.org_id);
    }
  }
  std::sort(owners.begin(), owners.end());
  owners.erase(std::unique(owners.begin(), owners.end()), owners.end());
  Status loaded = LoadBalances(balances_, ledger_, owners);
  if (!loaded.ok()) {
    log::Error("settlements deferred: balances cannot be loaded; executors will retry")
        .Str("error", loaded.ToString())
        .Int("count", static_cast<int64_t>(batch.size()));
    return;
  }

  std::vector<const Settlement*> settlements;
  for (const auto& p : batch) settlements.push_back(&p->settlement);
  auto recorded = ledger_.RecordSettlements(settlements);
  if (!recorded.ok()) {
    if (batch.size() > 1 && recorded.status().code() != Status::Code::kUnavailable) {
      // One settlement PostgreSQL rejects must not hold back the others: write them one by one.
      log::Warn("settlement batch rejected; retrying one by one")
          .Str("error", recorded.status().ToString());
      for (auto& p : batch) {
        Batch one;
        one.push_back(std::move(p));
        Commit(std::move(one));
      }
      return;
    }
    log::Error("settlements not recorded; executors will retry")
        .Str("error", recorded.status().ToString())
        .Int("count", static_cast<int64_t>(batch.size()));
    return;
  }
  std::set<std::string> fresh(recorded->begin(), recorded->end());
  // Capture every hold of the batch whose handler ran, and release every other, in one Redis
  // round trip each: under `appendfsync always` one fsync then covers the whole batch instead
  // of one per settlement, and a Redis that hangs costs one timeout, not one per settlement.
  std::vector<SettleStep> steps;
  std::vector<UnrunRelease> unrun;
  std::vector<size_t> index_of(batch.size());
  for (size_t i = 0; i < batch.size(); ++i) {
    const ExecutionRecord& e = batch[i]->settlement.execution;
    if (batch[i]->result.handler_ran()) {
      index_of[i] = steps.size();
      steps.push_back(SettleStep{e.execution_id, e.org_id, e.owner_org_id, e.charge.total_micro_usd,
                                 e.charge.owner_revenue_micro_usd});
    } else {
      index_of[i] = unrun.size();
      unrun.push_back(UnrunReleaseOf(batch[i]->result));
    }
  }
  // The charges are durable (the transaction committed), so the callers are answered as soon as
  // the captures are on their way to Redis, without waiting for Redis's fsync of them: a capture
  // that a crash of Redis loses leaves its hold reserved, never an overdraft, until the reaper
  // settles it from the ledger. Sending the captures before the answers keeps a caller's next
  // call from finding its concurrency slot still taken. The batch's answers leave together: one
  // message per edge, not one per call.
  bus::Batch answers(bus_);
  for (const auto& p : batch) AnswerEdge(*p, answers);
  bool answered = false;
  auto answer = [&] {
    if (answered) return;
    answered = true;
    Status s = answers.Send();
    if (!s.ok()) log::Error("answers not sent").Str("error", s.ToString());
  };
  std::vector<Status> releases;
  if (!unrun.empty()) {
    for (size_t i = 0; const auto& released : balances_.ReleaseUnrun(unrun)) {
      NoteAllowanceSpent(unrun[i++], released);
      releases.push_back(released.status());
    }
  }
  std::vector<Result<bool>> captures = balances_.SettleMany(steps, answer);
  answer();
  for (size_t i = 0; i < batch.size(); ++i) {
    bool newly_recorded = fresh.erase(batch[i]->settlement.execution.execution_id) > 0;
    Finish(*batch[i],
           batch[i]->result.handler_ran() ? captures[index_of[i]].status() : releases[index_of[i]]);
    // Only the first recording counts, so a retried result never counts twice.
    if (newly_recorded && batch[i]->result.handler_ran()) {
      const ExecutionRecord& execution = batch[i]->settlement.execution;
      v1::ExecutionRecorded event;
      event.set_execution_id(execution.execution_id);
      event.set_function_id(execution.function_id);
      event.set_caller_org_id(execution.org_id);
      event.set_created_at_ms(NowMs());
      event.set_outcome_known(true);
      event.set_runtime_ms(execution.runtime_ms);
      event.set_status_code(execution.status_code);
      recorded_.Push(std::move(event));
      recent_.Record(execution.function_id, execution.version, execution.charge.compute_micro_usd,
                     NowMs());
    }
  }
  AckAll(batch);
  NotifyCaptured(batch, captures, index_of);
}

void Settler::AnswerEdge(const Pending& pending, bus::Batch& answers) {
  const v1::InvokeJob& job = pending.result.job();
  if (job.edge_reply().empty()) return;
  v1::InvokeReply reply = ReplyFor(pending.result, pending.settlement.execution.charge);
  answers.Add(bus::SiblingDestination(job.edge_reply()),
              {job.edge_reply(), reply.SerializeAsString(), {}, pending.span->traceparent()});
}

void Settler::Finish(Pending& pending, const Status& applied) {
  const v1::ExecutionResult& result = pending.result;
  const ExecutionRecord& execution = pending.settlement.execution;

  // The hold was captured (or released) with the batch. The ledger is durable already, so a
  // Redis failure only delays this step, never the answer: it is retried in the background.
  RetryQueue::Step step;
  if (result.handler_ran()) {
    SettleStep settle{execution.execution_id, execution.org_id, execution.owner_org_id,
                      execution.charge.total_micro_usd, execution.charge.owner_revenue_micro_usd};
    step = [this, settle] {
      auto r = balances_.Settle(settle);
      return r.ok() ? Status::Ok() : r.status();
    };
  } else {
    step = [this, release = UnrunReleaseOf(result)] {
      auto r = std::move(balances_.ReleaseUnrun({release}).front());
      NoteAllowanceSpent(release, r);
      return r.ok() ? Status::Ok() : r.status();
    };
  }
  if (RetryQueue::IsTransient(applied)) {
    retries_.Add("capture " + execution.execution_id, std::move(step));
  } else if (!applied.ok()) {
    log::Error("hold not captured; reconcile repairs the balance")
        .Str("execution_id", execution.execution_id)
        .Str("error", applied.ToString());
  }

  pending.span.reset();
}

void Settler::NoteAllowanceSpent(const UnrunRelease& release,
                                 const Result<ReleaseOutcome>& outcome) const {
  if (!outcome.ok() || !outcome->allowance_spent) return;
  log::Warn(
      "an organization's calls that ran past their timeout spent its allowance of uncharged "
      "timeouts; its calls are refused (429 timeout_budget_exhausted) until it refills")
      .Str("org_id", release.org_id)
      .Str("execution_id", release.execution_id)
      .Int("allowance_s_per_hour", config_.limits.uncharged_timeout_s_per_hour);
}

void Settler::NotifyCaptured(const Batch& batch, const std::vector<Result<bool>>& captures,
                             const std::vector<size_t>& index_of) const {
  if (!capture_listener_) return;
  std::vector<CapturedCharge> charged;
  for (size_t i = 0; i < batch.size(); ++i) {
    if (!batch[i]->result.handler_ran()) continue;
    const Result<bool>& captured = captures[index_of[i]];
    const ExecutionRecord& e = batch[i]->settlement.execution;
    if (!captured.ok() || !*captured || e.charge.total_micro_usd <= 0) continue;
    charged.push_back(CapturedCharge{e.org_id, e.key_id});
  }
  if (!charged.empty()) capture_listener_(std::move(charged));
}

void Settler::AckAll(const Batch& batch) {
  std::vector<std::string> replies;
  replies.reserve(batch.size());
  size_t bytes = 0;
  for (const auto& p : batch) {
    if (p->ack_reply.empty()) continue;
    replies.push_back(p->ack_reply);
    bytes += p->result_bytes;
  }
  acks_.Add(std::move(replies), bytes);
}

}  // namespace toolgate::billing
