#include "decision_bus.h"

#include <chrono>

#include "mcp_bus.h"
#include "toolgate/base/log.h"
#include "toolgate/core/function_model.h"
#include "toolgate/core/subjects.h"

namespace toolgate::edge {
namespace {

// A bus answer parsed as T; a malformed one is an Internal error.
template <typename T>
ReplyMux::Callback Parsed(std::function<void(Result<T>)> done) {
  return [done = std::move(done)](Result<bus::Message> answer) {
    if (!answer.ok()) return done(answer.status());
    if (answer->no_responders) return done(Status::Unavailable("no responders"));
    T parsed;
    if (!parsed.ParseFromString(answer->data)) {
      return done(Status::Internal("malformed answer on the bus"));
    }
    done(std::move(parsed));
  };
}

}  // namespace

void BusDecisionSource::LookupKey(const std::string& key_sha256,
                                  std::function<void(Result<v1::KeyLookupReply>)> done) {
  v1::KeyLookupRequest request;
  request.set_api_key_sha256(key_sha256);
  mux_.Request(core::kKeyLookupSubject, request.SerializeAsString(), "", timeout_ms_,
               Parsed(std::move(done)));
}

void BusDecisionSource::ViewFunction(const std::string& function_id,
                                     const std::string& caller_org_id,
                                     std::function<void(Result<v1::FunctionViewReply>)> done) {
  v1::FunctionViewRequest request;
  request.set_function_id(function_id);
  request.set_caller_org_id(caller_org_id);
  mux_.Request(core::kFunctionViewSubject, request.SerializeAsString(), "", timeout_ms_,
               Parsed(std::move(done)));
}

void BusDecisionSource::AuthenticateSession(
    const std::string& token_sha256, std::function<void(Result<v1::AuthenticateReply>)> done) {
  v1::AuthenticateRequest request;
  request.set_session_token_sha256(token_sha256);
  mux_.Request(core::kAuthenticateSubject, request.SerializeAsString(), "", timeout_ms_,
               Parsed(std::move(done)));
}

Status SubscribeInvalidations(bus::Bus& bus, DecisionCaches& caches) {
  Status s = bus.Subscribe(core::kKeyRevokedSubject, "", [&caches](bus::Message&& m) {
    v1::KeyRevoked e;
    if (e.ParseFromString(m.data)) caches.KeyRevoked(e.api_key_sha256());
  });
  if (!s.ok()) return s;
  s = bus.Subscribe(core::kFunctionChangedSubject, "", [&caches](bus::Message&& m) {
    v1::FunctionChanged e;
    if (e.ParseFromString(m.data))
      caches.FunctionChanged(core::NormalizeFunctionId(e.function_id()));
  });
  if (!s.ok()) return s;
  return bus.Subscribe(core::kWorkspaceChangedSubject, "", [&caches](bus::Message&& m) {
    v1::WorkspaceChanged e;
    if (e.ParseFromString(m.data)) {
      caches.WorkspaceChanged(e.org_id(), core::NormalizeFunctionId(e.function_id()));
    }
  });
}

v1::KeysUsed KeysUsedMessage(const std::unordered_map<std::string, int64_t>& uses) {
  v1::KeysUsed out;
  for (const auto& [key_id, at_ms] : uses) {
    v1::KeyUsed* use = out.add_uses();
    use->set_key_id(key_id);
    use->set_last_used_ms(at_ms);
  }
  return out;
}

KeyUseReporter::KeyUseReporter(bus::Bus& bus, core::UsageBatcher& uses, int interval_ms)
    : bus_(bus),
      uses_(uses),
      task_(std::in_place, std::chrono::milliseconds(interval_ms), [this] { Send(); }) {}

KeyUseReporter::~KeyUseReporter() {
  task_.reset();  // no tick runs after this: the last uses are sent here, once
  Send();
}

void KeyUseReporter::Send() {
  auto uses = uses_.Take();
  if (uses.empty()) return;
  Status s = bus_.Publish(core::kKeysUsedSubject, KeysUsedMessage(uses).SerializeAsString());
  // A lost report only leaves last_used_at a second or so behind.
  if (!s.ok()) log::Warn("key uses not reported").Str("error", s.ToString());
}

}  // namespace toolgate::edge
