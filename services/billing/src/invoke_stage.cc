#include "toolgate/billing/invoke_stage.h"

#include <algorithm>
#include <limits>

#include "toolgate/base/log.h"
#include "toolgate/base/time.h"
#include "toolgate/billing/balance_loader.h"
#include "toolgate/billing/charge.h"
#include "toolgate/core/invoke_stage.h"
#include "toolgate/core/problem.h"
#include "toolgate/core/runtime_names.h"
#include "toolgate/core/subjects.h"
#include "toolgate/trace/trace.h"
#include "toolgate/webhook/target_policy.h"

namespace toolgate::billing {
namespace {

// A balance or a budget that is not loaded is loaded and the hold tried again: once for the
// balance, once per budget, and once more to hold; more means something keeps removing them.
size_t HoldAttempts(const HoldRecord& hold) {
  return 2 + hold.budgets.size();
}

v1::Problem BudgetProblem(const Budget& budget) {
  switch (budget.kind) {
    case BudgetKind::kGrant:
      return core::MakeProblem("grant_cap_exceeded",
                               "This connected app's spending cap of " +
                                   FormatUsd(budget.cap_micro_usd) +
                                   " is used up; raise or remove the cap in Settings → Connected "
                                   "apps. Nothing was charged.");
    case BudgetKind::kKey:
    case BudgetKind::kOrg:
      return PeriodBudgetProblem(budget, NowMs());
  }
  return core::MakeProblem("internal_error", "The invocation could not be billed.");
}

v1::Problem Unavailable() {
  return core::MakeProblem("service_unavailable",
                           "Billing is briefly unavailable; nothing was charged. Retry shortly.");
}

}  // namespace

std::string FormatUsd(int64_t micro_usd) {
  std::string sign = micro_usd < 0 ? "-" : "";
  // Unsigned, so that the most negative amount has a magnitude too.
  uint64_t magnitude =
      micro_usd < 0 ? 0 - static_cast<uint64_t>(micro_usd) : static_cast<uint64_t>(micro_usd);
  std::string fraction = std::to_string(magnitude % 1'000'000);
  fraction.insert(0, 6 - fraction.size(), '0');
  while (fraction.size() > 2 && fraction.back() == '0') fraction.pop_back();
  return sign + "$" + std::to_string(magnitude / 1'000'000) + "." + fraction;
}

std::vector<Budget> BudgetsFor(const v1::Principal& principal) {
  std::string grant = GrantIdOf(principal);
  if (grant.empty()) return {};
  return {Budget{BudgetKind::kGrant,
                 std::move(grant),
                 std::max<int64_t>(0, principal.grant_cap_micro_usd()),
                 {},
                 {}}};
}

v1::Estimate EstimateOf(const HoldRecord& hold, const HoldOutcome& outcome,
                        int64_t function_micro_usd) {
  v1::Estimate e;
  e.set_max_hold_micro_usd(hold.amount_micro_usd);
  e.set_function_micro_usd(function_micro_usd);
  e.set_max_compute_micro_usd(hold.amount_micro_usd - function_micro_usd);
  // Available now, before the call: what the hold would leave plus the hold itself.
  e.set_available_micro_usd(outcome.available_after_micro_usd + hold.amount_micro_usd);
  if (outcome.tightest_budget && *outcome.tightest_budget < hold.budgets.size()) {
    e.set_budget_remaining_micro_usd(outcome.budget_remaining_micro_usd + hold.amount_micro_usd);
    e.set_budget_limit(std::string(BudgetLimitName(hold.budgets[*outcome.tightest_budget])));
  }
  return e;
}

std::optional<v1::Problem> MaxCostProblem(int64_t amount_micro_usd, int64_t max_cost_micro_usd) {
  if (max_cost_micro_usd <= 0 || amount_micro_usd <= max_cost_micro_usd) return std::nullopt;
  return core::MakeProblem(
      "max_cost_exceeded",
      "This call may cost up to " + std::to_string(amount_micro_usd) +
          " micro-USD (the version's price and its compute for the whole timeout_ms), above "
          "X-Toolgate-Max-Cost: " +
          std::to_string(max_cost_micro_usd) + ". It was not run; nothing was held or charged.");
}

v1::Problem PeriodBudgetProblem(const Budget& budget, int64_t now_ms) {
  if (!budget.period) return Unavailable();
  const std::string whose =
      budget.kind == BudgetKind::kKey ? "This API key's" : "Your organization's";
  const std::string path = budget.kind == BudgetKind::kKey
                               ? "/api/v1/api-keys/" + budget.id + "/budget"
                               : "/api/v1/billing/budget";
  v1::Problem p = core::MakeProblem(
      "budget_exceeded", whose + " " + std::string(PeriodUnitName(budget.period->unit)) +
                             " spending limit of " + FormatUsd(budget.cap_micro_usd) + " (" +
                             std::to_string(budget.cap_micro_usd) + " micro-USD) for " +
                             budget.period->name +
                             " UTC would be passed by this call; it resets at " +
                             FormatRfc3339(budget.period->end_ms) +
                             ". Nothing was charged. Raise it with PUT " + path + ".");
  const int64_t wait_s = (budget.period->end_ms - now_ms + 999) / 1000;
  p.set_retry_after_s(
      static_cast<int32_t>(std::clamp<int64_t>(wait_s, 1, std::numeric_limits<int32_t>::max())));
  return p;
}

std::optional<v1::Problem> ProblemFor(const HoldOutcome& outcome, const HoldRecord& hold,
                                      const Limits& limits) {
  v1::Problem p;
  switch (outcome.verdict) {
    case HoldVerdict::kHeld:
    case HoldVerdict::kAlreadyHeld:
      return std::nullopt;
    case HoldVerdict::kBalanceNotLoaded:
    case HoldVerdict::kBudgetNotLoaded:
      return Unavailable();
    case HoldVerdict::kBudgetExceeded:
      if (outcome.budget >= hold.budgets.size()) return Unavailable();
      return BudgetProblem(hold.budgets[outcome.budget]);
    case HoldVerdict::kRateLimited:
      p = core::MakeProblem("rate_limited",
                            "This API key sent more than " +
                                std::to_string(limits.rate_per_key_per_s) +
                                " requests per second; retry after Retry-After seconds.");
      p.set_retry_after_s(static_cast<int32_t>(outcome.retry_after_s));
      return p;
    case HoldVerdict::kQueueFull:
      p = core::MakeProblem("queue_full",
                            "Your organization has " + std::to_string(limits.queued_per_org) +
                                " asynchronous executions waiting in the queue; retry when some "
                                "have started, or cancel some.");
      p.set_retry_after_s(static_cast<int32_t>(std::max<int64_t>(1, outcome.retry_after_s)));
      return p;
    case HoldVerdict::kConcurrencyLimit:
      p = core::MakeProblem("concurrency_limit",
                            "Your organization has " + std::to_string(limits.concurrency_per_org) +
                                " executions in flight; retry when one finishes.");
      p.set_retry_after_s(static_cast<int32_t>(outcome.retry_after_s));
      return p;
    case HoldVerdict::kTimeoutBudgetExhausted:
      p = core::MakeProblem(
          "timeout_budget_exhausted",
          "Your organization's calls that ran past their timeout_ms (408, not charged) used its "
          "allowance of " +
              std::to_string(limits.uncharged_timeout_s_per_hour) +
              " sandbox seconds per hour; nothing was charged. Retry after Retry-After seconds, "
              "or give slow calls a timeout_ms they finish within: calls that finish do not "
              "count.");
      p.set_retry_after_s(static_cast<int32_t>(
          std::min<int64_t>(outcome.retry_after_s, std::numeric_limits<int32_t>::max())));
      return p;
    case HoldVerdict::kInsufficientBalance:
      return core::MakeProblem(
          "insufficient_balance",
          "This call needs " + std::to_string(hold.amount_micro_usd) +
              " micro-USD available and your organization has " +
              std::to_string(outcome.available_micro_usd) +
              "; nothing was charged. Top up with POST /api/v1/billing/top-ups.");
  }
  return Unavailable();
}

InvokeStage::InvokeStage(bus::Bus& bus, BalanceStore& balances, LedgerStore& ledger,
                         ThreadPool& pool, BudgetSettingsCache& budget_settings,
                         const Config& config, std::function<int64_t()> now_ms)
    : bus_(bus),
      balances_(balances),
      ledger_(ledger),
      pool_(pool),
      budget_settings_(budget_settings),
      config_(config),
      now_ms_(now_ms ? std::move(now_ms) : [] { return NowMs(); }),
      stage_("billing.hold", core::PublishWith(bus)),
      holds_(config.settle_batch,
             [this](std::vector<CallPtr> batch) { HoldBatch(std::move(batch)); }) {}

void InvokeStage::Stop() {
  holds_.Stop();
}

void InvokeStage::Handle(bus::Message&& message) {
  auto opened = stage_.Open(message);
  if (!opened) return;
  auto call = std::make_unique<Call>();
  call->in = std::move(*opened);
  const v1::InvokeJob& job = call->in.job;
  auto exec_subject = core::ExecSubject(job.function().compute_type(), job.function().runtime());
  if (!job.has_principal() || !job.has_function() || !exec_subject ||
      !IsValidExecutionId(job.execution_id())) {
    log::Error("incomplete invoke job").Str("request_id", job.request_id());
    auto out = stage_.NewOutbox();
    out.Reject(call->in,
               core::MakeProblem("internal_error", "The invocation could not be routed."));
    out.Send();
    return;
  }
  // A grant id billing cannot key a budget by would let the call past the grant's cap.
  if (!job.principal().grant_id().empty() && GrantIdOf(job.principal()).empty()) {
    log::Error("invoke job with a grant id that is not a UUID").Str("request_id", job.request_id());
    auto out = stage_.NewOutbox();
    out.Reject(call->in,
               core::MakeProblem("internal_error", "The invocation could not be billed."));
    out.Send();
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
  hold.edge_reply = call->in.reply;
  hold.traceparent = call->in.span->traceparent();
  hold.runtime = std::string(core::RuntimeName(job.function().runtime()));
  hold.compute_type = std::string(core::ComputeTypeName(job.function().compute_type()));
  hold.created_ms = NowMs();
  hold.expiry_ms = hold.created_ms + job.function().timeout_ms() + config_.hold_grace_ms;
  hold.budgets = BudgetsFor(job.principal());
  hold.estimate = job.estimate_only();
  if (job.respond_async() && !hold.estimate) {
    // Queued: counted against the organization's queue rather than its concurrency limit, and
    // presumed abandoned only once it could have waited its longest and then run. No edge waits
    // for it (an empty edge_reply marks an asynchronous hold).
    hold.queued = true;
    hold.edge_reply.clear();
    hold.expiry_ms += config_.async_max_queued_ms;
    if (!async_ || !async_->started()) {
      auto out = stage_.NewOutbox();
      out.Reject(call->in, core::MakeProblem("service_unavailable",
                                             "Asynchronous calls are unavailable right now (the "
                                             "execution queue cannot be reached); retry shortly, "
                                             "or call without Prefer: respond-async."));
      out.Send();
      return;
    }
  }

  // Before anything is held: the caller's ceiling on what this call may cost.
  if (auto problem = MaxCostProblem(hold.amount_micro_usd, job.max_cost_micro_usd())) {
    auto out = stage_.NewOutbox();
    out.Reject(call->in, std::move(*problem));
    out.Send();
    return;
  }
  if (NeedsState(*call)) {
    // The state row is claimed first (PostgreSQL: off the delivery thread): a repeated
    // Idempotency-Key is answered from it without a hold.
    std::shared_ptr<Call> shared(std::move(call));
    pool_.Submit([this, shared] {
      if (!Claim(*shared)) return;
      WithLimits(std::make_unique<Call>(std::move(*shared)));
    });
    return;
  }
  WithLimits(std::move(call));
}

bool InvokeStage::NeedsState(const Call& call) const {
  return states_ && !call.hold.estimate &&
         (call.in.job.respond_async() || !call.in.job.idempotency_key().empty());
}

bool InvokeStage::Claim(Call& call) {
  const v1::InvokeJob& job = call.in.job;
  NewExecutionState state;
  state.execution_id = job.execution_id();
  state.org_id = call.hold.org_id;
  state.function_id = job.function().function_id();
  state.version = job.function().version();
  state.key_id = job.principal().key_id();
  state.async = job.respond_async();
  state.idempotency_key = job.idempotency_key();
  state.request_sha256 = job.request_sha256();
  state.deadline_ms = call.hold.expiry_ms;
  state.callback_url = job.respond_async() ? job.callback_url() : std::string();
  auto out = stage_.NewOutbox();
  if (!state.callback_url.empty()) {
    if (auto refused = CallbackRefusal(state.callback_url, state.org_id)) {
      out.Reject(call.in, std::move(*refused));
      out.Send();
      return false;
    }
  }
  auto claimed = states_->Claim(state, now_ms_());
  if (!claimed.ok()) {
    if (claimed.status().code() == Status::Code::kConflict) {
      log::Warn("duplicate invoke job ignored").Str("execution_id", job.execution_id());
      return false;
    }
    log::Error("execution state not claimed").Str("error", claimed.status().ToString());
    out.Reject(call.in, Unavailable());
    out.Send();
    return false;
  }
  switch (claimed->kind) {
    case ClaimOutcome::Kind::kClaimed:
      call.state_claimed = true;
      return true;
    case ClaimOutcome::Kind::kMismatch:
      out.Reject(call.in,
                 core::MakeProblem("idempotency_key_reused",
                                   "This Idempotency-Key was used by your organization in the last "
                                   "24 hours for another request (execution " +
                                       claimed->first.execution_id +
                                       "); use a new key for a new request. Nothing ran."));
      break;
    case ClaimOutcome::Kind::kRepeat:
      out.Reply(call.in, RepeatReply(claimed->first));
      break;
  }
  out.Send();
  return false;
}

std::optional<v1::Problem> InvokeStage::CallbackRefusal(const std::string& url,
                                                        const std::string& org_id) {
  if (std::string why = webhook::UrlRefusal(url, config_.callback_targets); !why.empty()) {
    return core::MakeProblem("invalid_callback_url",
                             "X-Callback-Url is not accepted: " + why +
                                 ". Callbacks go to http or https URLs of public hosts.");
  }
  if (secrets_ == nullptr) return Unavailable();
  auto secret = secrets_->Signing(org_id);
  if (!secret.ok()) return Unavailable();
  if (!secret->has_value()) {
    return core::MakeProblem("callback_secret_missing",
                             "Callbacks are signed with your organization's webhook secret, and "
                             "it has none yet: make it with POST /api/v1/webhooks/secret (it is "
                             "shown once), then call again. Nothing was run or held.");
  }
  return std::nullopt;
}

void InvokeStage::ForgetState(const Call& call) {
  if (!call.state_claimed) return;
  pool_.Submit([this, id = call.hold.execution_id] {
    Status forgotten = states_->Forget(id);
    if (!forgotten.ok()) {
      // Its deadline ends it as lost instead; the key stays used until then.
      log::Warn("refused call's state not forgotten").Str("execution_id", id);
    }
  });
}

void InvokeStage::WithLimits(CallPtr call) {
  HoldRecord& hold = call->hold;
  if (auto settings = budget_settings_.Find(hold.org_id, hold.key_id)) {
    QueueWithLimits(std::move(call), *settings);
    return;
  }
  // A miss reads PostgreSQL: off the delivery thread.
  std::shared_ptr<Call> shared(std::move(call));
  pool_.Submit([this, shared] {
    auto settings = budget_settings_.Load(shared->hold.org_id, shared->hold.key_id);
    if (!settings.ok()) {
      log::Error("spending limits not read").Str("error", settings.status().ToString());
      auto out = stage_.NewOutbox();
      out.Reject(shared->in, Unavailable());
      out.Send();
      return;
    }
    QueueWithLimits(std::make_unique<Call>(std::move(*shared)), *settings);
  });
}

void InvokeStage::QueueWithLimits(CallPtr call, const CallBudgetSettings& settings) {
  HoldRecord& hold = call->hold;
  for (Budget& b : PeriodBudgetsFor(settings, hold.org_id, hold.key_id, now_ms_())) {
    hold.budgets.push_back(std::move(b));
  }
  // Kept to answer with, should the queue refuse the call (it is stopping).
  const std::string edge_reply = call->in.reply;
  const std::string traceparent = hold.traceparent;
  const int64_t key_expires_at_ms = call->in.job.principal().key_expires_at_ms();
  if (!holds_.Push(std::move(call))) {
    auto out = stage_.NewOutbox();
    out.Answer(edge_reply, key_expires_at_ms, traceparent, Unavailable());
    out.Send();
  }
}

void InvokeStage::HoldBatch(std::vector<CallPtr> batch) {
  std::vector<const HoldRecord*> holds;
  holds.reserve(batch.size());
  for (const CallPtr& call : batch) holds.push_back(&call->hold);
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
  auto out = stage_.NewOutbox();
  for (size_t i = 0; i < batch.size(); ++i) {
    if (!outcomes[i].ok()) {
      out.Reject(batch[i]->in, Unavailable());
      continue;
    }
    if (outcomes[i]->verdict == HoldVerdict::kBalanceNotLoaded ||
        outcomes[i]->verdict == HoldVerdict::kBudgetNotLoaded) {
      // Rare (the organization's first call since Redis lost or never had its balance, a grant's
      // first call): the load reads PostgreSQL, so it runs on the pool rather than stalling
      // this batch's peers.
      std::shared_ptr<Call> call = std::move(batch[i]);
      pool_.Submit([this, call] {
        auto alone = stage_.NewOutbox();
        Proceed(*call, PlaceHold(call->hold), alone);
        alone.Send();
      });
      continue;
    }
    Proceed(*batch[i], outcomes[i], out);
  }
  out.Send();
}

void InvokeStage::Proceed(Call& call, const Result<HoldOutcome>& outcome,
                          core::ChainStage::Outbox& out) {
  v1::InvokeJob& job = call.in.job;
  const HoldRecord& hold = call.hold;
  if (!outcome.ok()) {
    log::Error("hold failed").Str("error", outcome.status().ToString());
    // Redis may have applied the hold and lost only its reply: undo it (a no-op when nothing
    // was held), or leave it to the reaper if Redis is still unreachable.
    balances_.Release(hold.execution_id, hold.org_id, ReleaseMode::kDelete);
    ForgetState(call);
    out.Reject(call.in, Unavailable());
    return;
  }
  if (outcome->verdict == HoldVerdict::kAlreadyHeld) {
    log::Warn("duplicate invoke job ignored").Str("execution_id", job.execution_id());
    return;
  }
  if (auto problem = ProblemFor(*outcome, hold, config_.limits)) {
    ForgetState(call);
    out.Reject(call.in, std::move(*problem));
    return;
  }
  if (hold.estimate) {
    out.Estimated(call.in, EstimateOf(hold, *outcome, FeeFor(job)));
    return;
  }
  v1::Hold* held = job.mutable_hold();
  held->set_amount_micro_usd(hold.amount_micro_usd);
  held->set_function_micro_usd(FeeFor(job));
  held->set_available_micro_usd(outcome->available_after_micro_usd);
  if (outcome->tightest_budget && *outcome->tightest_budget < hold.budgets.size()) {
    held->set_budget_remaining_micro_usd(outcome->budget_remaining_micro_usd);
    held->set_budget_limit(std::string(BudgetLimitName(hold.budgets[*outcome->tightest_budget])));
  }
  if (hold.queued) {
    // JetStream's ack is waited for: on the pool, not the hold thread.
    core::RecordHop(job, *call.in.span);
    job.set_traceparent(call.in.span->traceparent());
    job.clear_edge_reply();
    std::shared_ptr<Call> shared = std::make_shared<Call>(std::move(call));
    pool_.Submit([this, shared] { QueueAsync(*shared); });
    return;
  }
  // Should the job not leave, its hold is released at once rather than by the reaper.
  out.Forward(call.in, call.exec_subject, UnservedSubject(job.execution_id()),
              [this, id = hold.execution_id, org = hold.org_id] {
                auto released = balances_.Release(id, org, ReleaseMode::kDelete);
                if (!released.ok()) log::Warn("hold left to the reaper").Str("execution_id", id);
              });
}

void InvokeStage::QueueAsync(Call& call) {
  const HoldRecord& hold = call.hold;
  auto out = stage_.NewOutbox();
  Status queued = async_->Enqueue(call.in.job);
  if (!queued.ok()) {
    log::Error("asynchronous call not queued")
        .Str("execution_id", hold.execution_id)
        .Str("error", queued.ToString());
    auto released = balances_.Release(hold.execution_id, hold.org_id, ReleaseMode::kDelete);
    if (!released.ok()) log::Warn("hold left to the reaper").Str("execution_id", hold.execution_id);
    ForgetState(call);
    out.Reject(call.in, Unavailable());
    out.Send();
    return;
  }
  v1::InvokeReply reply;
  reply.mutable_accepted()->set_execution_id(hold.execution_id);
  reply.mutable_accepted()->set_status("queued");
  out.Reply(call.in, std::move(reply));
  out.Send();
}

v1::InvokeReply RepeatReply(const ExecutionState& first) {
  v1::InvokeReply reply;
  if (first.reply && IsFinal(first.status)) {
    reply = *first.reply;
  } else {
    reply.mutable_accepted()->set_execution_id(first.execution_id);
    // Still under way, or cancelled before it started (which left no answer).
    reply.mutable_accepted()->set_status(std::string(ExecutionStatusName(first.status)));
  }
  reply.set_replayed(true);
  return reply;
}

Result<HoldOutcome> InvokeStage::PlaceHold(const HoldRecord& hold) {
  for (size_t attempt = 1;; ++attempt) {
    auto outcome = balances_.Hold(hold);
    if (!outcome.ok() || attempt == HoldAttempts(hold)) return outcome;
    Status loaded;
    if (outcome->verdict == HoldVerdict::kBalanceNotLoaded) {
      loaded = LoadBalances(balances_, ledger_, {hold.org_id});
    } else if (outcome->verdict == HoldVerdict::kBudgetNotLoaded) {
      loaded = LoadBudget(balances_, ledger_, hold.budgets[outcome->budget]);
    } else {
      return outcome;
    }
    if (!loaded.ok()) return loaded;
  }
}

}  // namespace toolgate::billing
