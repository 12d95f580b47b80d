// BalanceStore: the fast, atomic side of billing in Redis. Every operation that reads and then
// writes is one Lua script, so concurrent invocations on any number of replicas can never
// overdraw. Holds, captures and releases run a whole batch in one script
// (services/billing/scripts), applied in order, each item as its own atomic step. Money is never a
// Lua number where it could lose a digit (only below 2^53): amounts stay decimal strings handed
// to INCRBY/DECRBY and compared as strings, so the arithmetic is exact 64-bit integer arithmetic.
//
// Keys:
//   tg:bal:<org>          balance in micro-USD; when present it equals SUM(ledger) of the org
//                         (the ledger in PostgreSQL is the system of record)
//   tg:res:<org>          micro-USD held by executions in flight
//   tg:conc:<org>         executions in flight
//   tg:queued:<org>       asynchronous executions held and waiting in the queue (not in flight
//                         until dispatch.lua starts them)
//   tg:rl:<key_id>        token bucket of one API key (hash: tokens, at)
//   tg:tmo:<org>          what is left of the organization's allowance of uncharged timeouts
//                         (hash: ms, at; negative: spent past it), refilling at
//                         Limits::uncharged_timeout_s_per_hour; absent: a full allowance
//   tg:hold:<execution>   one hold (hash: state, org, amount, which the scripts read, and
//                         detail, the rest of the HoldRecord as a v1::HoldDetail). Never holds
//                         secrets.
//   tg:holds              sorted set of held executions by expiry (ms), for the reaper
//   tg:credited:<ledger>  marks a top-up credited to tg:bal, so a retried credit applies once
//   tg:paid:<ledger>      marks a payout taken from tg:bal, so it is taken, and given back when
//                         its ledger row did not commit, once
//   tg:budget:grant:<id>  the budget of an OAuth grant (hash: reserved, spent, in micro-USD):
//                         held by its calls in flight, and charged to it; present (loaded) once
//                         spent is, which then equals the ledger's charges of the grant's
//                         executions. Holds list their budgets' keys (field budgets of
//                         tg:hold), so captures and releases move what the hold reserved.
//   tg:budget:key:<key_id>:<d|m>:<period>, tg:budget:org:<org>:<d|m>:<period>
//                         an API key's or an organization's spending limit for one UTC day
//                         or month (same hash), whose spent equals the ledger's charges of the
//                         key or organization in that period; expires kPeriodBudgetGraceMs
//                         after the period ends
//
// Thread-safe (redis::Client is). Every method returns Unavailable when Redis cannot be reached.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "toolgate/base/status.h"
#include "toolgate/billing/budget_period.h"
#include "toolgate/billing/config.h"
#include "toolgate/redis/redis.h"

