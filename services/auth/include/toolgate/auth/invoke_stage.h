// InvokeStage: the first stage of the invoke chain (tg.invoke.auth, queue group "auth").
//
// It checks the job's API key (contract section 3, row 2: missing, unknown, revoked, expired,
// then the invoke scope), or, for the web app's "Try it" (a job with a session token's hash and
// no key), the browser session, whose principal has the invoke scope. A rejected call is answered
// on job.edge_reply with an InvokeReply{problem}; an accepted one gets its principal and travels on
// to tg.invoke.registry with the edge's reply subject and a child span of the incoming trace.
//
// Warm keys are decided on the NATS delivery thread from the KeyCache; only a cache miss goes
// to the worker pool to read PostgreSQL, so a warm call costs no database round trip and never
// waits behind one. Uses of a key are recorded in the UsageBatcher, never written here.
//
// Sessions are always read from PostgreSQL on the worker pool: "Try it" is a person clicking.
//
// Thread-safe; service, keys, accounts and usage must outlive the stage.
#pragma once

#include <memory>
#include <optional>

#include "toolgate/auth/account_store.h"
#include "toolgate/auth/key_directory.h"
#include "toolgate/auth/usage_batcher.h"
#include "toolgate/bus/service.h"
#include "toolgate/trace/trace.h"
#include "toolgate/v1/toolgate.pb.h"

namespace toolgate::auth {

inline constexpr const char* kInvokeAuthSubject = "tg.invoke.auth";
inline constexpr const char* kInvokeRegistrySubject = "tg.invoke.registry";

class InvokeStage {
 public:
  InvokeStage(bus::Service& service, KeyDirectory& keys, AccountStore& accounts,
              UsageBatcher& usage)
      : service_(service), keys_(keys), accounts_(accounts), usage_(usage) {}

  // Subscribes to tg.invoke.auth; call once at start.
  Status Start();

 private:
  // The span is shared so that it ends (and is logged) wherever the job leaves this stage.
  using SharedSpan = std::shared_ptr<trace::Span>;

  void OnJob(bus::Message&& m);
  void Decide(v1::InvokeJob& job, const KeyRecord* record, const SharedSpan& span);
  // Blocks on PostgreSQL: call on the worker pool.
  void DecideSession(v1::InvokeJob& job, const SharedSpan& span);
  // Sets the principal and publishes the job to the registry stage.
  void Forward(v1::InvokeJob& job, v1::Principal principal, const SharedSpan& span);
  // Answers the edge with problem. key_expires_at_ms: the key's expiry when the key is known
  // (a refused scope), so that an expiring key is flagged on this answer too.
  void Reject(const v1::InvokeJob& job, v1::Problem problem, const SharedSpan& span,
              int64_t key_expires_at_ms = 0);

  bus::Service& service_;
  KeyDirectory& keys_;
  AccountStore& accounts_;
  UsageBatcher& usage_;
};

}  // namespace toolgate::auth
