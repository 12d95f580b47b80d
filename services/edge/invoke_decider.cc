#include "invoke_decider.h"

#include "mcp_bus.h"
#include "toolgate/base/log.h"
#include "toolgate/core/invoke_decision.h"
#include "toolgate/core/json_schema.h"
#include "toolgate/core/key_decision.h"
#include "toolgate/core/problem.h"
#include "toolgate/core/runtime_names.h"
#include "toolgate/core/subjects.h"
#include "toolgate/core/version.h"

namespace toolgate::edge {

InvokeVerdict Refusal(v1::Problem problem, int64_t key_expires_at_ms) {
  InvokeVerdict verdict;
  verdict.reply.emplace();
  verdict.reply->set_key_expires_at_ms(key_expires_at_ms);
  *verdict.reply->mutable_problem() = std::move(problem);
  return verdict;
}

core::CachedFunction FunctionFromView(const v1::FunctionView& view) {
  core::CachedFunction f;
  f.function_id = view.function_id();
  f.org_id = view.org_id();
  f.is_public = view.is_public();
  f.mcp = view.mcp();
  for (const v1::VersionView& in : view.versions()) {
    auto parsed = core::ParseVersion(in.version());
    if (!parsed) {
      log::Warn("registry sent a bad version; skipped").Str("version", in.version());
      continue;
    }
    core::PublishedVersion v;
    v.version = in.version();
    v.parsed = *parsed;
    v.runtime = std::string(core::RuntimeName(in.runtime()));
    v.compute_type = std::string(core::ComputeTypeName(in.compute_type()));
    v.timeout_ms = in.timeout_ms();
    v.memory_mb = in.memory_mb();
    v.declared_keys.assign(in.declared_keys().begin(), in.declared_keys().end());
    v.price_micro_usd = in.price_micro_usd();
    v.egress.assign(in.egress().begin(), in.egress().end());
    v.bundle_digest = in.bundle_digest();
    v.handler = in.handler();
    if (!in.input_schema_json().empty()) {
      auto schema = core::JsonSchema::Compile(in.input_schema_json());
      if (schema.ok()) {
        v.input_schema = std::move(*schema);
        v.input_schema_json = in.input_schema_json();
      }
    }
    f.versions.push_back(std::move(v));
  }
  return f;
}

CachedKey CachedKeyOf(const v1::KeyLookupReply& reply) {
  CachedKey key;
  if (reply.found()) key.record = core::KeyRecordFromPrincipal(reply.key(), reply.revoked());
  return key;
}

CachedFunctionView CachedViewOf(const std::string& function_id,
                                const v1::FunctionViewReply& reply) {
  CachedFunctionView view;
  view.function_id = function_id;
  if (reply.found()) {
    view.function =
        std::make_shared<const core::CachedFunction>(FunctionFromView(reply.function()));
    view.added = reply.added();
  }
  return view;
}

InvokeDecider::InvokeDecider(DecisionCaches& caches, DecisionSource& source,
                             core::UsageBatcher& uses, Clocks clocks)
    : caches_(caches),
      source_(source),
      uses_(uses),
      clocks_(std::move(clocks)),
      epoch_(clocks_.connection_epoch()) {}

void InvokeDecider::DropAllIfReconnected() {
  const uint64_t now = clocks_.connection_epoch();
  if (epoch_.exchange(now) != now) {
    log::Info("bus reconnected; edge decision caches dropped");
    caches_.DropAll();
  }
}

void InvokeDecider::Decide(v1::InvokeJob job, Done done) {
  DropAllIfReconnected();
  if (job.api_key_sha256().empty() && !job.session_token_sha256().empty()) {
    const std::string token = job.session_token_sha256();
    source_.AuthenticateSession(
        token, [this, job = std::move(job), done](Result<v1::AuthenticateReply> answer) mutable {
          if (!answer.ok())
            return done(std::move(job), Refusal(BusFailureProblem(answer.status())));
          if (answer->has_problem()) return done(std::move(job), Refusal(answer->problem()));
          // Later stages need only the principal; the token's hash goes no further.
          job.clear_session_token_sha256();
          *job.mutable_principal() = answer->principal();
          DecideFunction(std::move(job), std::move(done));
        });
    return;
  }
  if (job.api_key_sha256().empty()) {
    return done(std::move(job),
                Refusal(core::MakeProblem("missing_api_key",
                                          "Send your API key in the Authorization header.")));
  }
  if (auto cached = caches_.Key(job.api_key_sha256())) {
    return DecideKey(std::move(job), *cached, std::move(done));
  }
  const uint64_t generation = caches_.key_generation();
  const std::string sha = job.api_key_sha256();
  source_.LookupKey(sha, [this, generation, sha, job = std::move(job),
                          done](Result<v1::KeyLookupReply> answer) mutable {
    if (!answer.ok()) return done(std::move(job), Refusal(BusFailureProblem(answer.status())));
    if (answer->has_problem()) return done(std::move(job), Refusal(answer->problem()));
    CachedKey key = CachedKeyOf(*answer);
    caches_.PutKey(sha, key, generation);
    DecideKey(std::move(job), key, std::move(done));
  });
}

void InvokeDecider::Credential(const std::string& key_sha256, CredentialDone done) {
  DropAllIfReconnected();
  auto verdict = [this](const CachedKey& key, CredentialDone& done) {
    const core::KeyRecord* record = key.record ? &*key.record : nullptr;
    v1::AuthenticateReply reply;
    const int64_t now_ms = clocks_.wall_ms();
    if (auto problem = core::CheckKey(record, now_ms)) {
      *reply.mutable_problem() = std::move(*problem);
    } else {
      if (!record->is_oauth_token()) uses_.Record(record->key_id, now_ms);
      *reply.mutable_principal() = core::PrincipalForKey(*record);
    }
    done(std::move(reply));
  };
  if (auto cached = caches_.Key(key_sha256)) return verdict(*cached, done);
  const uint64_t generation = caches_.key_generation();
  source_.LookupKey(key_sha256, [this, generation, key_sha256, verdict, done = std::move(done)](
                                    Result<v1::KeyLookupReply> answer) mutable {
    v1::AuthenticateReply reply;
    if (!answer.ok()) {
      *reply.mutable_problem() = BusFailureProblem(answer.status());
      return done(std::move(reply));
    }
    if (answer->has_problem()) {
      *reply.mutable_problem() = answer->problem();
      return done(std::move(reply));
    }
    CachedKey key = CachedKeyOf(*answer);
    caches_.PutKey(key_sha256, key, generation);
    verdict(key, done);
  });
}

void InvokeDecider::DecideKey(v1::InvokeJob job, const CachedKey& key, Done done) {
  const core::KeyRecord* record = key.record ? &*key.record : nullptr;
  const int64_t now_ms = clocks_.wall_ms();
  if (auto problem = core::CheckKeyForInvoke(record, now_ms, job.audience())) {
    return done(std::move(job),
                Refusal(std::move(*problem), record != nullptr ? record->expires_at_ms : 0));
  }
  // An OAuth token's use shows in its grant's executions; only API keys have a last_used_at.
  if (!record->is_oauth_token()) uses_.Record(record->key_id, now_ms);
  *job.mutable_principal() = core::PrincipalForKey(*record);
  DecideFunction(std::move(job), std::move(done));
}

void InvokeDecider::DecideFunction(v1::InvokeJob job, Done done) {
  const std::string org = job.principal().org_id();
  const std::string id = core::NormalizeFunctionId(job.function_id());
  if (auto cached = caches_.Function(org, id)) {
    return Finish(std::move(job), *cached, std::move(done));
  }
  const uint64_t generation = caches_.function_generation();
  source_.ViewFunction(id, org,
                       [this, generation, org, id, job = std::move(job),
                        done](Result<v1::FunctionViewReply> answer) mutable {
                         const int64_t expires = job.principal().key_expires_at_ms();
                         if (!answer.ok()) {
                           return done(std::move(job),
                                       Refusal(BusFailureProblem(answer.status()), expires));
                         }
                         if (answer->has_problem())
                           return done(std::move(job), Refusal(answer->problem(), expires));
                         CachedFunctionView view = CachedViewOf(id, *answer);
                         caches_.PutFunction(org, view, generation);
                         Finish(std::move(job), view, std::move(done));
                       });
}

void InvokeDecider::Finish(v1::InvokeJob job, const CachedFunctionView& view, Done done) {
  core::InvokeDecision decision = core::DecideInvoke(job, view.function.get(), view.added);
  if (auto* problem = std::get_if<v1::Problem>(&decision)) {
    const int64_t expires = job.principal().key_expires_at_ms();
    return done(std::move(job), Refusal(std::move(*problem), expires));
  }
  *job.mutable_function() = std::move(std::get<v1::FunctionVersion>(decision));
  InvokeVerdict verdict;
  verdict.next_subject = job.function().declared_keys_size() > 0 ? core::kSecretsStageSubject
                                                                 : core::kBillingStageSubject;
  done(std::move(job), std::move(verdict));
}

}  // namespace toolgate::edge
