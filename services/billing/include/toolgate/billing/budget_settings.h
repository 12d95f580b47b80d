// Spending limits as their owners set them (PUT /api-keys/{id}/budget, PUT /billing/budget):
// billing.budgets in PostgreSQL, one row per organization ('' key) and per API key, and the
// cache the invoke stage reads them from without a PostgreSQL read per call.
//
// Billing does not own API keys (auth does) and cannot read auth's tables, so a key's limits
// are recorded under (organization, key id) for whichever key id its organization names, and
// apply only to calls whose principal has both: a key of another organization never matches
// (docs/decisions.md, "Spending limits per key and per organization").
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "toolgate/base/bounded_ttl_cache.h"
#include "toolgate/base/status.h"
#include "toolgate/billing/balance_store.h"
#include "toolgate/pg/pg.h"

namespace toolgate::billing {

// One row's caps, in micro-USD; nullopt: no limit for that period.
struct BudgetSettings {
  std::optional<int64_t> daily_micro_usd;
  std::optional<int64_t> monthly_micro_usd;
};

// What a call is counted against beside its balance and grant: its organization's settings and
// its key's, each nullopt when never set.
struct CallBudgetSettings {
  std::optional<BudgetSettings> org;
  std::optional<BudgetSettings> key;
};

// billing.budgets. Thread-safe (pg::Pool is); Unavailable when PostgreSQL cannot be reached.
class BudgetSettingsStore {
 public:
  // pool must outlive the store.
  explicit BudgetSettingsStore(pg::Pool& pool) : pool_(pool) {}

  // key_id '': the organization's own limits. nullopt when never set.
  Result<std::optional<BudgetSettings>> Get(const std::string& org_id, const std::string& key_id);
  // Creates or replaces the row (never deletes it: see the migration).
  Status Put(const std::string& org_id, const std::string& key_id, const BudgetSettings& settings);
  // The organization's row and the key's (key_id '': a session or a grant, the org's alone), in
  // one query.
  Result<CallBudgetSettings> ForCall(const std::string& org_id, const std::string& key_id);

 private:
  pg::Pool& pool_;
};

// The settings of (organization, key) as the invoke stage reads them: cached for ttl_ms, and
// dropped at once on this replica when they change through its API (Invalidate). Another
// replica serves what it cached for up to ttl_ms more (docs/decisions.md). Thread-safe.
class BudgetSettingsCache {
 public:
  struct Options {
    int64_t ttl_ms = 5000;
    size_t capacity = 100'000;
  };
  // store must outlive the cache; clock_ms is a monotonic clock in milliseconds (tests drive it).
  BudgetSettingsCache(BudgetSettingsStore& store, Options options,
                      std::function<int64_t()> clock_ms = {});

  // What the cache holds; nullopt on a miss (then Load, off the delivery thread).
  std::optional<CallBudgetSettings> Find(const std::string& org_id, const std::string& key_id);
  // Reads PostgreSQL and caches the answer unless an invalidation overtook it.
  Result<CallBudgetSettings> Load(const std::string& org_id, const std::string& key_id);
  // Drops what is cached for the organization (its own limits apply to every key's entry).
  void Invalidate(const std::string& org_id);

 private:
  static std::string KeyOf(const std::string& org_id, const std::string& key_id);

  BudgetSettingsStore& store_;
  Options options_;
  std::function<int64_t()> clock_ms_;
  BoundedTtlCache<std::string, CallBudgetSettings> cache_;
};

// The period budgets a call is counted against at now_ms (Unix ms, UTC): for its key's and its
// organization's settings, when set, one daily and one monthly budget each, capped where a cap
// is set and counted without one where it is not (so that a cap set later counts what was spent
// before it). key_id '' (a session, a grant): the organization's alone.
std::vector<Budget> PeriodBudgetsFor(const CallBudgetSettings& settings, const std::string& org_id,
                                     const std::string& key_id, int64_t now_ms);

}  // namespace toolgate::billing
