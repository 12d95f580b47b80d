// The secrets stage of the invoke chain (tg.invoke.secrets, queue group "secrets"): resolves the
// job's X-Env-Keys to the caller's secrets, seals them for the executor pool into
// job.sealed_env, and passes the job to tg.invoke.billing; or answers the edge with
// unknown_secret. A version that declares no keys passes straight through. Also listens (every
// replica) on tg.events.secret_changed to drop cached ciphertext.
#pragma once

#include <string>

#include "toolgate/bus/service.h"
#include "toolgate/core/chain_stage.h"
#include "toolgate/secrets/crypto.h"
#include "toolgate/secrets/secret_cache.h"

namespace toolgate::secrets {

class SecretsStage {
 public:
  // Every reference must outlive the stage. executor_public_key: kKeyBytes raw bytes.
  SecretsStage(bus::Bus& bus, SecretCache& cache, const SecretBox& box,
               std::string executor_public_key);

  Status Subscribe(bus::Service& service);

  void HandleInvoke(bus::Message&& m);
  void HandleSecretChanged(bus::Message&& m);

 private:
  // The stage's decision (core::ChainStage runs the rest): seal the declared keys' secrets
  // into the job and go on to billing, or refuse. Reads the secret cache (PostgreSQL on a miss).
  core::StageVerdict Decide(v1::InvokeJob& job);

  SecretCache& cache_;
  const SecretBox& box_;
  std::string executor_public_key_;
  core::ChainStage stage_;
};

}  // namespace toolgate::secrets