namespace toolgate::billing {

// A budget of its own, beside the organization's balance, that a hold is counted against:
// reserved + spent + amount <= cap, in the same atomic step as the balance. An OAuth grant's
// (for the grant's life), and an API key's and an organization's spending limits (for one UTC
// day or month, docs/api.md "Spending limits"); a budget's spent is the sum of its charges,
// which the ledger can rebuild.
enum class BudgetKind { kGrant, kKey, kOrg };

struct Budget {
  BudgetKind kind = BudgetKind::kGrant;
  // The grant's id (a lower-case UUID), the API key's id, or the organization's id.
  std::string id;
  // What reserved + spent may reach; 0: counted, not capped (a cap set later then counts what
  // was spent before it).
  int64_t cap_micro_usd = 0;
  // kKey and kOrg: the day or month counted; a new period is a new budget.
  std::optional<BudgetPeriod> period;
  // kKey: the key's organization (the ledger's charges of the key are read by organization).
  std::string org_id;
};

// tg:budget:grant:<id>, tg:budget:key:<key_id>:d:<yyyy-mm-dd> (or :m:<yyyy-mm>),
// tg:budget:org:<org_id>:d:<yyyy-mm-dd> (or :m:<yyyy-mm>).
std::string BudgetKey(const Budget& budget);
// The budget a key names (without its cap, which is not stored, nor a key budget's org_id);
// nullopt for another key.
std::optional<Budget> BudgetOfKey(std::string_view key);
// A period budget's key outlives its period by this much (then Redis drops it): long enough for
// every hold counted in the period to be captured or released.
inline constexpr int64_t kPeriodBudgetGraceMs = 2 * 24 * 3600 * 1000LL;

// A budget as Redis has it; spent is nullopt until the budget is loaded.
struct BudgetView {
  std::optional<int64_t> spent_micro_usd;
  int64_t reserved_micro_usd = 0;
};

// What tg:hold:<execution_id> records: enough for any replica to release the hold and answer
// the edge without the job.
struct HoldRecord {
  std::string execution_id;
  std::string org_id;  // the caller, whose balance is held
  std::string owner_org_id;
  std::string key_id;  // the API key charged for the rate limit; empty: none
  // The key's expiry (0: a session), for X-Api-Key-Expires-At on an answer given from the hold.
  int64_t key_expires_at_ms = 0;
  int64_t amount_micro_usd = 0;
  std::string edge_reply;
  std::string traceparent;
  std::string runtime;
  std::string compute_type;
  int64_t created_ms = 0;
  int64_t expiry_ms = 0;  // when the reaper may settle or release it
  bool released = false;  // a tombstone left by ReleaseMode::kKeepTombstone
  // The budgets the hold is counted against, each at most once. GetHold returns them without
  // their caps, which only the hold itself compares.
  std::vector<Budget> budgets;
  // An estimate (POST .../estimate): checked exactly as a hold, and nothing changes: no rate
  // token is taken, nothing is reserved or recorded. Its kHeld outcome says what the hold would
  // leave.
  bool estimate = false;
  // An asynchronous call's hold: counted among the organization's queued executions
  // (Limits::queued_per_org) instead of those in flight, until Start moves it there.
  bool queued = false;
};

enum class HoldVerdict {
  kHeld,
  kAlreadyHeld,       // a hold for this execution exists: nothing changed
  kBalanceNotLoaded,  // tg:bal is absent: load it from the ledger (Load) and try again
  kRateLimited,
  kConcurrencyLimit,
  kTimeoutBudgetExhausted,  // the organization's allowance of uncharged timeouts is spent
  kInsufficientBalance,     // nothing held
  kBudgetNotLoaded,         // budgets[budget]'s spent is absent: LoadBudget and try again
  kBudgetExceeded,          // budgets[budget] cannot take the amount under its cap: nothing held
  kQueueFull,               // a queued hold: the organization's queue is full
};

// What Start did with a queued hold.
enum class StartVerdict {
  kStarted,        // now in flight, due at the expiry given
  kWait,           // the organization has its concurrency limit in flight: try again later
  kGone,           // no hold is held (cancelled, expired, settled): do not run it
  kStartedBefore,  // it left the queue before (a dispatcher that crashed after starting it)
};

struct HoldOutcome {
  HoldVerdict verdict = HoldVerdict::kHeld;
  // kRateLimited, kConcurrencyLimit and kTimeoutBudgetExhausted (for the last, the seconds until
  // the allowance has refilled past what was spent beyond it).
  int64_t retry_after_s = 0;
  int64_t available_micro_usd = 0;    // kInsufficientBalance
  size_t budget = 0;                  // kBudgetNotLoaded, kBudgetExceeded: its index in budgets
  int64_t budget_used_micro_usd = 0;  // kBudgetExceeded: reserved + spent
  // kHeld: what the hold left (for an estimate: would leave), this hold counted: the
  // organization's balance less everything reserved, and the tightest capped budget's remainder
  // (cap - reserved - spent) with its index in budgets (nullopt: no budget has a cap).
  int64_t available_after_micro_usd = 0;
  std::optional<size_t> tightest_budget{};
  int64_t budget_remaining_micro_usd = 0;
};

// A budget's name in answers (Summary.budget_limit, the estimate): "grant", "key_daily",
// "key_monthly", "org_daily" or "org_monthly".
std::string_view BudgetLimitName(const Budget& budget);

// The capture of one execution's charge.
struct SettleStep {
  std::string execution_id;
  std::string org_id;  // the caller
  std::string owner_org_id;
  int64_t total_micro_usd = 0;    // taken from the caller's balance
  int64_t revenue_micro_usd = 0;  // credited to the owner's balance when it is loaded
};

// The release of a hold whose handler did not run, from its execution's result.
struct UnrunRelease {
  std::string execution_id;
  std::string org_id;  // the caller
  // The sandbox time of a call that ran past its timeout (408, not charged), spent from the
  // organization's allowance (Limits::uncharged_timeout_s_per_hour) by the release itself, so
  // once however often the result is delivered; 0: the call did not time out.
  int64_t timeout_ms = 0;
};

struct ReleaseOutcome {
  bool released = false;  // false: it was already released or settled; nothing changed
  // This release's timeout spent what was left of the organization's allowance: its calls are
  // refused from now until the allowance refills.
  bool allowance_spent = false;
};

enum class ReleaseMode {
  // No charge can follow (the handler did not run, or no executor received the job).
  kDelete,
  // The reaper gives up waiting; a charge that still arrives must then be applied to the
  // balance alone, so the hold stays as a tombstone for a while (see Settle).
  kKeepTombstone,
};

// What TakePayout did.
struct PayoutTake {
  enum class Verdict {
    kTaken,
    kTakenBefore,   // the mark of this payout stands: nothing changed
    kNotLoaded,     // tg:bal is absent: load it from the ledger and try again
    kNotAvailable,  // balance - reserved < amount: nothing changed
  };
  Verdict verdict = Verdict::kTaken;
  int64_t available_micro_usd = 0;  // kNotAvailable: balance - reserved
};

// tg:bal and tg:res of one organization; balance is nullopt until loaded.
struct BalanceView {
  std::optional<int64_t> balance_micro_usd;
  int64_t reserved_micro_usd = 0;
};

class BalanceStore {
 public:
  // redis must outlive the store.
  BalanceStore(redis::Client& redis, Limits limits);

