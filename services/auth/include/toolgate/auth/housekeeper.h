// Housekeeper: auth's background writer, one thread.
//
// Every second it writes the core::UsageBatcher's key uses to api_keys.last_used_at in one
// statement (so each key's row is written at most once a second, and never on the invoke path); a
// batch that fails is kept for the next second. Every minute it prunes stale KeyCache entries;
// every hour it deletes expired sessions, sign-in throttle rows that no longer count, and OAuth
// requests, codes and tokens a day past their expiry.
//
// Everything passed to the constructor must outlive the Housekeeper.
#pragma once

#include <cstdint>
#include <optional>

#include "toolgate/auth/account_store.h"
#include "toolgate/auth/key_cache.h"
#include "toolgate/auth/key_store.h"
#include "toolgate/auth/oauth_store.h"
#include "toolgate/auth/sign_in_throttle.h"
#include "toolgate/core/usage_batcher.h"
#include "toolgate/net/periodic_task.h"

namespace toolgate::auth {

class Housekeeper {
 public:
  // Starts the thread.
  Housekeeper(KeyStore& keys, AccountStore& accounts, KeyCache& cache, core::UsageBatcher& usage,
              SignInThrottle& throttle, OAuthStore& oauth);
  // Stops the thread and writes the uses recorded since the last batch.
  ~Housekeeper();
  Housekeeper(const Housekeeper&) = delete;
  Housekeeper& operator=(const Housekeeper&) = delete;

 private:
  void Tick();  // on the task's thread
  void FlushUsage();

  KeyStore& keys_;
  AccountStore& accounts_;
  KeyCache& cache_;
  core::UsageBatcher& usage_;
  SignInThrottle& throttle_;
  OAuthStore& oauth_;
  int64_t last_prune_us_;                  // the task's thread only
  int64_t last_purge_us_;                  // the task's thread only
  std::optional<net::PeriodicTask> task_;  // last: ticks once every member above exists
};

}  // namespace toolgate::auth
