#include "toolgate/billing/async_queue.h"

#include <algorithm>
#include <chrono>

#include "toolgate/base/log.h"
#include "toolgate/base/time.h"
#include "toolgate/core/problem.h"
#include "toolgate/core/subjects.h"
#include "toolgate/metrics/metrics.h"

namespace toolgate::billing {
namespace {

// Jobs taken from the stream at once, and how long a fetch waits for the first.
constexpr int kFetchBatch = 32;
constexpr int kFetchWaitMs = 1000;
// A job whose organization has its concurrency limit in flight is offered again after this,
// growing with each delivery up to the most.
constexpr int64_t kWaitStepMs = 250;
constexpr int64_t kMaxWaitMs = 2000;
// How long after its send a job can still come back as unserved (the server's notice is
// immediate; this only bounds the cache).
constexpr int64_t kSentMemoryMs = 30'000;
constexpr int kSweepBatch = 500;
// Finished states are deleted at most this often (each sweep would otherwise scan for them).
constexpr int64_t kRetentionSweepMs = 10 * 60 * 1000;

metrics::Counter& Dispatches(const char* outcome) {
  static auto& family = metrics::Registry::Global().Counter(
      "toolgate_async_dispatches_total",
      "Asynchronous executions taken from the queue, by outcome: started, waiting (their "
      "organization's concurrency limit), gone (cancelled or expired), duplicate, requeued "
      "(no executor took them) or error.",
      {"outcome"});
  return family.With({outcome});
}

// The queue's gauges, registered when the first AsyncQueue is made (served as 0 until the first
// sweep), so that the alert rules always find them.
struct QueueGauges {
  metrics::Gauge& depth;
  metrics::Gauge& oldest;
};

QueueGauges& Gauges() {
  static QueueGauges gauges{
      metrics::Registry::Global()
          .Gauge("toolgate_async_queued_executions",
                 "Asynchronous executions waiting in the queue (accepted, not started).")
          .With({}),
      metrics::Registry::Global()
          .Gauge("toolgate_async_oldest_queued_seconds",
                 "How long the oldest asynchronous execution still queued has waited (0: none).")
          .With({})};
  return gauges;
}

}  // namespace

v1::InvokeReply LostExecutionReply() {
  v1::InvokeReply reply;
  *reply.mutable_problem() = core::MakeProblem(
      "execution_lost",
      "The execution did not finish: it waited in the queue past the limit, or the platform lost "
      "it while it ran. Nothing was charged; run it again.");
  return reply;
}

AsyncQueue::AsyncQueue(bus::Bus& bus, BalanceStore& balances, ExecutionStates& states,
                       const Config& config, std::function<int64_t()> now_ms)
    : bus_(bus),
      balances_(balances),
      states_(states),
      config_(config),
      now_ms_(now_ms ? std::move(now_ms) : [] { return NowMs(); }) {
  Gauges();
}

AsyncQueue::~AsyncQueue() {
  Stop();
}

Status AsyncQueue::Start() {
  if (started_.load()) return Status::Ok();
  auto js = bus::JetStream::Open(bus_);
  if (!js.ok()) return js.status();
  bus::StreamSpec stream;
  stream.name = core::kAsyncStream;
  stream.subjects = {core::kAsyncQueueSubjects};
  stream.replicas = static_cast<int>(config_.async_stream_replicas);
  // A job older than this has expired in the queue anyway (its hold with it).
  stream.max_age_ms = config_.async_max_queued_ms + 3600'000;
  if (Status s = (*js)->EnsureStream(stream); !s.ok()) return s;
  bus::ConsumerSpec consumer;
  consumer.stream = core::kAsyncStream;
  consumer.durable = core::kAsyncDispatchConsumer;
  consumer.ack_wait_ms = 30'000;
  consumer.max_ack_pending = 1000;
  auto bound = (*js)->Consumer(consumer);
  if (!bound.ok()) return bound.status();
  js_ = std::move(*js);
  consumer_ = std::move(*bound);
  stopping_.store(false);
  started_.store(true);
  dispatcher_ = std::thread([this] { DispatchLoop(); });
  sweep_ = std::make_unique<net::PeriodicTask>(
      std::chrono::milliseconds(config_.reaper_interval_ms), [this] { Sweep(); });
  return Status::Ok();
}

void AsyncQueue::Stop() {
  if (!started_.exchange(false)) return;
  stopping_.store(true);
  if (dispatcher_.joinable()) dispatcher_.join();
  sweep_.reset();
}

int64_t AsyncQueue::RunningDeadlineMs(const v1::InvokeJob& job, int64_t now_ms) const {
  return now_ms + job.function().timeout_ms() + config_.hold_grace_ms;
}

Status AsyncQueue::Enqueue(const v1::InvokeJob& job) {
  if (!started_.load() || !js_) return Status::Unavailable("the execution queue is not available");
  return js_->Publish(core::AsyncQueueSubject(job.principal().org_id()), job.SerializeAsString(),
                      job.execution_id(), job.traceparent());
}

void AsyncQueue::DispatchLoop() {
  while (!stopping_.load()) {
    auto fetched = consumer_->Fetch(kFetchBatch, kFetchWaitMs);
    if (!fetched.ok()) {
      // NATS is away (restarting): the client reconnects; try again shortly.
      log::Warn("async queue fetch failed").Str("error", fetched.status().ToString());
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
      continue;
    }
    for (bus::QueuedMessage& message : *fetched) Dispatch(message);
  }
}

void AsyncQueue::Dispatch(bus::QueuedMessage& message) {
  v1::InvokeJob job;
  auto exec_subject =
      job.ParseFromString(message.data())
          ? core::ExecSubject(job.function().compute_type(), job.function().runtime())
          : std::nullopt;
  if (!exec_subject || !core::IsValidExecutionId(job.execution_id())) {
    log::Error("unreadable job in the execution queue")
        .Int("stream_sequence", static_cast<int64_t>(message.stream_sequence()));
    message.Term();
    return;
  }
  const std::string& id = job.execution_id();
  const std::string& org = job.principal().org_id();
  const int64_t now = now_ms_();
  const int64_t deadline = RunningDeadlineMs(job, now);
  auto started = balances_.Start(id, org, deadline);
  if (!started.ok()) {
    Dispatches("error").Inc();
    log::Warn("async dispatch deferred")
        .Str("execution_id", id)
        .Str("error", started.status().ToString());
    message.Nak(kMaxWaitMs);
    return;
  }
  switch (*started) {
    case StartVerdict::kWait:
      Dispatches("waiting").Inc();
      message.Nak(
          std::min<int64_t>(kMaxWaitMs, kWaitStepMs * static_cast<int64_t>(message.delivered())));
      return;
    case StartVerdict::kGone: {
      // Cancelled (its state is final already) or expired in the queue (ended here).
      Dispatches("gone").Inc();
      auto failed = states_.Fail(id, LostExecutionReply());
      if (!failed.ok()) {
        message.Nak(kMaxWaitMs);
        return;
      }
      message.Ack();
      return;
    }
    case StartVerdict::kStartedBefore:
      // A dispatcher started it and died before its ack: it may have reached an executor, so it
      // is never sent again (its result settles it, or the sweep ends it).
      Dispatches("duplicate").Inc();
      message.Ack();
      return;
    case StartVerdict::kStarted:
      break;
  }
  auto running = states_.MarkRunning(id, deadline);
  if (!running.ok() || !*running) {
    if (running.ok()) {
      // Cancelled between the hold's start and now: its hold goes.
      Dispatches("gone").Inc();
      balances_.Release(id, org, ReleaseMode::kDelete);
      message.Ack();
    } else {
      Dispatches("error").Inc();
      balances_.Unstart(id, org);
      message.Nak(kMaxWaitMs);
    }
    return;
  }
  auto sent = std::make_shared<Sent>();
  sent->job = message.data();
  sent_.Put(id, sent, (MonotonicUs() / 1000) + kSentMemoryMs, sent_.generation());
  Status published =
      bus_.Publish(*exec_subject, message.data(), core::UnservedSubject(id), job.traceparent());
  if (!published.ok()) {
    Dispatches("error").Inc();
    balances_.Unstart(id, org);
    states_.MarkQueued(id, now + config_.async_max_queued_ms);
    message.Nak(kMaxWaitMs);
    return;
  }
  Dispatches("started").Inc();
  message.Ack();
}

void AsyncQueue::Unserved(const std::string& execution_id, const std::string& org_id) {
  auto sent = sent_.Get(execution_id, (MonotonicUs() / 1000));
  if (!sent) {
    // Not sent from here lately: nothing to put back. Its deadline ends it.
    log::Warn("unserved asynchronous job unknown here").Str("execution_id", execution_id);
    return;
  }
  auto unstarted = balances_.Unstart(execution_id, org_id);
  if (!unstarted.ok() || !*unstarted) return;
  const int64_t now = now_ms_();
  states_.MarkQueued(execution_id, now + config_.async_max_queued_ms);
  auto again = std::make_shared<Sent>(**sent);
  ++again->requeues;
  sent_.Put(execution_id, again, (MonotonicUs() / 1000) + kSentMemoryMs, sent_.generation());
  v1::InvokeJob job;
  job.ParseFromString(again->job);
  // Its own message id: the first one's is still in the stream's duplicate window.
  Status stored =
      js_->Publish(core::AsyncQueueSubject(org_id), again->job,
                   execution_id + "." + std::to_string(again->requeues), job.traceparent());
  if (!stored.ok()) {
    log::Error("unserved asynchronous job not queued again")
        .Str("execution_id", execution_id)
        .Str("error", stored.ToString());
    return;
  }
  Dispatches("requeued").Inc();
}

void AsyncQueue::Sweep() {
  const int64_t now = now_ms_();
  if (auto queued = states_.Queued(now); queued.ok()) {
    Gauges().depth.Set(static_cast<double>(queued->count));
    Gauges().oldest.Set(static_cast<double>(queued->oldest_age_ms) / 1000.0);
  }
  auto lost = states_.SweepLost(now, LostExecutionReply(), kSweepBatch);
  if (!lost.ok()) {
    log::Warn("execution sweep failed").Str("error", lost.status().ToString());
  } else if (!lost->empty()) {
    log::Warn("executions lost").Int("count", static_cast<int64_t>(lost->size()));
  }
  if (now - last_retention_ms_ < kRetentionSweepMs) return;
  last_retention_ms_ = now;
  auto deleted = states_.DeleteFinishedBefore(now - config_.execution_retention_ms);
  if (!deleted.ok())
    log::Warn("execution retention failed").Str("error", deleted.status().ToString());
}

}  // namespace toolgate::billing
