// JobExecutor: one InvokeJob in, one v1::ExecutionResult out.
//
// It gets the version's code (or, for a bundle version, its unpacked bundle), opens the call's
// sealed secrets, runs the version's runtime and reports the outcome in billing's terms:
// handler_ran with the handler's response (its 500s included, which are charged), or
// handler_ran=false with a problem, nothing charged: 408 timeout, or 502 executor_failure when the
// platform failed (no code in the registry, secrets that do not open, a runtime this executor
// lacks). The secrets are wiped as soon as the runtime returns.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "toolgate/bus/service.h"
#include "toolgate/executor/bundle_cache.h"
#include "toolgate/executor/code_store.h"
#include "toolgate/executor/dispatch_notices.h"
#include "toolgate/executor/executor_keys.h"
#include "toolgate/executor/fair_scheduler.h"
#include "toolgate/executor/runtime.h"
#include "toolgate/executor/settler.h"
#include "toolgate/v1/toolgate.pb.h"

namespace toolgate::executor {

// Limits a version left at 0 (the registry always sets them; contract section 5 defaults).
constexpr int64_t kDefaultTimeoutMs = 30000;
constexpr int64_t kDefaultMemoryMb = 128;

class JobExecutor {
 public:
  // Every argument must outlive the executor. runtimes: the runtimes this executor serves.
  // bundles: where bundle versions' files come from (null: a bundle version is a 502).
  JobExecutor(const ExecutorKeys& keys, CodeStore& code, std::vector<Runtime*> runtimes,
              BundleCache* bundles = nullptr)
      : keys_(keys), code_(code), runtimes_(std::move(runtimes)), bundles_(bundles) {}

  // The result of running job; job comes back in it without its sealed secrets. traceparent
  // goes with the registry request. For a job with stream_notices and an edge_reply, each notice
  // of its handler within the bounds (NoticeLimits) goes to send as it is made, before Execute
  // returns: an InvokeReply{notice} with the version's timeout_ms, to job.edge_reply(), with
  // traceparent. send may be empty (no notices are then asked of the handler). Thread-safe.
  v1::ExecutionResult Execute(v1::InvokeJob job, std::string_view traceparent,
                              const DispatchNotices::Send& send = {});

  const std::vector<Runtime*>& runtimes() const { return runtimes_; }

  // tg.exec.cancel: stops the call of execution_id if it runs here (its sandbox is killed; it
  // is settled cancelled and charged for the time it ran), or keeps it from starting if its job
  // waits here for a slot. True when a call running here was stopped. Thread-safe.
  bool Cancel(const std::string& execution_id) { return running_.Cancel(execution_id); }

 private:
  ExecutionOutcome Run(const v1::InvokeJob& job, std::string_view traceparent,
                       const DispatchNotices::Send& send, const CancelSignal* cancel);

  const ExecutorKeys& keys_;
  CodeStore& code_;
  std::vector<Runtime*> runtimes_;
  BundleCache* bundles_;
  RunningCalls running_;
};

// The result of a job that waited waited_ms for an execution slot without getting one: 503
// no_capacity with Retry-After, the handler not run, nothing charged.
v1::ExecutionResult NoCapacityResult(v1::InvokeJob job, int64_t waited_ms);

// Serves tg.exec.<pool>.<runtime> for every runtime of executor, in queue group
// "executor-<pool>-<runtime>", on scheduler's slots (never on the NATS delivery thread), fairly
// across the callers' organizations. Each job runs under a span "executor.<runtime>" continuing
// the incoming traceparent, and its result is settled on tg.billing.settle.<execution_id> with
// the span's traceparent (held to travel with the next result while jobs are queued:
// Settler::SettleSoon); a job expired by the scheduler is settled as NoCapacityResult. The
// handler's notices go to the edge through notices.SendNow as they are made; a job that sent any
// is settled only after notices.FlushSent, so that its result (through billing) cannot reach
// the edge before them.
// notices hears of each job's arrival and end. service, executor, settler, notices and scheduler
// must outlive the subscriptions.
// It also serves tg.exec.cancel (every replica, no queue group): JobExecutor::Cancel.
Status ServeJobs(bus::Service& service, const std::string& pool, JobExecutor& executor,
                 Settler& settler, DispatchNotices& notices, FairScheduler& scheduler);

}  // namespace toolgate::executor
