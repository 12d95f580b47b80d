#include "toolgate/secrets/stage.h"

#include "toolgate/base/log.h"
#include "toolgate/core/problem.h"
#include "toolgate/secrets/env_resolver.h"
#include "toolgate/secrets/store.h"
#include "toolgate/secrets/subjects.h"
#include "toolgate/trace/trace.h"

namespace toolgate::secrets {

SecretsStage::SecretsStage(bus::Bus& bus, SecretCache& cache, const SecretBox& box,
                           std::string executor_public_key)
    : cache_(cache),
      box_(box),
      executor_public_key_(std::move(executor_public_key)),
      stage_("secrets", core::PublishWith(bus)) {}

Status SecretsStage::Subscribe(bus::Service& service) {
  Status s = service.Handle(kInvokeSubject, kQueueGroup,
                            [this](bus::Message&& m) { HandleInvoke(std::move(m)); });
  if (!s.ok()) return s;
  return service.HandleInline(kSecretChangedSubject, "",
                              [this](bus::Message&& m) { HandleSecretChanged(std::move(m)); });
}

void SecretsStage::HandleInvoke(bus::Message&& m) {
  stage_.Handle(m, [this](v1::InvokeJob& job) { return Decide(job); });
}

core::StageVerdict SecretsStage::Decide(v1::InvokeJob& job) {
  if (job.function().declared_keys_size() > 0) {
    auto mappings = DeclaredMappings(job);
    if (auto* problem = std::get_if<v1::Problem>(&mappings)) {
      return core::StageVerdict::Reject(std::move(*problem));
    }
    const auto& declared = std::get<std::vector<core::EnvKeyMapping>>(mappings);
    auto rows = cache_.Get(LookupIds(declared));
    if (!rows.ok()) {
      log::Error("secrets store unavailable").Str("error", rows.status().ToString());
      return core::StageVerdict::Reject(
          core::MakeProblem("service_unavailable", "Secrets cannot be read; retry shortly."));
    }
    auto sealed = SealEnv(declared, job.principal().org_id(), *rows, box_, executor_public_key_);
    if (auto* problem = std::get_if<v1::Problem>(&sealed)) {
      return core::StageVerdict::Reject(std::move(*problem));
    }
    job.set_sealed_env(std::move(std::get<std::string>(sealed)));
  }
  return core::StageVerdict::Forward(kNextStageSubject);
}

void SecretsStage::HandleSecretChanged(bus::Message&& m) {
  v1::SecretChanged event;
  if (event.ParseFromString(m.data)) cache_.Drop(CanonicalSecretId(event.secret_id()));
}

}  // namespace toolgate::secrets
