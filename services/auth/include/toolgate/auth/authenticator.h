// Authenticator: answers tg.auth.authenticate, by which the edge turns the credentials of a
// management request (an API key's or a session token's SHA-256) into a Principal.
//
// An API key is checked as it is for invocations except for scopes (the management router
// demands `manage`); a session must exist and be unexpired. Thread-safe; everything passed to
// the constructor must outlive the Authenticator.
#pragma once

#include "toolgate/auth/account_store.h"
#include "toolgate/auth/key_directory.h"
#include "toolgate/auth/usage_batcher.h"
#include "toolgate/bus/service.h"
#include "toolgate/v1/toolgate.pb.h"

namespace toolgate::auth {

class Authenticator {
 public:
  Authenticator(KeyDirectory& keys, AccountStore& accounts, UsageBatcher& usage)
      : keys_(keys), accounts_(accounts), usage_(usage) {}

  // The principal, or the problem: invalid_api_key, api_key_revoked, api_key_expired,
  // not_authenticated, or service_unavailable when PostgreSQL cannot be reached. May block on
  // PostgreSQL.
  v1::AuthenticateReply Authenticate(const v1::AuthenticateRequest& request);
  // Serves tg.auth.authenticate (queue group "auth") on the service's worker pool.
  Status Serve(bus::Service& service);

 private:
  v1::AuthenticateReply ForKey(const std::string& key_sha256);
  v1::AuthenticateReply ForSession(const std::string& token_sha256);

  KeyDirectory& keys_;
  AccountStore& accounts_;
  UsageBatcher& usage_;
};

}  // namespace toolgate::auth
