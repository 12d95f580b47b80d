#include "toolgate/auth/authenticator.h"

#include "toolgate/base/log.h"
#include "toolgate/base/time.h"
#include "toolgate/core/problem.h"
#include "toolgate/core/subjects.h"

namespace toolgate::auth {
namespace {

v1::AuthenticateReply Rejected(v1::Problem problem) {
  v1::AuthenticateReply reply;
  *reply.mutable_problem() = std::move(problem);
  return reply;
}

v1::AuthenticateReply StoreDown(const Status& status) {
  log::Error("authentication store unavailable").Str("error", status.ToString());
  return Rejected(
      core::MakeProblem("service_unavailable", "A backing store is unavailable; retry shortly."));
}

}  // namespace

v1::AuthenticateReply Authenticator::Authenticate(const v1::AuthenticateRequest& request) {
  // A key wins over a session cookie: scripts send keys, and a browser never does.
  if (!request.api_key_sha256().empty()) return ForKey(request.api_key_sha256());
  if (!request.session_token_sha256().empty()) return ForSession(request.session_token_sha256());
  return Rejected(
      core::MakeProblem("not_authenticated", "Sign in, or send an API key with the manage scope."));
}

v1::AuthenticateReply Authenticator::ForKey(const std::string& key_sha256) {
  auto found = keys_.Find(key_sha256);
  if (!found.ok()) return StoreDown(found.status());
  const KeyRecord* record = found->has_value() ? &**found : nullptr;
  int64_t now_ms = NowMs();
  if (auto problem = CheckKey(record, now_ms)) return Rejected(std::move(*problem));
  if (record->is_oauth_token()) {
    // A token is bound to an MCP endpoint (the edge decides those calls itself); it never
    // authenticates a management request.
    return Rejected(core::MakeProblem("invalid_token",
                                      "OAuth access tokens are accepted only at the MCP endpoint "
                                      "they were issued for."));
  }
  usage_.Record(record->key_id, now_ms);
  v1::AuthenticateReply reply;
  *reply.mutable_principal() = PrincipalForKey(*record);
  return reply;
}

v1::AuthenticateReply Authenticator::ForSession(const std::string& token_sha256) {
  auto found = accounts_.FindSession(token_sha256);
  if (!found.ok()) return StoreDown(found.status());
  if (!found->has_value()) {
    return Rejected(
        core::MakeProblem("not_authenticated", "Your session has ended; sign in again."));
  }
  v1::AuthenticateReply reply;
  *reply.mutable_principal() = std::move(**found);
  return reply;
}

v1::KeyLookupReply Authenticator::LookupKey(const v1::KeyLookupRequest& request) {
  v1::KeyLookupReply reply;
  auto found = keys_.Find(request.api_key_sha256());
  if (!found.ok()) {
    *reply.mutable_problem() = StoreDown(found.status()).problem();
    return reply;
  }
  if (!found->has_value()) return reply;
  reply.set_found(true);
  *reply.mutable_key() = PrincipalForKey(**found);
  reply.set_revoked((*found)->revoked);
  return reply;
}

void Authenticator::RecordUses(const v1::KeysUsed& uses) {
  for (const v1::KeyUsed& use : uses.uses()) usage_.Record(use.key_id(), use.last_used_ms());
}

Status Authenticator::Serve(bus::Service& service) {
  Status s = service.Handle(core::kKeyLookupSubject, "auth", [this, &service](bus::Message&& m) {
    v1::KeyLookupRequest request;
    if (m.reply.empty() || !request.ParseFromString(m.data)) {
      log::Warn("malformed key lookup dropped");
      return;
    }
    Status sent = service.bus().Publish(m.reply, LookupKey(request).SerializeAsString());
    if (!sent.ok()) log::Warn("key lookup reply not sent").Str("error", sent.ToString());
  });
  if (!s.ok()) return s;
  s = service.HandleInline(core::kKeysUsedSubject, "auth", [this](bus::Message&& m) {
    v1::KeysUsed uses;
    if (!uses.ParseFromString(m.data)) {
      log::Warn("malformed keys_used report dropped");
      return;
    }
    RecordUses(uses);
  });
  if (!s.ok()) return s;
  return service.Handle(core::kAuthenticateSubject, "auth", [this, &service](bus::Message&& m) {
    if (m.reply.empty()) return;
    v1::AuthenticateRequest request;
    v1::AuthenticateReply reply =
        request.ParseFromString(m.data)
            ? Authenticate(request)
            : Rejected(core::MakeProblem("bad_request", "Malformed bus message."));
    Status s = service.bus().Publish(m.reply, reply.SerializeAsString());
    if (!s.ok()) log::Warn("authenticate reply not sent").Str("error", s.ToString());
  });
}

}  // namespace toolgate::auth
