#include "toolgate/executor/job_executor.h"

#include <optional>

#include "toolgate/base/log.h"
#include "toolgate/core/invoke_stage.h"
#include "toolgate/core/problem.h"
#include "toolgate/core/runtime_names.h"
#include "toolgate/core/subjects.h"
#include "toolgate/trace/trace.h"

namespace toolgate::executor {
namespace {

ExecutionOutcome PlatformFailure(std::string what) {
  ExecutionOutcome out;
  out.kind = ExecutionOutcome::Kind::kPlatformFailure;
  out.failure = std::move(what);
  return out;
}

// What a call cancelled while it ran answers (nginx's "client closed request": the handler gave
// no answer of its own).
constexpr int kCancelledStatus = 499;

}  // namespace

ExecutionOutcome JobExecutor::Run(const v1::InvokeJob& job, std::string_view traceparent,
                                  const DispatchNotices::Send& send, const CancelSignal* cancel) {
  // Cancelled while it waited for its slot: it never starts.
  if (cancel != nullptr && cancel->cancelled()) {
    ExecutionOutcome out;
    out.kind = ExecutionOutcome::Kind::kCancelledBeforeStart;
    return out;
  }
  const v1::FunctionVersion& fn = job.function();
  Runtime* runtime = nullptr;
  for (Runtime* r : runtimes_) {
    if (r->name() == core::RuntimeName(fn.runtime())) runtime = r;
  }
  if (runtime == nullptr) {
    return PlatformFailure("this executor has no runtime " +
                           std::string(core::RuntimeName(fn.runtime())));
  }

  Invocation inv;
  Code code;
  std::string handler;
  if (!fn.bundle_digest().empty()) {
    if (bundles_ == nullptr) return PlatformFailure("this executor keeps no bundles");
    auto bundle = bundles_->Get(fn.bundle_digest(), fn.function_id(), fn.version(), traceparent);
    if (!bundle.ok()) {
      return PlatformFailure("cannot get the bundle: " + bundle.status().ToString());
    }
    inv.bundle = std::move(*bundle);
    inv.bundle_root = inv.bundle->dir;
    handler =
        fn.handler().empty() ? DefaultBundleHandler(core::RuntimeName(fn.runtime())) : fn.handler();
    inv.handler = handler;
  } else {
    auto got = code_.Get(fn.function_id(), fn.version(), traceparent);
    if (!got.ok()) return PlatformFailure("cannot get the code: " + got.status().ToString());
    code = std::move(*got);
    inv.code = *code;
  }
  auto env = keys_.Open(job.sealed_env());
  if (!env.ok()) return PlatformFailure("cannot open the secrets: " + env.status().ToString());

  inv.event_json = job.event_json();
  inv.execution_id = job.execution_id();
  inv.function_id = fn.function_id();
  inv.version = fn.version();
  inv.caller_org_id = job.principal().org_id();
  inv.timeout_ms = fn.timeout_ms() > 0 ? fn.timeout_ms() : kDefaultTimeoutMs;
  inv.memory_mb = fn.memory_mb() > 0 ? fn.memory_mb() : kDefaultMemoryMb;
  inv.env = (*env)->vars();
  // The registry accepted the declaration at publish time; one it would refuse now (the rules
  // grew stricter) allows nothing rather than failing the call.
  std::vector<std::string> entries(fn.egress().begin(), fn.egress().end());
  auto egress = core::EgressList::Parse(entries);
  if (!egress.ok()) {
    log::Warn("a version's egress list no longer parses; it allows nothing")
        .Str("function_id", fn.function_id())
        .Str("version", fn.version())
        .Str("error", egress.status().message());
  }
  const core::EgressList allowed = egress.ok() ? std::move(*egress) : core::EgressList();
  inv.egress = &allowed;
  inv.cancel = cancel;
  // Each notice goes out as the handler makes it, on this thread: in order, and all of them
  // before the result, which is sent only once Run returns. A job without stream_notices (nearly
  // all) pays for none of it.
  const std::string& edge_reply = job.edge_reply();
  const std::string trace(job.stream_notices() ? traceparent : std::string_view());
  const int32_t timeout_ms = static_cast<int32_t>(inv.timeout_ms);
  std::optional<BoundedNoticeSink> sink;
  if (job.stream_notices() && send && !edge_reply.empty()) {
    sink.emplace([&](const Notice& notice) {
      v1::InvokeReply reply;
      v1::HandlerNotice* n = reply.mutable_notice();
      n->set_timeout_ms(timeout_ms);
      if (notice.kind == Notice::Kind::kProgress) {
        v1::ProgressNotice* p = n->mutable_progress();
        p->set_progress(notice.progress);
        p->set_total(notice.total);
        p->set_has_total(notice.has_total);
        p->set_message(ToValidUtf8(notice.message));
      } else {
        v1::LogNotice* l = n->mutable_log();
        l->set_level(notice.level);
        l->set_data_json(ToValidUtf8(notice.data_json));
        l->set_logger(ToValidUtf8(notice.logger));
      }
      send(edge_reply, reply.SerializeAsString(), trace);
    });
    inv.notices = &*sink;
  }
  return runtime->Run(inv);  // then env goes out of scope, wiping the secret values
}

v1::ExecutionResult JobExecutor::Execute(v1::InvokeJob job, std::string_view traceparent,
                                         const DispatchNotices::Send& send) {
  std::shared_ptr<CancelSignal> cancel = running_.Begin(job.execution_id());
  ExecutionOutcome outcome = Run(job, traceparent, send, cancel.get());
  running_.End(job.execution_id());
  v1::ExecutionResult result;
  result.set_runtime_ms(outcome.runtime_ms);
  result.set_cpu_ms(outcome.cpu_ms);
  result.set_memory_used_mb(outcome.memory_used_mb);
  result.set_logs(std::move(outcome.logs));
  for (EgressRecord& request : outcome.egress.requests) {
    v1::EgressRequest* r = result.add_egress();
    r->set_method(std::move(request.method));
    r->set_host(ToValidUtf8(request.host));
    r->set_port(request.port);
    r->set_address(std::move(request.address));
    r->set_status(request.status);
    r->set_bytes_sent(request.bytes_sent);
    r->set_bytes_received(request.bytes_received);
    r->set_ms(request.ms);
    r->set_refused(std::move(request.refused));
  }
  result.set_egress_bytes(outcome.egress.bytes);
  switch (outcome.kind) {
    case ExecutionOutcome::Kind::kCompleted:
      result.set_handler_ran(true);
      result.set_status_code(outcome.status_code);
      result.set_body(std::move(outcome.body));
      break;
    case ExecutionOutcome::Kind::kTimeout: {
      int64_t timeout_ms =
          job.function().timeout_ms() > 0 ? job.function().timeout_ms() : kDefaultTimeoutMs;
      *result.mutable_problem() =
          core::MakeProblem("timeout", "The handler ran past its timeout_ms of " +
                                           std::to_string(timeout_ms) + " ms.");
      result.set_status_code(result.problem().status());
      break;
    }
    case ExecutionOutcome::Kind::kCancelled:
      // Stopped while it ran: charged for that time, as any handler that ran.
      result.set_handler_ran(true);
      result.set_cancelled(true);
      result.set_status_code(kCancelledStatus);
      result.set_body(
          R"({"errorType":"Cancelled","errorMessage":"the call was cancelled while it ran"})");
      break;
    case ExecutionOutcome::Kind::kCancelledBeforeStart:
      result.set_cancelled(true);
      *result.mutable_problem() = core::MakeProblem(
          "execution_cancelled",
          "The call was cancelled before its handler started; nothing was charged.");
      result.set_status_code(result.problem().status());
      break;
    case ExecutionOutcome::Kind::kPlatformFailure:
      log::Error("execution failed on the platform")
          .Str("execution_id", job.execution_id())
          .Str("function_id", job.function().function_id())
          .Str("version", job.function().version())
          .Str("error", outcome.failure);
      *result.mutable_problem() = core::MakeProblem(
          "executor_failure",
          "The platform could not run the function; nothing was charged. Try again.");
      result.set_status_code(result.problem().status());
      break;
  }
  job.clear_sealed_env();
  *result.mutable_job() = std::move(job);
  return result;
}

v1::ExecutionResult NoCapacityResult(v1::InvokeJob job, int64_t waited_ms) {
  v1::ExecutionResult result;
  v1::Problem* p = result.mutable_problem();
  *p = core::MakeProblem("no_capacity",
                         "Every execution slot this organization may use stayed busy for " +
                             std::to_string(waited_ms) +
                             " ms; nothing was charged. Retry after Retry-After seconds.");
  p->set_retry_after_s(1);
  result.set_status_code(p->status());
  job.clear_sealed_env();
  *result.mutable_job() = std::move(job);
  return result;
}

Status ServeJobs(bus::Service& service, const std::string& pool, JobExecutor& executor,
                 Settler& settler, DispatchNotices& notices, FairScheduler& scheduler) {
  for (Runtime* runtime : executor.runtimes()) {
    std::string name(runtime->name());
    std::string subject = core::ExecSubject(pool, name);
    std::string span_name = "executor." + name;
    // Arrival is noted on the delivery thread, so that time queued for a slot counts towards
    // the dispatch notice; the run itself happens on a slot of the scheduler.
    Status s = service.HandleInline(
        subject, "executor-" + pool + "-" + name,
        [&executor, &settler, &notices, &scheduler, span_name](bus::Message&& m) {
          // What the run and the expiry share; exactly one of them happens.
          struct Queued {
            v1::InvokeJob job;
            trace::TraceContext parent;
            uint64_t ticket = 0;
            std::string reply;
          };
          auto q = std::make_shared<Queued>();
          if (!q->job.ParseFromString(m.data)) {
            log::Error("dropped a message that is not an InvokeJob").Str("subject", m.subject);
            return;
          }
          q->parent =
              trace::ContinueOrStart(m.traceparent.empty() ? q->job.traceparent() : m.traceparent);
          q->ticket = notices.Arrived(q->job, q->parent.ToTraceparent());
          // The job's NATS reply subject belongs to billing's "no responders" notices; results
          // go to the settle subject, which any billing replica serves.
          q->reply = core::SettleSubject(q->job.execution_id());
          const std::string org = q->job.principal().org_id();
          const int64_t timeout_ms = scheduler.options().queue_timeout_ms;
          scheduler.Submit(
              org,
              [&executor, &settler, &notices, &scheduler, span_name, q] {
                trace::Span span(q->parent, span_name);
                core::AnnotateStageSpan(span, q->job);
                span.SetAttribute("faas.name", q->job.function_id());
                span.SetAttribute("faas.version", q->job.function().version());
                std::string traceparent = span.traceparent();
                q->job.set_traceparent(traceparent);
                bool notified = false;
                v1::ExecutionResult result = executor.Execute(
                    std::move(q->job), traceparent,
                    [&notices, &notified](const std::string& edge_reply, const std::string& reply,
                                          const std::string& tp) {
                      notices.SendNow(edge_reply, reply, tp);
                      notified = true;
                    });
                core::RecordHop(*result.mutable_job(), span);
                notices.Done(q->ticket);
                // The settler has a connection of its own: the handler's notices must have
                // reached the server before the result leaves on it.
                if (notified) notices.FlushSent();
                // A slot that goes straight on to a queued job lets its result wait for the
                // next one (Settler::SettleSoon, bounded): under load, one message for many.
                if (scheduler.stats().queued > 0) {
                  settler.SettleSoon(q->reply, result, traceparent);
                } else {
                  settler.Settle(q->reply, result, traceparent);
                }
              },
              [&settler, &notices, q, timeout_ms] {
                trace::Span span(q->parent, "executor.no_capacity");
                core::AnnotateStageSpan(span, q->job);
                std::string traceparent = span.traceparent();
                log::Warn("a job waited too long for an execution slot")
                    .Str("execution_id", q->job.execution_id())
                    .Str("org_id", q->job.principal().org_id());
                v1::ExecutionResult result = NoCapacityResult(std::move(q->job), timeout_ms);
                notices.Done(q->ticket);
                settler.Settle(q->reply, result, traceparent);
              });
        });
    if (!s.ok()) return s;
  }
  // Every replica hears every cancel (no queue group): the one running the call stops it.
  return service.Handle(core::kCancelExecutionSubject, "", [&executor](bus::Message&& m) {
    v1::CancelExecution cancel;
    if (!cancel.ParseFromString(m.data) || !core::IsValidExecutionId(cancel.execution_id())) return;
    if (executor.Cancel(cancel.execution_id())) {
      log::Info("execution cancelled").Str("execution_id", cancel.execution_id());
    }
  });
}

}  // namespace toolgate::executor
