// DecisionCaches: what the edge remembers of auth's and the registry's answers, so that a warm
// invocation is decided (contract rows 2 to 6) without asking either.
//
//   keys       api_key_sha256 -> the key's record (principal, scopes, expiry, revoked) or "no
//              such key" (a negative entry, as auth's own KeyCache keeps)
//   functions  (caller org, function_id) -> the function with its published versions and whether
//              the caller's organization added it, or "no such function"
//
// Auth and the registry stay the owners and only writers of this data; the caches forget it:
//   * on the owners' broadcasts: KeyRevoked drops the key, FunctionChanged the function for
//     every caller, WorkspaceChanged the caller's entry (tg.events.*, decision_bus.h);
//   * all at once when the NATS connection came back (events may have been missed meanwhile);
//   * after a TTL, the backstop for a lost event: positive_ttl_ms for records, negative_ttl_ms
//     for "no such key / function" (docs/decisions.md says why those numbers);
//   * least recently used first when a map is full (max_keys, max_functions);
//   * an answer stored less than settle_ms after any invalidation lives only until that
//     invalidation's settle_ms have passed: with several replicas of an owner, a replica that
//     has not yet handled the same broadcast may have given the edge the old data.
// Expiry of a key is not a cache matter: the decider checks it against the clock on every call.
//
// Thread-safe. Times come from the now_ms clock given (monotonic milliseconds), so tests drive
// them.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "toolgate/base/bounded_ttl_cache.h"
#include "toolgate/core/function_model.h"
#include "toolgate/core/key_decision.h"

namespace toolgate::edge {

struct DecisionCacheOptions {
  size_t max_keys = 100'000;
  size_t max_functions = 100'000;
  int64_t positive_ttl_ms = 30'000;
  int64_t negative_ttl_ms = 5'000;
  int64_t settle_ms = 500;  // longer than the broadcast's delivery skew between replicas
  // An OAuth access token's record lives at most this long whatever positive_ttl_ms says: its
  // revocation reaches every edge within this bound even if the broadcast is lost.
  int64_t oauth_token_ttl_ms = 4'000;
};

// What auth said of a key hash; record nullopt: no key has it.
struct CachedKey {
  std::optional<core::KeyRecord> record;
};

// What the registry said of a function for one caller; function null: no function has the id.
struct CachedFunctionView {
  std::string function_id;  // lower-case, as asked
  std::shared_ptr<const core::CachedFunction> function;
  bool added = false;  // the caller's organization added it to its workspace
};

class DecisionCaches {
 public:
  DecisionCaches(DecisionCacheOptions options, std::function<int64_t()> now_ms);

  // The entry when cached and fresh, else nullopt (ask auth).
  std::optional<CachedKey> Key(const std::string& key_sha256);
  // Take before asking auth; pass to PutKey, which ignores an answer that an invalidation
  // overtook.
  uint64_t key_generation() const { return keys_.generation(); }
  void PutKey(const std::string& key_sha256, CachedKey entry, uint64_t generation_at_ask);

  // function_id must be normalized (lower case).
  std::optional<CachedFunctionView> Function(const std::string& caller_org_id,
                                             const std::string& function_id);
  uint64_t function_generation() const { return functions_.generation(); }
  void PutFunction(const std::string& caller_org_id, CachedFunctionView entry,
                   uint64_t generation_at_ask);

  // Invalidations (the owners' events).
  void KeyRevoked(const std::string& key_sha256);
  void FunctionChanged(const std::string& function_id);
  // function_id empty: every entry of the organization.
  void WorkspaceChanged(const std::string& org_id, const std::string& function_id);
  // Forgets everything (the bus reconnected).
  void DropAll();
  // Read your writes: forgets what a successful management request (method, path segments below
  // /api/v1, served by owner: "auth" or "registry") by caller_org_id changed, so that the edge
  // it went through decides the caller's next call on the new state rather than when the
  // owner's broadcast arrives a moment later. A key route, or a connected app's revocation
  // (/oauth/grants), forgets every key (its hash is not in the route; revocations are rare).
  void ForgetChangedBy(std::string_view owner, std::string_view method,
                       const std::vector<std::string>& segments, const std::string& caller_org_id);

  size_t keys_size() const { return keys_.size(); }
  size_t functions_size() const { return functions_.size(); }

 private:
  static std::string FunctionKey(const std::string& org_id, const std::string& function_id);
  // When an entry stored now with ttl_ms expires (see settle_ms above).
  int64_t ExpiryOf(int64_t ttl_ms) const;
  void NoteInvalidation() { last_invalidation_ms_.store(now_ms_()); }

  const DecisionCacheOptions options_;
  const std::function<int64_t()> now_ms_;
  BoundedTtlCache<std::string, CachedKey> keys_;
  BoundedTtlCache<std::string, CachedFunctionView> functions_;  // key: FunctionKey
  std::atomic<int64_t> last_invalidation_ms_{INT64_MIN / 2};
};

}  // namespace toolgate::edge
