// The edge's decision caches on NATS:
//   BusDecisionSource   asks auth (tg.auth.key_lookup, tg.auth.authenticate for sessions) and the
//                       registry (tg.registry.function_view) on a miss, through the ReplyMux, so
//                       no HTTP thread waits on the bus
//   SubscribeInvalidations  the owners' broadcasts (no queue group: every edge replica hears
//                       them): tg.events.key_revoked, tg.events.function_changed,
//                       tg.events.workspace_changed
//   KeyUseReporter      sends the uses of keys the edge decided to auth (tg.auth.keys_used),
//                       deduplicated per key, once per interval: never a message per call
// Thread-safe. Every reference must outlive the object holding it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>

#include "decision_caches.h"
#include "invoke_decider.h"
#include "reply_mux.h"
#include "toolgate/bus/bus.h"
#include "toolgate/core/usage_batcher.h"
#include "toolgate/net/periodic_task.h"

namespace toolgate::edge {

class BusDecisionSource : public DecisionSource {
 public:
  // timeout_ms bounds each round trip.
  BusDecisionSource(ReplyMux& mux, int timeout_ms) : mux_(mux), timeout_ms_(timeout_ms) {}

  void LookupKey(const std::string& key_sha256,
                 std::function<void(Result<v1::KeyLookupReply>)> done) override;
  void ViewFunction(const std::string& function_id, const std::string& caller_org_id,
                    std::function<void(Result<v1::FunctionViewReply>)> done) override;
  void AuthenticateSession(const std::string& token_sha256,
                           std::function<void(Result<v1::AuthenticateReply>)> done) override;

 private:
  ReplyMux& mux_;
  const int timeout_ms_;
};

// Subscribes caches to the invalidation broadcasts; call once at start.
Status SubscribeInvalidations(bus::Bus& bus, DecisionCaches& caches);

// The report of uses (key_id -> latest use, epoch ms) as it travels.
v1::KeysUsed KeysUsedMessage(const std::unordered_map<std::string, int64_t>& uses);

class KeyUseReporter {
 public:
  // Starts a thread that takes uses' content every interval_ms and publishes it. The
  // destructor sends what is left and joins.
  KeyUseReporter(bus::Bus& bus, core::UsageBatcher& uses, int interval_ms);
  ~KeyUseReporter();
  KeyUseReporter(const KeyUseReporter&) = delete;
  KeyUseReporter& operator=(const KeyUseReporter&) = delete;

 private:
  void Send();

  bus::Bus& bus_;
  core::UsageBatcher& uses_;
  std::optional<net::PeriodicTask> task_;  // last: ticks once the members above exist
};

}  // namespace toolgate::edge
