#include "toolgate/secrets/stage.h"

#include "toolgate/base/log.h"
#include "toolgate/core/invoke_stage.h"
#include "toolgate/core/problem.h"
#include "toolgate/secrets/env_resolver.h"
#include "toolgate/secrets/store.h"
#include "toolgate/secrets/subjects.h"
#include "toolgate/trace/trace.h"

namespace toolgate::secrets {
namespace {

void AnswerEdge(bus::Bus& bus, const std::string& reply, const v1::InvokeJob& job,
                v1::Problem problem, const std::string& traceparent) {
  v1::InvokeReply answer;
  *answer.mutable_problem() = std::move(problem);
  answer.set_key_expires_at_ms(job.principal().key_expires_at_ms());
  Status s = bus.Publish(reply, answer.SerializeAsString(), {}, traceparent);
  if (!s.ok()) log::Warn("cannot answer the edge").Str("error", s.ToString());
}

}  // namespace

SecretsStage::SecretsStage(bus::Bus& bus, SecretCache& cache, const SecretBox& box,
                           std::string executor_public_key)
    : bus_(bus), cache_(cache), box_(box), executor_public_key_(std::move(executor_public_key)) {}

Status SecretsStage::Subscribe(bus::Service& service) {
  Status s = service.Handle(kInvokeSubject, kQueueGroup,
                            [this](bus::Message&& m) { HandleInvoke(std::move(m)); });
  if (!s.ok()) return s;
  return service.HandleInline(kSecretChangedSubject, "",
                              [this](bus::Message&& m) { HandleSecretChanged(std::move(m)); });
}

void SecretsStage::HandleInvoke(bus::Message&& m) {
  auto in = core::OpenInvokeJob(m);
  if (!in) return;
  v1::InvokeJob& job = in->job;
  const std::string& reply = in->reply;
  trace::Span span(core::StageTrace(m, job), "secrets");
  core::AnnotateStageSpan(span, job);
  const std::string traceparent = span.traceparent();

  if (job.function().declared_keys_size() > 0) {
    auto mappings = DeclaredMappings(job);
    if (auto* problem = std::get_if<v1::Problem>(&mappings)) {
      return AnswerEdge(bus_, reply, job, std::move(*problem), traceparent);
    }
    const auto& declared = std::get<std::vector<core::EnvKeyMapping>>(mappings);
    auto rows = cache_.Get(LookupIds(declared));
    if (!rows.ok()) {
      log::Error("secrets store unavailable").Str("error", rows.status().ToString());
      return AnswerEdge(
          bus_, reply, job,
          core::MakeProblem("service_unavailable", "Secrets cannot be read; retry shortly."),
          traceparent);
    }
    auto sealed = SealEnv(declared, job.principal().org_id(), *rows, box_, executor_public_key_);
    if (auto* problem = std::get_if<v1::Problem>(&sealed)) {
      return AnswerEdge(bus_, reply, job, std::move(*problem), traceparent);
    }
    job.set_sealed_env(std::move(std::get<std::string>(sealed)));
  }
  job.set_traceparent(traceparent);
  core::RecordHop(job, span);
  Status s = bus_.Publish(kNextStageSubject, job.SerializeAsString(), reply, traceparent);
  if (!s.ok()) {
    log::Error("cannot forward the invocation").Str("error", s.ToString());
    AnswerEdge(bus_, reply, job,
               core::MakeProblem("service_unavailable", "The bus is unavailable; retry shortly."),
               traceparent);
  }
}

void SecretsStage::HandleSecretChanged(bus::Message&& m) {
  v1::SecretChanged event;
  if (event.ParseFromString(m.data)) cache_.Drop(CanonicalSecretId(event.secret_id()));
}

}  // namespace toolgate::secrets
