#include "toolgate/registry/stages.h"

#include "toolgate/base/crypto.h"
#include "toolgate/base/log.h"
#include "toolgate/base/time.h"
#include "toolgate/core/problem.h"
#include "toolgate/core/runtime_names.h"
#include "toolgate/registry/subjects.h"
#include "toolgate/trace/trace.h"

namespace toolgate::registry {
namespace {

v1::Problem StoreDown(const Status& status) {
  log::Error("registry store unavailable").Str("error", status.ToString());
  return core::MakeProblem("service_unavailable", "The registry cannot be read; retry shortly.");
}

}  // namespace

RegistryStages::RegistryStages(bus::Bus& bus, FunctionCache& functions, CodeCache& code,
                               ExecutionCounter& executions)
    : bus_(bus), functions_(functions), code_(code), executions_(executions) {}

Status RegistryStages::Subscribe(bus::Service& service) {
  struct Subscription {
    const char* subject;
    const char* queue;  // "": every replica gets every message
    // Inline handlers only touch memory; the others may read PostgreSQL on a cache miss, so
    // they run on the worker pool.
    bool inline_handler;
    void (RegistryStages::*handle)(bus::Message&&);
  };
  static constexpr Subscription kSubscriptions[] = {
      {kCodeSubject, kQueueGroup, false, &RegistryStages::HandleCode},
      {kFunctionViewSubject, kQueueGroup, false, &RegistryStages::HandleFunctionView},
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

v1::FunctionViewReply ViewFunction(FunctionCache& functions, const std::string& function_id,
                                   const std::string& caller_org_id) {
  v1::FunctionViewReply reply;
  const std::string id = NormalizeFunctionId(function_id);
  if (!IsUuid(id)) return reply;
  auto found = functions.Function(id);
  if (!found.ok()) {
    *reply.mutable_problem() = StoreDown(found.status());
    return reply;
  }
  const std::shared_ptr<const CachedFunction>& f = *found;
  if (f == nullptr) return reply;
  reply.set_found(true);
  if (f->is_public && f->org_id != caller_org_id) {
    auto added = functions.IsAdded(caller_org_id, id);
    if (!added.ok()) {
      reply.Clear();
      *reply.mutable_problem() = StoreDown(added.status());
      return reply;
    }
    reply.set_added(*added);
  }
  v1::FunctionView* view = reply.mutable_function();
  view->set_function_id(f->function_id);
  view->set_org_id(f->org_id);
  view->set_is_public(f->is_public);
  view->set_mcp(f->mcp);
  view->set_name(f->name);
  for (const PublishedVersion& v : f->versions) {
    v1::VersionView* out = view->add_versions();
    out->set_version(v.version);
    out->set_runtime(core::ParseRuntime(v.runtime).value_or(v1::RUNTIME_UNSPECIFIED));
    out->set_compute_type(
        core::ParseComputeType(v.compute_type).value_or(v1::COMPUTE_TYPE_UNSPECIFIED));
    out->set_timeout_ms(v.timeout_ms);
    out->set_memory_mb(v.memory_mb);
    for (const auto& key : v.declared_keys) out->add_declared_keys(key);
    out->set_price_micro_usd(v.price_micro_usd);
    for (const auto& rule : v.egress) out->add_egress(rule);
    out->set_bundle_digest(v.bundle_digest);
    out->set_handler(v.handler);
    out->set_input_schema_json(v.input_schema_json);
  }
  return reply;
}

void RegistryStages::HandleFunctionView(bus::Message&& m) {
  v1::FunctionViewRequest request;
  if (!request.ParseFromString(m.data) || m.reply.empty()) {
    log::Error("malformed FunctionViewRequest").Str("subject", m.subject);
    return;
  }
  v1::FunctionViewReply reply =
      ViewFunction(functions_, request.function_id(), request.caller_org_id());
  Status s = bus_.Publish(m.reply, reply.SerializeAsString());
  if (!s.ok()) log::Warn("cannot answer a function view request").Str("error", s.ToString());
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
