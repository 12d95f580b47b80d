// Authenticator: answers tg.auth.authenticate, by which the edge turns the credentials of a
// management request (an API key's or a session token's SHA-256) into a Principal.
//
// An API key is checked as it is for invocations except for scopes (the management router
// demands `manage`); a session must exist and be unexpired.
//
// It also serves the edge's key cache: tg.auth.key_lookup answers what auth knows of a key
// (found or not, its principal, revoked) and leaves the verdict to the edge, which applies the
// same rule (core::CheckKeyForInvoke) on every call; tg.auth.keys_used takes the edge's batched
// reports of key uses into the UsageBatcher. Thread-safe; everything passed to the constructor
// must outlive the Authenticator.
#pragma once

#include "toolgate/auth/account_store.h"
#include "toolgate/auth/key_directory.h"
#include "toolgate/bus/service.h"
#include "toolgate/core/usage_batcher.h"
#include "toolgate/v1/toolgate.pb.h"

namespace toolgate::auth {

class Authenticator {
 public:
  Authenticator(KeyDirectory& keys, AccountStore& accounts, core::UsageBatcher& usage)
      : keys_(keys), accounts_(accounts), usage_(usage) {}

  // The principal, or the problem: invalid_api_key, api_key_revoked, api_key_expired,
  // not_authenticated, or service_unavailable when PostgreSQL cannot be reached. May block on
  // PostgreSQL.
  v1::AuthenticateReply Authenticate(const v1::AuthenticateRequest& request);
  // What auth knows of the key: found, its principal and whether it is revoked, or the
  // problem service_unavailable when PostgreSQL cannot be reached. May block on PostgreSQL.
  v1::KeyLookupReply LookupKey(const v1::KeyLookupRequest& request);
  // Records each reported use in the UsageBatcher. Never blocks.
  void RecordUses(const v1::KeysUsed& uses);
  // Serves tg.auth.authenticate and tg.auth.key_lookup on the service's worker pool and
  // tg.auth.keys_used inline (queue group "auth" for all three).
  Status Serve(bus::Service& service);

 private:
  v1::AuthenticateReply ForKey(const std::string& key_sha256);
  v1::AuthenticateReply ForSession(const std::string& token_sha256);

  KeyDirectory& keys_;
  AccountStore& accounts_;
  core::UsageBatcher& usage_;
};

}  // namespace toolgate::auth