  // One atomic step, in the contract's order: per-key rate, per-org concurrency, the org's
  // allowance of uncharged timeouts, each budget's cap, then available = balance - reserved >=
  // amount. Held: reserved += amount, in flight += 1, each budget's reserved += amount, and the
  // hold is recorded.
  Result<HoldOutcome> Hold(const HoldRecord& hold);
  // Hold for many holds in one script and one round trip, applied in order; one Result each.
  // Should the script fail part way (Redis stopped, a key of the wrong type), every Result is
  // that failure though earlier holds may stand: undo with ReleaseMany (a no-op where nothing
  // was held).
  std::vector<Result<HoldOutcome>> HoldMany(const std::vector<const HoldRecord*>& holds);
  std::vector<Result<HoldOutcome>> HoldMany(const std::vector<HoldRecord>& holds);

  // Captures a charge: balance -= total, the hold's amount leaves reserved, in flight -= 1, the
  // owner's balance += revenue, in each of the hold's budgets the amount leaves reserved and
  // total joins spent, and the hold is deleted. On a tombstone only the balances and the
  // budgets' spent move.
  // Idempotent: returns false, changing nothing, when the hold is gone (already settled).
  Result<bool> Settle(const SettleStep& step);
  // Settle for many steps in one script and one round trip; one Result each (a failure part way
  // fails them all; retrying is safe, as Settle is idempotent).
  // written runs once the captures are on their way to Redis, before their fsync is waited for.
  std::vector<Result<bool>> SettleMany(const std::vector<SettleStep>& steps,
                                       const std::function<void()>& written = {});

  // Returns the hold's amount to the available balance and to its budgets, and ends it as an
  // execution in flight. Returns false, changing nothing, when it was already released or
  // settled.
  Result<bool> Release(const std::string& execution_id, const std::string& org_id,
                       ReleaseMode mode);
  // Release (kDelete) of many holds, given as HoldRecords, in one script; one Result each.
  std::vector<Result<bool>> ReleaseMany(const std::vector<const HoldRecord*>& holds);
  // Release (kDelete) of the holds of calls whose handler did not run, in one script, each
  // timeout spending its sandbox time from its organization's allowance; one Result each.
  std::vector<Result<ReleaseOutcome>> ReleaseUnrun(const std::vector<UnrunRelease>& releases);

