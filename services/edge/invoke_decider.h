// InvokeDecider: the edge's decision on an invocation before anything runs (contract section 3,
// rows 2 to 6): the key (or the "Try it" session), then the function and version, the body and
// X-Env-Keys. It applies the owners' own rules (core::CheckKeyForInvoke, core::DecideInvoke) to
// what DecisionCaches remembers, and asks the owners through a DecisionSource only on a miss:
// a warm call costs no bus round trip before billing.
//
// Sessions are never cached: a "Try it" call asks auth every time (a person clicking).
// Each accepted key's use is recorded in the UsageBatcher, which KeyUseReporter sends to auth.
// When the connection epoch (the bus's reconnect count) changes, both caches are dropped
// before the next decision: events may have been missed while disconnected.
//
// Thread-safe. Every reference given to the constructor must outlive the decider.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "decision_caches.h"
#include "toolgate/base/status.h"
#include "toolgate/core/usage_batcher.h"
#include "toolgate/v1/toolgate.pb.h"

namespace toolgate::edge {

// Where the decider asks on a miss. Each callback runs exactly once, on any thread; a failed
// round trip (timeout, no responders) is an error Status.
class DecisionSource {
 public:
  virtual ~DecisionSource() = default;
  virtual void LookupKey(const std::string& key_sha256,
                         std::function<void(Result<v1::KeyLookupReply>)> done) = 0;
  virtual void ViewFunction(const std::string& function_id, const std::string& caller_org_id,
                            std::function<void(Result<v1::FunctionViewReply>)> done) = 0;
  virtual void AuthenticateSession(const std::string& token_sha256,
                                   std::function<void(Result<v1::AuthenticateReply>)> done) = 0;
};

// The outcome: either the answer that ends the call here (reply set), or the job with its
// principal and function set and the subject of the stage it goes to next.
struct InvokeVerdict {
  std::optional<v1::InvokeReply> reply;
  const char* next_subject = nullptr;
};

// The edge's view of a function from the registry's answer; the input schema is compiled here
// (a schema that does not compile leaves events unchecked, as the registry does).
core::CachedFunction FunctionFromView(const v1::FunctionView& view);

// What the caches keep of an owner's answer that carries no problem: auth's on a key, the
// registry's on a function (function_id as asked, lower-cased).
CachedKey CachedKeyOf(const v1::KeyLookupReply& reply);
CachedFunctionView CachedViewOf(const std::string& function_id, const v1::FunctionViewReply& reply);

class InvokeDecider {
 public:
  struct Clocks {
    std::function<int64_t()> wall_ms;            // epoch milliseconds: key expiry, uses
    std::function<uint64_t()> connection_epoch;  // changes whenever the bus reconnected
  };
  InvokeDecider(DecisionCaches& caches, DecisionSource& source, core::UsageBatcher& uses,
                Clocks clocks);

  // Decides job; done(job, verdict) runs exactly once, inline when everything was cached,
  // else on the thread that delivered the owner's answer.
  using Done = std::function<void(v1::InvokeJob, InvokeVerdict)>;
  void Decide(v1::InvokeJob job, Done done);

  // The verdict on a presented credential (an API key's or an OAuth access token's hash) for
  // an MCP request, from the key cache like Decide's (core::CheckKey: known, not revoked, not
  // expired): the principal, or the problem. Scope and a token's binding are the endpoint's to
  // check. done runs exactly once, inline when cached.
  using CredentialDone = std::function<void(v1::AuthenticateReply)>;
  void Credential(const std::string& key_sha256, CredentialDone done);

 private:
  void DecideKey(v1::InvokeJob job, const CachedKey& key, Done done);
  void DecideFunction(v1::InvokeJob job, Done done);
  void Finish(v1::InvokeJob job, const CachedFunctionView& view, Done done);
  void DropAllIfReconnected();

  DecisionCaches& caches_;
  DecisionSource& source_;
  core::UsageBatcher& uses_;
  Clocks clocks_;
  std::atomic<uint64_t> epoch_;
};

// An answer that ends the call with problem (key_expires_at_ms: 0 when unknown).
InvokeVerdict Refusal(v1::Problem problem, int64_t key_expires_at_ms = 0);

}  // namespace toolgate::edge
