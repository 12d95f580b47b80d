#include "toolgate/registry/stages.h"

#include "toolgate/base/crypto.h"
#include "toolgate/base/log.h"
#include "toolgate/base/time.h"
#include "toolgate/core/invoke_decision.h"
#include "toolgate/core/invoke_stage.h"
#include "toolgate/core/problem.h"
#include "toolgate/registry/subjects.h"
#include "toolgate/trace/trace.h"

namespace toolgate::registry {
namespace {

void AnswerEdge(bus::Bus& bus, const std::string& reply, const v1::InvokeJob& job,
                v1::Problem problem, const std::string& traceparent) {
  v1::InvokeReply answer;
  *answer.mutable_problem() = std::move(problem);
  answer.set_key_expires_at_ms(job.principal().key_expires_at_ms());
  Status s = bus.Publish(reply, answer.SerializeAsString(), {}, traceparent);
  if (!s.ok()) log::Warn("cannot answer the edge").Str("error", s.ToString());
}

v1::Problem StoreDown(const Status& status) {
  log::Error("registry store unavailable").Str("error", status.ToString());
  return core::MakeProblem("service_unavailable", "The registry cannot be read; retry shortly.");
}

}  // namespace

RegistryStages::RegistryStages(bus::Bus& bus, FunctionCache& functions, CodeCache& code,
                               ExecutionCounter& executions)
    : bus_(bus), functions_(functions), code_(code), executions_(executions) {}

Status RegistryStages::Subscribe(bus::Service& service) {
  pool_ = &service.pool();
  struct Subscription {
    const char* subject;
    const char* queue;  // "": every replica gets every message
    // Inline handlers only touch memory (HandleInvoke moves a cache miss to the worker pool
    // itself); the others may read PostgreSQL on a cache miss, so they run on the worker pool.
    bool inline_handler;
    void (RegistryStages::*handle)(bus::Message&&);
  };
  static constexpr Subscription kSubscriptions[] = {
      {kInvokeSubject, kQueueGroup, true, &RegistryStages::HandleInvoke},
      {kCodeSubject, kQueueGroup, false, &RegistryStages::HandleCode},
      {kExecutionSubject, kQueueGroup, true, &RegistryStages::HandleExecution},
      {kFunctionChangedSubject, "", true, &RegistryStages::HandleFunctionChanged},
      {kWorkspaceChangedSubject, "", true, &RegistryStages::HandleWorkspaceChanged},
  };
  for (const auto& sub : kSubscriptions) {
    auto handler = [this, handle = sub.handle](bus::Message&& m) { (this->*handle)(std::move(m)); };
    Status s = sub.inline_handler ? service.HandleInline(sub.subject, sub.queue, handler)
                                  : service.Handle(sub.subject, sub.queue, handler);
    if (!s.ok()) return s;
  }
  return Status::Ok();
}

void RegistryStages::HandleInvoke(bus::Message&& m) {
  auto in = core::OpenInvokeJob(m);
  if (!in) return;
  trace::TraceContext parent = core::StageTrace(m, in->job);
  // A warm call is decided here, on the delivery thread: a hop to the worker pool would cost
  // more than the lookups. A miss reads PostgreSQL, which must not stall the subscription.
  if (pool_ == nullptr ||
      functions_.IsWarm(NormalizeFunctionId(in->job.function_id()), in->job.principal().org_id())) {
    return Resolve(std::move(*in), parent);
  }
  pool_->Submit([this, in = std::move(*in), parent]() mutable { Resolve(std::move(in), parent); });
}

void RegistryStages::Resolve(core::StageInput in, const trace::TraceContext& parent) {
  v1::InvokeJob& job = in.job;
  const std::string& reply = in.reply;
  trace::Span span(parent, "registry");
  core::AnnotateStageSpan(span, job);
  const std::string traceparent = span.traceparent();

  const std::string id = NormalizeFunctionId(job.function_id());
  std::shared_ptr<const CachedFunction> function;
  if (IsUuid(id)) {
    auto found = functions_.Function(id);
    if (!found.ok()) return AnswerEdge(bus_, reply, job, StoreDown(found.status()), traceparent);
    function = *found;
  }
  bool added = false;
  if (function && function->is_public && function->org_id != job.principal().org_id()) {
    auto is_added = functions_.IsAdded(job.principal().org_id(), id);
    if (!is_added.ok()) {
      return AnswerEdge(bus_, reply, job, StoreDown(is_added.status()), traceparent);
    }
    added = *is_added;
  }

  core::InvokeDecision decision = core::DecideInvoke(job, function.get(), added);
  if (auto* problem = std::get_if<v1::Problem>(&decision)) {
    return AnswerEdge(bus_, reply, job, std::move(*problem), traceparent);
  }
  *job.mutable_function() = std::move(std::get<v1::FunctionVersion>(decision));
  job.set_traceparent(traceparent);
  core::RecordHop(job, span);
  const char* next =
      job.function().declared_keys_size() > 0 ? kSecretsStageSubject : kBillingStageSubject;
  Status s = bus_.Publish(next, job.SerializeAsString(), reply, traceparent);
  if (!s.ok()) {
    log::Error("cannot forward the invocation").Str("error", s.ToString());
    AnswerEdge(bus_, reply, job,
               core::MakeProblem("service_unavailable", "The bus is unavailable; retry shortly."),
               traceparent);
  }
}

void RegistryStages::HandleCode(bus::Message&& m) {
  v1::CodeRequest request;
  if (!request.ParseFromString(m.data) || m.reply.empty()) {
    log::Error("malformed CodeRequest").Str("subject", m.subject);
    return;
  }
  auto code = code_.Get(NormalizeFunctionId(request.function_id()), request.version());
  if (!code.ok()) {
    // No answer: the executor's request times out and it reports a platform failure, rather
    // than taking "not found" for an answer.
    log::Error("code unavailable").Str("error", code.status().ToString());
    return;
  }
  v1::CodeReply answer;
  answer.set_found(*code != nullptr);
  if (*code) {
    answer.set_code((*code)->code);
    answer.set_bundle((*code)->bundle);
    answer.set_bundle_digest((*code)->bundle_digest);
  }
  Status s = bus_.Publish(m.reply, answer.SerializeAsString());
  if (!s.ok()) log::Warn("cannot answer a code request").Str("error", s.ToString());
}

void RegistryStages::HandleExecution(bus::Message&& m) {
  v1::ExecutionsRecorded events;
  if (!events.ParseFromString(m.data)) return;
  for (const v1::ExecutionRecorded& event : events.executions()) {
    const int64_t at_ms = event.created_at_ms() > 0 ? event.created_at_ms() : NowMs();
    const std::string function_id = NormalizeFunctionId(event.function_id());
    if (event.outcome_known()) {
      // Success as the caller sees it: the handler answered below 500.
      executions_.Add(function_id, event.caller_org_id(), at_ms, event.runtime_ms(),
                      event.status_code() < 500);
    } else {
      executions_.Add(function_id, event.caller_org_id(), at_ms);
    }
  }
}

void RegistryStages::HandleFunctionChanged(bus::Message&& m) {
  v1::FunctionChanged event;
  if (event.ParseFromString(m.data))
    functions_.DropFunction(NormalizeFunctionId(event.function_id()));
}

void RegistryStages::HandleWorkspaceChanged(bus::Message&& m) {
  v1::WorkspaceChanged event;
  if (event.ParseFromString(m.data)) functions_.DropWorkspace(event.org_id());
}

}  // namespace toolgate::registry
