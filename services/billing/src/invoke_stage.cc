#include "toolgate/billing/invoke_stage.h"

#include "toolgate/base/log.h"
#include "toolgate/base/time.h"
#include "toolgate/billing/balance_loader.h"
#include "toolgate/billing/charge.h"
#include "toolgate/core/invoke_stage.h"
#include "toolgate/core/problem.h"
#include "toolgate/trace/trace.h"

namespace toolgate::billing {
namespace {

// A balance that is not loaded is loaded and the hold tried again; more than one retry means
// something keeps removing it.
constexpr int kHoldAttempts = 3;

v1::Problem Unavailable() {
  return core::MakeProblem("service_unavailable",
                           "Billing is briefly unavailable; nothing was charged. Retry shortly.");
}

}  // namespace

std::optional<v1::Problem> ProblemFor(const HoldOutcome& outcome, int64_t hold_micro_usd,
                                      const Limits& limits) {
  v1::Problem p;
  switch (outcome.verdict) {
    case HoldVerdict::kHeld:
    case HoldVerdict::kAlreadyHeld:
      return std::nullopt;
    case HoldVerdict::kBalanceNotLoaded:
      return Unavailable();
    case HoldVerdict::kRateLimited:
      p = core::MakeProblem("rate_limited",
                            "This API key sent more than " +
                                std::to_string(limits.rate_per_key_per_s) +
                                " requests per second; retry after Retry-After seconds.");
      p.set_retry_after_s(static_cast<int32_t>(outcome.retry_after_s));
      return p;
    case HoldVerdict::kConcurrencyLimit:
      p = core::MakeProblem("concurrency_limit",
                            "Your organization has " + std::to_string(limits.concurrency_per_org) +
                                " executions in flight; retry when one finishes.");
      p.set_retry_after_s(static_cast<int32_t>(outcome.retry_after_s));
      return p;
    case HoldVerdict::kInsufficientBalance:
      return core::MakeProblem(
          "insufficient_balance",
          "This call needs " + std::to_string(hold_micro_usd) +
              " micro-USD available and your organization has " +
              std::to_string(outcome.available_micro_usd) +
              "; nothing was charged. Top up with POST /api/v1/billing/top-ups.");
  }
  return Unavailable();
}

InvokeStage::InvokeStage(bus::Bus& bus, BalanceStore& balances, LedgerStore& ledger,
                         ThreadPool& pool, const Config& config)
    : bus_(bus),
      balances_(balances),
      ledger_(ledger),
      pool_(pool),
      config_(config),
      holds_(config.settle_batch,
             [this](std::vector<CallPtr> batch) { HoldBatch(std::move(batch)); }) {}

void InvokeStage::Stop() {
  holds_.Stop();
}

void InvokeStage::Handle(bus::Message&& message) {
  auto call = std::make_unique<Call>();
  v1::InvokeJob& job = call->job;
  if (!job.ParseFromString(message.data) || job.edge_reply().empty()) {
    log::Error("malformed invoke job dropped").Str("subject", message.subject);
    return;
  }
  call->span = std::make_unique<trace::Span>(
      trace::ContinueOrStart(message.traceparent.empty() ? job.traceparent() : message.traceparent),
      "billing.hold");
  core::AnnotateStageSpan(*call->span, job);
  const std::string traceparent = call->span->traceparent();
  auto exec_subject = ExecSubject(job.function());
  if (!job.has_principal() || !job.has_function() || !exec_subject ||
      !IsValidExecutionId(job.execution_id())) {
    log::Error("incomplete invoke job").Str("request_id", job.request_id());
    bus::Batch answer(bus_);
    Answer(job, core::MakeProblem("internal_error", "The invocation could not be routed."),
           traceparent, answer);
    return;
  }
  call->exec_subject = std::move(*exec_subject);

  HoldRecord& hold = call->hold;
  hold.execution_id = job.execution_id();
  hold.org_id = job.principal().org_id();
  hold.owner_org_id = job.function().owner_org_id();
  hold.key_id = job.principal().key_id();
  hold.key_expires_at_ms = job.principal().key_expires_at_ms();
  hold.amount_micro_usd = HoldAmountFor(config_.rates, job);
  hold.edge_reply = job.edge_reply();
  hold.traceparent = traceparent;
  hold.runtime = job.function().runtime();
  hold.compute_type = job.function().compute_type();
  hold.created_ms = NowMs();
  hold.expiry_ms = hold.created_ms + job.function().timeout_ms() + config_.hold_grace_ms;

  // Kept to answer with, should the queue refuse the call (it is stopping).
  const std::string edge_reply = job.edge_reply();
  const int64_t key_expires_at_ms = job.principal().key_expires_at_ms();
  if (!holds_.Push(std::move(call))) {
    v1::InvokeReply reply;
    reply.set_key_expires_at_ms(key_expires_at_ms);
    *reply.mutable_problem() = Unavailable();
    bus_.Publish(edge_reply, reply.SerializeAsString(), {}, traceparent);
  }
}

void InvokeStage::HoldBatch(std::vector<CallPtr> batch) {
  std::vector<HoldRecord> holds;
  holds.reserve(batch.size());
  for (const CallPtr& call : batch) holds.push_back(call->hold);
  std::vector<Result<HoldOutcome>> outcomes = balances_.HoldMany(holds);
  // Redis may have applied a failed hold and lost only its reply: undo them all in one round
  // trip (a no-op where nothing was held), so that a Redis that hangs costs this thread one
  // timeout per batch, not one per call. What cannot be undone now, the reaper releases.
  std::vector<const HoldRecord*> failed;
  std::string first_error;
  for (size_t i = 0; i < batch.size(); ++i) {
    if (outcomes[i].ok()) continue;
    if (failed.empty()) first_error = outcomes[i].status().ToString();
    failed.push_back(&batch[i]->hold);
  }
  if (!failed.empty()) {
    log::Error("holds failed")
        .Int("count", static_cast<int64_t>(failed.size()))
        .Str("error", first_error);
    balances_.ReleaseMany(failed);
  }
  Outbox out(bus_);
  for (size_t i = 0; i < batch.size(); ++i) {
    if (!outcomes[i].ok()) {
      Answer(batch[i]->job, Unavailable(), batch[i]->span->traceparent(), out.answers);
      continue;
    }
    if (outcomes[i].ok() && outcomes[i]->verdict == HoldVerdict::kBalanceNotLoaded) {
      // Rare (the organization's first call since Redis lost or never had its balance): the
      // load reads PostgreSQL, so it runs on the pool rather than stalling this batch's peers.
      std::shared_ptr<Call> call = std::move(batch[i]);
      pool_.Submit([this, call] {
        Outbox alone(bus_);
        Proceed(*call, PlaceHold(call->hold), alone);
        Send(alone);
      });
      continue;
    }
    Proceed(*batch[i], outcomes[i], out);
  }
  Send(out);
}

void InvokeStage::Send(Outbox& out) {
  for (auto& [subject, calls] : out.forwards) {
    std::vector<bus::Outgoing> jobs;
    jobs.reserve(calls.size());
    for (Call* call : calls) {
      jobs.emplace_back(subject, call->job.SerializeAsString(),
                        UnservedSubject(call->job.execution_id()), call->span->traceparent());
    }
    // A batch of holds is at most config.settle_batch (<= 256) jobs: one envelope, sent whole or
    // not at all, so releasing every hold of a failed send never releases a job that left.
    Status sent = bus_.PublishBatch(subject, std::move(jobs));
    if (sent.ok()) continue;
    log::Error("cannot forward jobs to the executors")
        .Str("subject", subject)
        .Int("count", static_cast<int64_t>(calls.size()))
        .Str("error", sent.ToString());
    for (Call* call : calls) {
      const HoldRecord& hold = call->hold;
      auto released = balances_.Release(hold.execution_id, hold.org_id, ReleaseMode::kDelete);
      if (!released.ok()) {
        log::Warn("hold left to the reaper").Str("execution_id", hold.execution_id);
      }
      Answer(call->job, Unavailable(), call->span->traceparent(), out.answers);
    }
  }
  out.forwards.clear();
  Status answered = out.answers.Send();
  if (!answered.ok()) log::Error("answers not sent").Str("error", answered.ToString());
}

void InvokeStage::Proceed(Call& call, const Result<HoldOutcome>& outcome, Outbox& out) {
  v1::InvokeJob& job = call.job;
  const HoldRecord& hold = call.hold;
  const std::string traceparent = call.span->traceparent();
  if (!outcome.ok()) {
    log::Error("hold failed").Str("error", outcome.status().ToString());
    // Redis may have applied the hold and lost only its reply: undo it (a no-op when nothing
    // was held), or leave it to the reaper if Redis is still unreachable.
    balances_.Release(hold.execution_id, hold.org_id, ReleaseMode::kDelete);
    Answer(job, Unavailable(), traceparent, out.answers);
    return;
  }
  if (outcome->verdict == HoldVerdict::kAlreadyHeld) {
    log::Warn("duplicate invoke job ignored").Str("execution_id", job.execution_id());
    return;
  }
  if (auto problem = ProblemFor(*outcome, hold.amount_micro_usd, config_.limits)) {
    Answer(job, std::move(*problem), traceparent, out.answers);
    return;
  }

  job.mutable_hold()->set_amount_micro_usd(hold.amount_micro_usd);
  job.mutable_hold()->set_function_micro_usd(FeeFor(job));
  job.set_traceparent(traceparent);
  core::RecordHop(job, *call.span);
  out.forwards[call.exec_subject].push_back(&call);
}

Result<HoldOutcome> InvokeStage::PlaceHold(const HoldRecord& hold) {
  for (int attempt = 0;; ++attempt) {
    auto outcome = balances_.Hold(hold);
    if (!outcome.ok() || outcome->verdict != HoldVerdict::kBalanceNotLoaded ||
        attempt + 1 == kHoldAttempts) {
      return outcome;
    }
    Status loaded = LoadBalances(balances_, ledger_, {hold.org_id});
    if (!loaded.ok()) return loaded;
  }
}

void InvokeStage::Answer(const v1::InvokeJob& job, v1::Problem problem,
                         const std::string& traceparent, bus::Batch& answers) {
  v1::InvokeReply reply;
  // An expiring key is flagged on every answer, refusals included (X-Api-Key-Expires-At).
  reply.set_key_expires_at_ms(job.principal().key_expires_at_ms());
  *reply.mutable_problem() = std::move(problem);
  answers.Add(bus::SiblingDestination(job.edge_reply()),
              {job.edge_reply(), reply.SerializeAsString(), {}, traceparent});
}

}  // namespace toolgate::billing
