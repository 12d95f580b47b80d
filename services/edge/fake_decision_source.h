// A DecisionSource for tests: answers every request at once, from what the test set, and counts
// the requests. Not thread-safe.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "invoke_decider.h"

namespace toolgate::edge {

// Answers every request at once from what the test set, and counts the requests.
class FakeSource : public DecisionSource {
 public:
  void LookupKey(const std::string& key_sha256,
                 std::function<void(Result<v1::KeyLookupReply>)> done) override {
    ++key_lookups;
    if (!key_status.ok()) return done(key_status);
    auto it = keys.find(key_sha256);
    v1::KeyLookupReply reply;
    if (it != keys.end()) reply = it->second;
    done(reply);
  }
  void ViewFunction(const std::string& function_id, const std::string& caller_org_id,
                    std::function<void(Result<v1::FunctionViewReply>)> done) override {
    ++function_views;
    last_view = function_id + "@" + caller_org_id;
    v1::FunctionViewReply reply = function;
    reply.set_found(function.has_function() && function.function().function_id() == function_id);
    done(reply);
  }
  void AuthenticateSession(const std::string&,
                           std::function<void(Result<v1::AuthenticateReply>)> done) override {
    ++sessions;
    done(session);
  }

  // Auth knows a key with this hash (its key_id "id-<sha>").
  void AddKey(const std::string& sha, const std::string& org, std::vector<std::string> scopes,
              int64_t expires_at_ms, bool revoked = false) {
    v1::KeyLookupReply r;
    r.set_found(true);
    r.set_revoked(revoked);
    r.mutable_key()->set_key_id("id-" + sha);
    r.mutable_key()->set_org_id(org);
    for (auto& s : scopes) r.mutable_key()->add_scopes(s);
    r.mutable_key()->set_key_expires_at_ms(expires_at_ms);
    keys[sha] = r;
  }

  std::map<std::string, v1::KeyLookupReply> keys;
  Status key_status = Status::Ok();
  v1::FunctionViewReply function;
  v1::AuthenticateReply session;
  int key_lookups = 0, function_views = 0, sessions = 0;
  std::string last_view;
};

}  // namespace toolgate::edge
