#include "toolgate/auth/housekeeper.h"

#include <chrono>

#include "toolgate/base/log.h"
#include "toolgate/base/time.h"

namespace toolgate::auth {
namespace {

constexpr auto kUsageInterval = std::chrono::seconds(1);
constexpr int64_t kPruneIntervalUs = 60LL * 1000 * 1000;
constexpr int64_t kPurgeIntervalUs = 3600LL * 1000 * 1000;

}  // namespace

Housekeeper::Housekeeper(KeyStore& keys, AccountStore& accounts, KeyCache& cache,
                         core::UsageBatcher& usage, SignInThrottle& throttle, OAuthStore& oauth)
    : keys_(keys),
      accounts_(accounts),
      cache_(cache),
      usage_(usage),
      throttle_(throttle),
      oauth_(oauth),
      last_prune_us_(MonotonicUs()),
      last_purge_us_(MonotonicUs()),
      task_(std::in_place, kUsageInterval, [this] { Tick(); }) {}

Housekeeper::~Housekeeper() {
  task_.reset();  // no tick runs after this: the last uses are written here, once
  FlushUsage();
}

void Housekeeper::Tick() {
  FlushUsage();
  const int64_t now_us = MonotonicUs();
  if (now_us - last_prune_us_ >= kPruneIntervalUs) {
    cache_.Prune(now_us);
    last_prune_us_ = now_us;
  }
  if (now_us - last_purge_us_ >= kPurgeIntervalUs) {
    auto purged = accounts_.PurgeExpiredSessions();
    if (!purged.ok()) {
      log::Warn("expired sessions not purged").Str("error", purged.status().ToString());
    }
    if (Status s = throttle_.Prune(); !s.ok()) {
      log::Warn("sign-in throttle not pruned").Str("error", s.ToString());
    }
    if (auto gone = oauth_.PurgeExpired(); !gone.ok()) {
      log::Warn("expired OAuth rows not purged").Str("error", gone.status().ToString());
    }
    last_purge_us_ = now_us;
  }
}

void Housekeeper::FlushUsage() {
  auto batch = usage_.Take();
  if (batch.empty()) return;
  Status s = keys_.TouchLastUsed(batch);
  if (s.ok()) return;
  log::Warn("last_used_at not written; retrying").Str("error", s.ToString());
  for (const auto& [key_id, ms] : batch) usage_.Record(key_id, ms);
}

}  // namespace toolgate::auth
