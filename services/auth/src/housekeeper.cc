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
      thread_([this] { Loop(); }) {}

Housekeeper::~Housekeeper() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  stop_cv_.notify_all();
  thread_.join();
  FlushUsage();
}

void Housekeeper::Loop() {
  int64_t last_prune_us = MonotonicUs(), last_purge_us = MonotonicUs();
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_cv_.wait_for(lock, kUsageInterval, [this] { return stopping_; })) {
    lock.unlock();
    FlushUsage();
    int64_t now_us = MonotonicUs();
    if (now_us - last_prune_us >= kPruneIntervalUs) {
      cache_.Prune(now_us);
      last_prune_us = now_us;
    }
    if (now_us - last_purge_us >= kPurgeIntervalUs) {
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
      last_purge_us = now_us;
    }
    lock.lock();
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