  // A queued hold leaves the queue for an executor (scripts/dispatch.lua): in flight += 1 under
  // the organization's concurrency limit, queued -= 1, and the reaper's due time becomes
  // expiry_ms. One atomic step.
  Result<StartVerdict> Start(const std::string& execution_id, const std::string& org_id,
                             int64_t expiry_ms);
  // Undoes Start (no executor took the job): back among the queued. False when the hold is gone
  // or was not started.
  Result<bool> Unstart(const std::string& execution_id, const std::string& org_id);

  // nullopt when no such hold (or tombstone) exists.
  Result<std::optional<HoldRecord>> GetHold(const std::string& execution_id);
  // Execution ids of holds whose expiry is at or before now_ms, oldest first, at most max.
  Result<std::vector<std::string>> DueHolds(int64_t now_ms, size_t max);
  // Removes execution_id from the due list when its hold no longer exists (a list entry
  // outlived its hold, e.g. after a manual repair). Leaves an existing hold alone.
  Status ForgetDue(const std::string& execution_id);

  Result<BalanceView> Read(const std::string& org_id);
  // Sets tg:bal to ledger_sum unless it is already present; true when it was set.
  Result<bool> Load(const std::string& org_id, int64_t ledger_sum);
  // The organizations among org_ids whose balance is not loaded.
  Result<std::vector<std::string>> NotLoaded(const std::vector<std::string>& org_ids);
  // Adds a committed top-up to a loaded balance, once per ledger id however often it is
  // retried. Returns false when it was credited before or the balance is not loaded.
  Result<bool> Credit(const std::string& org_id, int64_t ledger_id, int64_t amount_micro_usd);

  // For reconcile: the raw balance, and a compare-and-set that leaves a balance which moved
  // since it was read alone (returns false then).
  Result<std::optional<int64_t>> Balance(const std::string& org_id);
  Result<bool> Repair(const std::string& org_id, int64_t expected, int64_t value);

  // Sets a budget's spent to ledger_spent unless the budget is loaded already; true when it was
  // set (a period budget's key then expires kPeriodBudgetGraceMs after its period). As with
  // balances, a budget is loaded before any hold counts against it and never unloaded, so no
  // capture can fall between the ledger's sum and this.
  Result<bool> LoadBudget(const Budget& budget, int64_t ledger_spent);
  Result<BudgetView> ReadBudget(const Budget& budget);
  // For reconcile: sets a loaded budget's spent to value unless it is no longer expected (it
  // moved since it was read: returns false then, changing nothing).
  Result<bool> RepairBudget(const Budget& budget, int64_t expected, int64_t value);

  // Takes a payout (ledger row payout_ledger_id, not yet committed) from a loaded balance, in one
  // atomic step (scripts/payout.lua): only when available = balance - reserved >= amount, so no
  // call in flight can find its hold's money paid out; once per ledger id (tg:paid:<id>).
  Result<PayoutTake> TakePayout(const std::string& org_id, int64_t payout_ledger_id,
                                int64_t amount_micro_usd);
  // Gives a taken payout back to the balance (its ledger row did not commit); once, and only
  // while its mark stands. Returns false when there was nothing to give back.
  Result<bool> ReturnPayout(const std::string& org_id, int64_t payout_ledger_id,
                            int64_t amount_micro_usd);
  // Every loaded balance (tg:bal:*) by organization, read with SCAN: for the whole-ledger
  // identity (ledger_identity.h). Not a snapshot: balances that move meanwhile are read as they
  // are when reached.
  Result<std::vector<std::pair<std::string, int64_t>>> LoadedBalances();

 private:
  struct ReleaseItem {
    const std::string& execution_id;
    const std::string& org_id;
    int64_t tombstone_ttl_ms;  // 0: delete the hold
    int64_t timeout_ms;        // see UnrunRelease
  };
  // Release of many holds in one script; one Result each.
  std::vector<Result<ReleaseOutcome>> ReleaseAll(const std::vector<ReleaseItem>& releases);

  redis::Client& redis_;
  Limits limits_;
};

}  // namespace toolgate::billing
