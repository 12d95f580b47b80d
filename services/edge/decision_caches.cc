#include "decision_caches.h"

#include <algorithm>

#include "toolgate/metrics/metrics.h"

namespace toolgate::edge {
namespace {

// toolgate_edge_decision_cache_lookups_total{cache, result}: how often a call was decided from
// memory; a miss costs a round trip to auth or the registry.
metrics::Counter& Lookups(const char* cache, bool hit) {
  return metrics::Registry::Global()
      .Counter("toolgate_edge_decision_cache_lookups_total",
               "Lookups in the edge's key and function decision caches, by cache and result.",
               {"cache", "result"})
      .With({cache, hit ? "hit" : "miss"});
}

template <typename T>
std::optional<T> Counted(std::optional<T> found, metrics::Counter& hits, metrics::Counter& misses) {
  (found ? hits : misses).Inc();
  return found;
}

}  // namespace

DecisionCaches::DecisionCaches(DecisionCacheOptions options, std::function<int64_t()> now_ms)
    : options_(options),
      now_ms_(std::move(now_ms)),
      keys_(options.max_keys),
      functions_(options.max_functions) {}

std::string DecisionCaches::FunctionKey(const std::string& org_id, const std::string& function_id) {
  // Neither an org id nor a function id holds a NUL, so the pair cannot be forged.
  std::string key = org_id;
  key.push_back('\0');
  key += function_id;
  return key;
}

int64_t DecisionCaches::ExpiryOf(int64_t ttl_ms) const {
  const int64_t now = now_ms_();
  const int64_t settled_at = last_invalidation_ms_.load() + options_.settle_ms;
  return now < settled_at ? std::min(now + ttl_ms, settled_at) : now + ttl_ms;
}

std::optional<CachedKey> DecisionCaches::Key(const std::string& key_sha256) {
  static metrics::Counter& hits = Lookups("keys", true);
  static metrics::Counter& misses = Lookups("keys", false);
  return Counted(keys_.Get(key_sha256, now_ms_()), hits, misses);
}

void DecisionCaches::PutKey(const std::string& key_sha256, CachedKey entry,
                            uint64_t generation_at_ask) {
  int64_t ttl = entry.record ? options_.positive_ttl_ms : options_.negative_ttl_ms;
  if (entry.record && entry.record->is_oauth_token()) {
    ttl = std::min(ttl, options_.oauth_token_ttl_ms);
  }
  keys_.Put(key_sha256, std::move(entry), ExpiryOf(ttl), generation_at_ask);
}

std::optional<CachedFunctionView> DecisionCaches::Function(const std::string& caller_org_id,
                                                           const std::string& function_id) {
  static metrics::Counter& hits = Lookups("functions", true);
  static metrics::Counter& misses = Lookups("functions", false);
  return Counted(functions_.Get(FunctionKey(caller_org_id, function_id), now_ms_()), hits, misses);
}

void DecisionCaches::PutFunction(const std::string& caller_org_id, CachedFunctionView entry,
                                 uint64_t generation_at_ask) {
  const int64_t ttl = entry.function ? options_.positive_ttl_ms : options_.negative_ttl_ms;
  std::string key = FunctionKey(caller_org_id, entry.function_id);
  functions_.Put(key, std::move(entry), ExpiryOf(ttl), generation_at_ask);
}

void DecisionCaches::KeyRevoked(const std::string& key_sha256) {
  NoteInvalidation();
  keys_.Erase(key_sha256);
}

void DecisionCaches::FunctionChanged(const std::string& function_id) {
  NoteInvalidation();
  functions_.EraseIf([&](const std::string&, const CachedFunctionView& v) {
    return v.function_id == function_id;
  });
}

void DecisionCaches::WorkspaceChanged(const std::string& org_id, const std::string& function_id) {
  NoteInvalidation();
  if (!function_id.empty()) return functions_.Erase(FunctionKey(org_id, function_id));
  const std::string prefix = FunctionKey(org_id, "");
  functions_.EraseIf(
      [&](const std::string& key, const CachedFunctionView&) { return key.starts_with(prefix); });
}

void DecisionCaches::DropAll() {
  keys_.Clear();
  functions_.Clear();
}

void DecisionCaches::ForgetChangedBy(std::string_view owner, std::string_view method,
                                     const std::vector<std::string>& segments,
                                     const std::string& caller_org_id) {
  if (method == "GET" || method == "HEAD" || segments.empty()) return;
  // A revoked API key or connected app (OAuth grant): its hashes are not in the route.
  if (owner == "auth" &&
      (segments[0] == "api-keys" ||
       (segments[0] == "oauth" && segments.size() > 1 && segments[1] == "grants"))) {
    NoteInvalidation();
    keys_.Clear();
  } else if (owner == "registry" && segments[0] == "functions" && segments.size() > 1) {
    FunctionChanged(core::NormalizeFunctionId(segments[1]));
  } else if (owner == "registry" && segments[0] == "workspace") {
    WorkspaceChanged(caller_org_id, "");
  }
}

}  // namespace toolgate::edge
