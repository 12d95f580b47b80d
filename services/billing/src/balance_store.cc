#include "toolgate/billing/balance_store.h"

#include <algorithm>
#include <charconv>
#include <map>

#include "BillingScript_capture.h"
#include "BillingScript_dispatch.h"
#include "BillingScript_hold.h"
#include "BillingScript_payout.h"
#include "BillingScript_prelude.h"
#include "BillingScript_release.h"
#include "toolgate/metrics/metrics.h"
#include "toolgate/v1/toolgate.pb.h"

namespace toolgate::billing {
namespace {

constexpr const char* kHolds = "tg:holds";
// A charge for a hold the reaper released can still arrive while the executor retries; the
// tombstone that lets it be applied exactly once lives this long.
constexpr int64_t kTombstoneTtlMs = 7 * 24 * 3600 * 1000LL;
// A credited top-up is remembered this long against retries of its credit.
constexpr int64_t kCreditMarkTtlMs = 24 * 3600 * 1000LL;
// A taken payout is remembered this long, for giving it back when its ledger row did not commit.
constexpr int64_t kPayoutMarkTtlMs = 24 * 3600 * 1000LL;
// Balances read per SCAN step by LoadedBalances.
constexpr const char* kBalanceScanCount = "1000";

std::string BalanceKey(const std::string& org) {
  return "tg:bal:" + org;
}
std::string ReservedKey(const std::string& org) {
  return "tg:res:" + org;
}
std::string InFlightKey(const std::string& org) {
  return "tg:conc:" + org;
}
std::string QueuedKey(const std::string& org) {
  return "tg:queued:" + org;
}
std::string RateKey(const std::string& key_id) {
  return "tg:rl:" + key_id;
}
std::string HoldKey(const std::string& execution_id) {
  return "tg:hold:" + execution_id;
}
std::string TimeoutAllowanceKey(const std::string& org) {
  return "tg:tmo:" + org;
}

constexpr std::string_view kGrantBudgetPrefix = "tg:budget:grant:";
constexpr std::string_view kKeyBudgetPrefix = "tg:budget:key:";
constexpr std::string_view kOrgBudgetPrefix = "tg:budget:org:";

// The scripts count the allowance in milliseconds.
std::string TimeoutAllowanceMs(const Limits& limits) {
  return std::to_string(limits.uncharged_timeout_s_per_hour * 1000);
}

// Hold, capture and release take whole batches: one EVALSHA per batch (services/billing/scripts),
// each after the helpers they share.
std::string WithPrelude(std::string_view script) {
  return std::string(BillingScript_prelude()) + std::string(script);
}
const redis::Script kHoldScript{WithPrelude(BillingScript_hold())};
const redis::Script kCaptureScript{WithPrelude(BillingScript_capture())};
const redis::Script kReleaseScript{WithPrelude(BillingScript_release())};
const redis::Script kPayoutScript{WithPrelude(BillingScript_payout())};
const redis::Script kDispatchScript{std::string(BillingScript_dispatch())};

// KEYS: bal mark ; ARGV: amount. 1 given back, 0 nothing to give back (never taken, or given
// back before).
const redis::Script kReturnPayoutScript(R"lua(
if redis.call('DEL', KEYS[2]) == 0 then return 0 end
redis.call('INCRBY', KEYS[1], ARGV[1])
return 1
)lua");

// KEYS: hold holds ; ARGV: execution_id
const redis::Script kForgetDueScript(R"lua(
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
return redis.call('ZREM', KEYS[2], ARGV[1])
)lua");

// KEYS: bal... ; returns the 1-based positions of the absent keys.
const redis::Script kNotLoadedScript(R"lua(
local out = {}
for i = 1, #KEYS do
  if redis.call('EXISTS', KEYS[i]) == 0 then out[#out + 1] = i end
end
return out
)lua");

// KEYS: bal mark ; ARGV: amount mark_ttl_ms. 1 credited, 0 credited before, -1 not loaded.
const redis::Script kCreditScript(R"lua(
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
if not redis.call('SET', KEYS[2], '1', 'NX', 'PX', ARGV[2]) then return 0 end
redis.call('INCRBY', KEYS[1], ARGV[1])
return 1
)lua");

// KEYS: bal ; ARGV: expected value
const redis::Script kRepairScript(R"lua(
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2])
return 1
)lua");

// KEYS: budget ; ARGV: spent, expiry (Unix ms). Returns 1 when it set spent.
const redis::Script kLoadPeriodBudgetScript(R"lua(
if redis.call('HSETNX', KEYS[1], 'spent', ARGV[1]) == 0 then return 0 end
redis.call('PEXPIREAT', KEYS[1], ARGV[2])
return 1
)lua");

// KEYS: budget ; ARGV: expected value (of spent)
const redis::Script kRepairBudgetScript(R"lua(
if redis.call('HGET', KEYS[1], 'spent') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'spent', ARGV[2])
return 1
)lua");

std::optional<int64_t> ToInt(const std::string& text) {
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || ptr != text.data() + text.size()) return std::nullopt;
  return v;
}

Status Unexpected(const char* what) {
  return Status::Internal(std::string("redis: unexpected reply to ") + what);
}

// An integer reply (or an integer in a bulk string, as array elements of script replies are).
std::optional<int64_t> IntOf(const redis::Reply& r) {
  if (r.type == redis::Reply::Type::kInteger) return r.integer;
  if (r.type == redis::Reply::Type::kString) return ToInt(r.str);
  return std::nullopt;
}

}  // namespace

std::string BudgetKey(const Budget& budget) {
  std::string_view prefix;
  switch (budget.kind) {
    case BudgetKind::kGrant:
      return std::string(kGrantBudgetPrefix) + budget.id;
    case BudgetKind::kKey:
      prefix = kKeyBudgetPrefix;
      break;
    case BudgetKind::kOrg:
      prefix = kOrgBudgetPrefix;
      break;
  }
  if (!budget.period) return {};
  return std::string(prefix) + budget.id + ":" + std::string(PeriodUnitTag(budget.period->unit)) +
         ":" + budget.period->name;
}

std::optional<Budget> BudgetOfKey(std::string_view key) {
  auto starts = [&](std::string_view prefix) { return key.substr(0, prefix.size()) == prefix; };
  if (starts(kGrantBudgetPrefix)) {
    return Budget{
        BudgetKind::kGrant, std::string(key.substr(kGrantBudgetPrefix.size())), 0, {}, {}};
  }
  BudgetKind kind;
  if (starts(kKeyBudgetPrefix)) {
    kind = BudgetKind::kKey;
    key.remove_prefix(kKeyBudgetPrefix.size());
  } else if (starts(kOrgBudgetPrefix)) {
    kind = BudgetKind::kOrg;
    key.remove_prefix(kOrgBudgetPrefix.size());
  } else {
    return std::nullopt;
  }
  // <id>:<d|m>:<period>; the period holds no ':', so the last two separate the parts.
  size_t last = key.rfind(':');
  if (last == std::string_view::npos || last < 2 || key[last - 2] != ':') return std::nullopt;
  std::string_view tag = key.substr(last - 1, 1);
  PeriodUnit unit = tag == "d" ? PeriodUnit::kDay : PeriodUnit::kMonth;
  if (tag != "d" && tag != "m") return std::nullopt;
  auto period = ParsePeriod(unit, key.substr(last + 1));
  if (!period || last == 2) return std::nullopt;
  return Budget{kind, std::string(key.substr(0, last - 2)), 0, std::move(*period), {}};
}

std::string_view BudgetLimitName(const Budget& budget) {
  const bool daily = budget.period && budget.period->unit == PeriodUnit::kDay;
  switch (budget.kind) {
    case BudgetKind::kGrant:
      return "grant";
    case BudgetKind::kKey:
      return daily ? "key_daily" : "key_monthly";
    case BudgetKind::kOrg:
      return daily ? "org_daily" : "org_monthly";
  }
  return "grant";
}

BalanceStore::BalanceStore(redis::Client& redis, Limits limits) : redis_(redis), limits_(limits) {}

namespace {

std::string DetailOf(const HoldRecord& hold) {
  v1::HoldDetail d;
  d.set_owner_org_id(hold.owner_org_id);
  d.set_key_id(hold.key_id);
  d.set_key_expires_at_ms(hold.key_expires_at_ms);
  d.set_edge_reply(hold.edge_reply);
  d.set_traceparent(hold.traceparent);
  d.set_runtime(hold.runtime);
  d.set_compute_type(hold.compute_type);
  d.set_created_ms(hold.created_ms);
  d.set_expiry_ms(hold.expiry_ms);
  return d.SerializeAsString();
}

bool ReadDetail(const std::string& bytes, HoldRecord& h) {
  v1::HoldDetail d;
  if (!d.ParseFromString(bytes)) return false;
  h.owner_org_id = d.owner_org_id();
  h.key_id = d.key_id();
  h.key_expires_at_ms = d.key_expires_at_ms();
  h.edge_reply = d.edge_reply();
  h.traceparent = d.traceparent();
  h.runtime = d.runtime();
  h.compute_type = d.compute_type();
  h.created_ms = d.created_ms();
  h.expiry_ms = d.expiry_ms();
  return true;
}

// The reply of a batch script: an array with one element per item, or the failure every item
// shares.
Result<std::vector<redis::Reply>> ItemsOf(Result<redis::Reply> reply, size_t count,
                                          const char* what) {
  if (!reply.ok()) return reply.status();
  if (reply->type != redis::Reply::Type::kArray || reply->elements.size() != count) {
    return Unexpected(what);
  }
  return std::move(reply->elements);
}

// budgets: how many the hold listed.
Result<HoldOutcome> HoldOutcomeOf(const redis::Reply& reply, int64_t budgets) {
  const auto& e = reply.elements;
  if (reply.type != redis::Reply::Type::kArray || e.empty() || !IntOf(e[0])) {
    return Unexpected("hold");
  }
  HoldOutcome out;
  switch (*IntOf(e[0])) {
    case 0: {
      // {0, balance, reserved, then cap and used per budget}.
      if (e.size() != 3 + 2 * static_cast<size_t>(budgets) || !IntOf(e[1]) || !IntOf(e[2])) {
        return Unexpected("hold");
      }
      out.verdict = HoldVerdict::kHeld;
      out.available_after_micro_usd = *IntOf(e[1]) - *IntOf(e[2]);
      for (size_t i = 0; i < static_cast<size_t>(budgets); ++i) {
        auto cap = IntOf(e[3 + 2 * i]);
        auto used = IntOf(e[4 + 2 * i]);
        if (!cap || !used) return Unexpected("hold");
        if (*cap == 0) continue;  // counted, not capped
        const int64_t remaining = *cap - *used;
        if (!out.tightest_budget || remaining < out.budget_remaining_micro_usd) {
          out.tightest_budget = i;
          out.budget_remaining_micro_usd = remaining;
        }
      }
      return out;
    }
    case 1:
      out.verdict = HoldVerdict::kAlreadyHeld;
      return out;
    case 2:
      out.verdict = HoldVerdict::kBalanceNotLoaded;
      return out;
    case 3:
    case 4:
    case 6:
    case 9:
      if (e.size() < 2 || !IntOf(e[1])) return Unexpected("hold");
      out.verdict = *IntOf(e[0]) == 3   ? HoldVerdict::kRateLimited
                    : *IntOf(e[0]) == 4 ? HoldVerdict::kConcurrencyLimit
                    : *IntOf(e[0]) == 9 ? HoldVerdict::kQueueFull
                                        : HoldVerdict::kTimeoutBudgetExhausted;
      out.retry_after_s = *IntOf(e[1]);
      return out;
    case 5: {
      if (e.size() < 3 || !IntOf(e[1]) || !IntOf(e[2])) return Unexpected("hold");
      out.verdict = HoldVerdict::kInsufficientBalance;
      out.available_micro_usd = *IntOf(e[1]) - *IntOf(e[2]);
      return out;
    }
    case 7:
    case 8: {
      // The budget's position counts from 1 in the script.
      if (e.size() < 2 || !IntOf(e[1]) || *IntOf(e[1]) < 1 || *IntOf(e[1]) > budgets) {
        return Unexpected("hold");
      }
      out.budget = static_cast<size_t>(*IntOf(e[1]) - 1);
      if (*IntOf(e[0]) == 7) {
        out.verdict = HoldVerdict::kBudgetNotLoaded;
        return out;
      }
      if (e.size() < 4 || !IntOf(e[3])) return Unexpected("hold");
      out.verdict = HoldVerdict::kBudgetExceeded;
      out.budget_used_micro_usd = *IntOf(e[3]);
      return out;
    }
  }
  return Unexpected("hold");
}

// 1 changed, 0 found nothing to change, -1 a hold of another organization.
Result<bool> ChangedOf(const redis::Reply& reply, const char* what) {
  auto v = IntOf(reply);
  if (!v || *v < -1 || *v > 1) return Unexpected(what);
  if (*v == -1) return Status::Internal(std::string(what) + ": hold of another organization");
  return *v == 1;
}

// release.lua's answer: 2 released and the allowance spent, 1 released, 0 nothing to release,
// -1 a hold of another organization.
Result<ReleaseOutcome> ReleasedOf(const redis::Reply& reply) {
  auto v = IntOf(reply);
  if (!v || *v < -1 || *v > 2) return Unexpected("release");
  if (*v == -1) return Status::Internal("release: hold of another organization");
  return ReleaseOutcome{*v >= 1, *v == 2};
}

Result<bool> WhetherReleased(Result<ReleaseOutcome> outcome) {
  if (!outcome.ok()) return outcome.status();
  return outcome->released;
}

// Holds by verdict, and captures and releases that changed a hold (a repeated one that found
// the hold gone does not count).
Result<HoldOutcome> CountHold(Result<HoldOutcome> outcome) {
  static auto& family = metrics::Registry::Global().Counter(
      "toolgate_billing_holds_total",
      "Hold attempts by outcome: held, already_held, not_loaded (a balance or a budget), "
      "rate_limited, concurrency_limit, timeout_budget_exhausted, insufficient_balance, "
      "budget_exceeded, queue_full or error.",
      {"outcome"});
  // By HoldVerdict, in its order.
  static metrics::Counter* by_verdict[] = {&family.With({"held"}),
                                           &family.With({"already_held"}),
                                           &family.With({"not_loaded"}),
                                           &family.With({"rate_limited"}),
                                           &family.With({"concurrency_limit"}),
                                           &family.With({"timeout_budget_exhausted"}),
                                           &family.With({"insufficient_balance"}),
                                           &family.With({"not_loaded"}),
                                           &family.With({"budget_exceeded"}),
                                           &family.With({"queue_full"})};
  static auto& error = family.With({"error"});
  if (!outcome.ok()) {
    error.Inc();
  } else {
    by_verdict[static_cast<size_t>(outcome->verdict)]->Inc();
  }
  return outcome;
}

Result<bool> CountCapture(Result<bool> captured) {
  static auto& captures =
      metrics::Registry::Global()
          .Counter("toolgate_billing_captures_total", "Holds captured as charges.")
          .With({});
  if (captured.ok() && *captured) captures.Inc();
  return captured;
}

// timeout_ms: the sandbox time of the uncharged timeout the release ends (0: none).
Result<ReleaseOutcome> CountRelease(Result<ReleaseOutcome> released, int64_t timeout_ms) {
  static auto& releases =
      metrics::Registry::Global()
          .Counter("toolgate_billing_releases_total", "Holds released without a charge.")
          .With({});
  static auto& timed_out =
      metrics::Registry::Global()
          .Counter("toolgate_billing_uncharged_timeout_ms_total",
                   "Sandbox time of calls that ran past their timeout (408, not charged), in "
                   "milliseconds.")
          .With({});
  if (!released.ok() || !released->released) return released;
  releases.Inc();
  if (timeout_ms > 0) timed_out.Inc(static_cast<uint64_t>(timeout_ms));
  return released;
}

}  // namespace

Result<HoldOutcome> BalanceStore::Hold(const HoldRecord& hold) {
  return std::move(HoldMany(std::vector<const HoldRecord*>{&hold}).front());
}

std::vector<Result<HoldOutcome>> BalanceStore::HoldMany(const std::vector<HoldRecord>& holds) {
  std::vector<const HoldRecord*> pointers;
  pointers.reserve(holds.size());
  for (const auto& hold : holds) pointers.push_back(&hold);
  return HoldMany(pointers);
}

std::vector<Result<HoldOutcome>> BalanceStore::HoldMany(
    const std::vector<const HoldRecord*>& holds) {
  std::vector<Result<HoldOutcome>> out;
  if (holds.empty()) return out;
  std::vector<std::string> keys{kHolds};
  std::vector<std::string> args{
      std::to_string(limits_.rate_burst), std::to_string(limits_.concurrency_per_org),
      TimeoutAllowanceMs(limits_), std::to_string(limits_.queued_per_org)};
  keys.reserve(1 + holds.size() * 7);
  args.reserve(3 + holds.size() * 9);
  const std::string rate = std::to_string(limits_.rate_per_key_per_s);
  for (const HoldRecord* h : holds) {
    const HoldRecord& hold = *h;
    bool limit_rate = limits_.rate_per_key_per_s > 0 && !hold.key_id.empty();
    keys.push_back(BalanceKey(hold.org_id));
    keys.push_back(ReservedKey(hold.org_id));
    keys.push_back(hold.queued ? QueuedKey(hold.org_id) : InFlightKey(hold.org_id));
    keys.push_back(RateKey(hold.key_id));
    keys.push_back(HoldKey(hold.execution_id));
    keys.push_back(TimeoutAllowanceKey(hold.org_id));
    args.push_back(hold.execution_id);
    args.push_back(std::to_string(hold.amount_micro_usd));
    args.push_back(limit_rate ? rate : "0");
    args.push_back(std::to_string(hold.expiry_ms));
    args.push_back(hold.org_id);
    args.push_back(DetailOf(hold));
    args.push_back(hold.estimate ? "estimate" : hold.queued ? "queue" : "hold");
    args.push_back(std::to_string(hold.budgets.size()));
    for (const Budget& budget : hold.budgets) {
      keys.push_back(BudgetKey(budget));
      args.push_back(std::to_string(std::max<int64_t>(0, budget.cap_micro_usd)));
    }
  }
  auto items = ItemsOf(redis_.Eval(kHoldScript, keys, args), holds.size(), "hold");
  out.reserve(holds.size());
  for (size_t i = 0; i < holds.size(); ++i) {
    const auto budgets = static_cast<int64_t>(holds[i]->budgets.size());
    auto outcome =
        items.ok() ? HoldOutcomeOf((*items)[i], budgets) : Result<HoldOutcome>(items.status());
    // An estimate holds nothing, so it is no hold to count.
    out.push_back(holds[i]->estimate ? std::move(outcome) : CountHold(std::move(outcome)));
  }
  return out;
}

Result<bool> BalanceStore::Settle(const SettleStep& step) {
  return std::move(SettleMany({step}).front());
}

std::vector<Result<bool>> BalanceStore::SettleMany(const std::vector<SettleStep>& steps,
                                                   const std::function<void()>& written) {
  std::vector<Result<bool>> out;
  if (steps.empty()) {
    if (written) written();
    return out;
  }
  std::vector<std::string> keys{kHolds};
  std::vector<std::string> args;
  keys.reserve(1 + steps.size() * 5);
  args.reserve(steps.size() * 4);
  for (const auto& step : steps) {
    const std::string& owner = step.owner_org_id.empty() ? step.org_id : step.owner_org_id;
    keys.push_back(HoldKey(step.execution_id));
    keys.push_back(BalanceKey(step.org_id));
    keys.push_back(ReservedKey(step.org_id));
    keys.push_back(InFlightKey(step.org_id));
    keys.push_back(BalanceKey(owner));
    args.push_back(step.execution_id);
    args.push_back(step.org_id);
    args.push_back(std::to_string(step.total_micro_usd));
    args.push_back(std::to_string(step.revenue_micro_usd));
  }
  auto items = ItemsOf(redis_.Eval(kCaptureScript, keys, args, written), steps.size(), "capture");
  out.reserve(steps.size());
  for (size_t i = 0; i < steps.size(); ++i) {
    out.push_back(CountCapture(items.ok() ? ChangedOf((*items)[i], "capture")
                                          : Result<bool>(items.status())));
  }
  return out;
}

Result<bool> BalanceStore::Release(const std::string& execution_id, const std::string& org_id,
                                   ReleaseMode mode) {
  int64_t ttl = mode == ReleaseMode::kKeepTombstone ? kTombstoneTtlMs : 0;
  return WhetherReleased(std::move(ReleaseAll({{execution_id, org_id, ttl, 0}}).front()));
}

std::vector<Result<bool>> BalanceStore::ReleaseMany(const std::vector<const HoldRecord*>& holds) {
  std::vector<ReleaseItem> items;
  items.reserve(holds.size());
  for (const HoldRecord* h : holds) items.push_back({h->execution_id, h->org_id, 0, 0});
  std::vector<Result<bool>> out;
  out.reserve(holds.size());
  for (auto& released : ReleaseAll(items)) out.push_back(WhetherReleased(std::move(released)));
  return out;
}

std::vector<Result<ReleaseOutcome>> BalanceStore::ReleaseUnrun(
    const std::vector<UnrunRelease>& releases) {
  std::vector<ReleaseItem> items;
  items.reserve(releases.size());
  for (const UnrunRelease& r : releases) {
    items.push_back({r.execution_id, r.org_id, 0, std::max<int64_t>(0, r.timeout_ms)});
  }
  return ReleaseAll(items);
}

std::vector<Result<ReleaseOutcome>> BalanceStore::ReleaseAll(
    const std::vector<ReleaseItem>& releases) {
  std::vector<Result<ReleaseOutcome>> out;
  if (releases.empty()) return out;
  std::vector<std::string> keys{kHolds};
  std::vector<std::string> args{TimeoutAllowanceMs(limits_)};
  keys.reserve(1 + releases.size() * 5);
  args.reserve(1 + releases.size() * 4);
  for (const auto& r : releases) {
    keys.push_back(HoldKey(r.execution_id));
    keys.push_back(ReservedKey(r.org_id));
    keys.push_back(InFlightKey(r.org_id));
    keys.push_back(TimeoutAllowanceKey(r.org_id));
    keys.push_back(QueuedKey(r.org_id));
    args.push_back(r.execution_id);
    args.push_back(r.org_id);
    args.push_back(std::to_string(r.tombstone_ttl_ms));
    args.push_back(std::to_string(r.timeout_ms));
  }
  auto items = ItemsOf(redis_.Eval(kReleaseScript, keys, args), releases.size(), "release");
  out.reserve(releases.size());
  for (size_t i = 0; i < releases.size(); ++i) {
    out.push_back(
        CountRelease(items.ok() ? ReleasedOf((*items)[i]) : Result<ReleaseOutcome>(items.status()),
                     releases[i].timeout_ms));
  }
  return out;
}

Result<StartVerdict> BalanceStore::Start(const std::string& execution_id, const std::string& org_id,
                                         int64_t expiry_ms) {
  auto r = redis_.Eval(kDispatchScript,
                       {kHolds, HoldKey(execution_id), InFlightKey(org_id), QueuedKey(org_id)},
                       {"take", std::to_string(limits_.concurrency_per_org), execution_id,
                        std::to_string(expiry_ms)});
  if (!r.ok()) return r.status();
  auto code = IntOf(*r);
  if (!code || *code < 0 || *code > 3) return Unexpected("dispatch");
  return static_cast<StartVerdict>(*code);
}

Result<bool> BalanceStore::Unstart(const std::string& execution_id, const std::string& org_id) {
  auto r = redis_.Eval(kDispatchScript,
                       {kHolds, HoldKey(execution_id), InFlightKey(org_id), QueuedKey(org_id)},
                       {"untake", "0", execution_id, "0"});
  if (!r.ok()) return r.status();
  auto code = IntOf(*r);
  if (!code) return Unexpected("dispatch");
  return *code == 0;
}

Result<std::optional<HoldRecord>> BalanceStore::GetHold(const std::string& execution_id) {
  auto reply = redis_.Command({"HGETALL", HoldKey(execution_id)});
  if (!reply.ok()) return reply.status();
  if (reply->type != redis::Reply::Type::kArray) return Unexpected("HGETALL");
  if (reply->elements.empty()) return std::optional<HoldRecord>();
  HoldRecord h;
  h.execution_id = execution_id;
  const auto& e = reply->elements;
  for (size_t i = 0; i + 1 < e.size(); i += 2) {
    const std::string& field = e[i].str;
    const std::string& value = e[i + 1].str;
    if (field == "state") h.released = value == "released";
    if (field == "org") h.org_id = value;
    if (field == "amount") h.amount_micro_usd = ToInt(value).value_or(0);
    if (field == "detail" && !ReadDetail(value, h)) return Unexpected("HGETALL (hold detail)");
    if (field == "budgets") {
      for (size_t at = 0; at < value.size();) {
        size_t end = std::min(value.find(' ', at), value.size());
        auto budget = BudgetOfKey(std::string_view(value).substr(at, end - at));
        if (!budget) return Unexpected("HGETALL (hold budgets)");
        h.budgets.push_back(std::move(*budget));
        at = end + 1;
      }
    }
    // A hold written before the record's detail was one field kept each in a field of its own.
    if (field == "owner") h.owner_org_id = value;
    if (field == "key_id") h.key_id = value;
    if (field == "key_expires_at_ms") h.key_expires_at_ms = ToInt(value).value_or(0);
    if (field == "edge_reply") h.edge_reply = value;
    if (field == "traceparent") h.traceparent = value;
    if (field == "runtime") h.runtime = value;
    if (field == "compute_type") h.compute_type = value;
    if (field == "created_ms") h.created_ms = ToInt(value).value_or(0);
    if (field == "expiry_ms") h.expiry_ms = ToInt(value).value_or(0);
  }
  // A key's budget is the key's in its caller's organization.
  for (Budget& b : h.budgets) {
    if (b.kind == BudgetKind::kKey) b.org_id = h.org_id;
  }
  return std::optional<HoldRecord>(std::move(h));
}

Result<std::vector<std::string>> BalanceStore::DueHolds(int64_t now_ms, size_t max) {
  auto reply = redis_.Command(
      {"ZRANGEBYSCORE", kHolds, "-inf", std::to_string(now_ms), "LIMIT", "0", std::to_string(max)});
  if (!reply.ok()) return reply.status();
  if (reply->type != redis::Reply::Type::kArray) return Unexpected("ZRANGEBYSCORE");
  std::vector<std::string> out;
  for (const auto& e : reply->elements) out.push_back(e.str);
  return out;
}

Status BalanceStore::ForgetDue(const std::string& execution_id) {
  auto reply = redis_.Eval(kForgetDueScript, {HoldKey(execution_id), kHolds}, {execution_id});
  return reply.ok() ? Status::Ok() : reply.status();
}

Result<BalanceView> BalanceStore::Read(const std::string& org_id) {
  auto reply = redis_.Command({"MGET", BalanceKey(org_id), ReservedKey(org_id)});
  if (!reply.ok()) return reply.status();
  if (reply->type != redis::Reply::Type::kArray || reply->elements.size() != 2) {
    return Unexpected("MGET");
  }
  BalanceView view;
  if (reply->elements[0].type == redis::Reply::Type::kString) {
    view.balance_micro_usd = ToInt(reply->elements[0].str);
    if (!view.balance_micro_usd) return Unexpected("MGET");
  }
  if (reply->elements[1].type == redis::Reply::Type::kString) {
    view.reserved_micro_usd = ToInt(reply->elements[1].str).value_or(0);
  }
  return view;
}

Result<bool> BalanceStore::Load(const std::string& org_id, int64_t ledger_sum) {
  auto reply = redis_.Command({"SET", BalanceKey(org_id), std::to_string(ledger_sum), "NX"});
  if (!reply.ok()) return reply.status();
  return reply->type == redis::Reply::Type::kStatus;
}

Result<std::vector<std::string>> BalanceStore::NotLoaded(const std::vector<std::string>& org_ids) {
  std::vector<std::string> out;
  if (org_ids.empty()) return out;
  std::vector<std::string> keys;
  for (const auto& org : org_ids) keys.push_back(BalanceKey(org));
  auto reply = redis_.Eval(kNotLoadedScript, keys, {});
  if (!reply.ok()) return reply.status();
  if (reply->type != redis::Reply::Type::kArray) return Unexpected("not-loaded");
  for (const auto& e : reply->elements) {
    auto i = IntOf(e);
    if (!i || *i < 1 || static_cast<size_t>(*i) > org_ids.size()) return Unexpected("not-loaded");
    out.push_back(org_ids[*i - 1]);
  }
  return out;
}

Result<bool> BalanceStore::Credit(const std::string& org_id, int64_t ledger_id,
                                  int64_t amount_micro_usd) {
  auto reply =
      redis_.Eval(kCreditScript, {BalanceKey(org_id), "tg:credited:" + std::to_string(ledger_id)},
                  {std::to_string(amount_micro_usd), std::to_string(kCreditMarkTtlMs)});
  if (!reply.ok()) return reply.status();
  if (reply->type != redis::Reply::Type::kInteger) return Unexpected("credit");
  return reply->integer == 1;
}

Result<std::optional<int64_t>> BalanceStore::Balance(const std::string& org_id) {
  auto reply = redis_.Command({"GET", BalanceKey(org_id)});
  if (!reply.ok()) return reply.status();
  if (reply->type == redis::Reply::Type::kNil) return std::optional<int64_t>();
  auto v = ToInt(reply->str);
  if (!v) return Unexpected("GET");
  return std::optional<int64_t>(*v);
}

Result<bool> BalanceStore::Repair(const std::string& org_id, int64_t expected, int64_t value) {
  auto reply = redis_.Eval(kRepairScript, {BalanceKey(org_id)},
                           {std::to_string(expected), std::to_string(value)});
  if (!reply.ok()) return reply.status();
  if (reply->type != redis::Reply::Type::kInteger) return Unexpected("repair");
  return reply->integer == 1;
}

Result<bool> BalanceStore::LoadBudget(const Budget& budget, int64_t ledger_spent) {
  const std::string key = BudgetKey(budget);
  if (key.empty()) return Status::InvalidArgument("a key or organization budget needs a period");
  if (!budget.period) {
    auto reply = redis_.Command({"HSETNX", key, "spent", std::to_string(ledger_spent)});
    if (!reply.ok()) return reply.status();
    if (reply->type != redis::Reply::Type::kInteger) return Unexpected("HSETNX");
    return reply->integer == 1;
  }
  // One step, so that no period budget is ever left without its expiry.
  auto reply = redis_.Eval(
      kLoadPeriodBudgetScript, {key},
      {std::to_string(ledger_spent), std::to_string(budget.period->end_ms + kPeriodBudgetGraceMs)});
  if (!reply.ok()) return reply.status();
  if (reply->type != redis::Reply::Type::kInteger) return Unexpected("load period budget");
  return reply->integer == 1;
}

Result<BudgetView> BalanceStore::ReadBudget(const Budget& budget) {
  auto reply = redis_.Command({"HMGET", BudgetKey(budget), "spent", "reserved"});
  if (!reply.ok()) return reply.status();
  if (reply->type != redis::Reply::Type::kArray || reply->elements.size() != 2) {
    return Unexpected("HMGET");
  }
  BudgetView view;
  if (reply->elements[0].type == redis::Reply::Type::kString) {
    view.spent_micro_usd = ToInt(reply->elements[0].str);
    if (!view.spent_micro_usd) return Unexpected("HMGET");
  }
  if (reply->elements[1].type == redis::Reply::Type::kString) {
    view.reserved_micro_usd = ToInt(reply->elements[1].str).value_or(0);
  }
  return view;
}

Result<bool> BalanceStore::RepairBudget(const Budget& budget, int64_t expected, int64_t value) {
  auto reply = redis_.Eval(kRepairBudgetScript, {BudgetKey(budget)},
                           {std::to_string(expected), std::to_string(value)});
  if (!reply.ok()) return reply.status();
  if (reply->type != redis::Reply::Type::kInteger) return Unexpected("repair budget");
  return reply->integer == 1;
}

namespace {

std::string PayoutMarkKey(int64_t ledger_id) {
  return "tg:paid:" + std::to_string(ledger_id);
}

}  // namespace

Result<PayoutTake> BalanceStore::TakePayout(const std::string& org_id, int64_t payout_ledger_id,
                                            int64_t amount_micro_usd) {
  auto reply = redis_.Eval(
      kPayoutScript, {BalanceKey(org_id), ReservedKey(org_id), PayoutMarkKey(payout_ledger_id)},
      {std::to_string(amount_micro_usd), std::to_string(kPayoutMarkTtlMs)});
  if (!reply.ok()) return reply.status();
  const auto& e = reply->elements;
  if (reply->type != redis::Reply::Type::kArray || e.empty() || !IntOf(e[0])) {
    return Unexpected("payout");
  }
  PayoutTake take;
  switch (*IntOf(e[0])) {
    case 0:
      take.verdict = PayoutTake::Verdict::kTaken;
      return take;
    case 1:
      take.verdict = PayoutTake::Verdict::kTakenBefore;
      return take;
    case 2:
      take.verdict = PayoutTake::Verdict::kNotLoaded;
      return take;
    case 3: {
      auto balance = e.size() == 3 ? IntOf(e[1]) : std::nullopt;
      auto reserved = e.size() == 3 ? IntOf(e[2]) : std::nullopt;
      if (!balance || !reserved) return Unexpected("payout");
      take.verdict = PayoutTake::Verdict::kNotAvailable;
      take.available_micro_usd = *balance - *reserved;
      return take;
    }
  }
  return Unexpected("payout");
}

Result<bool> BalanceStore::ReturnPayout(const std::string& org_id, int64_t payout_ledger_id,
                                        int64_t amount_micro_usd) {
  auto reply =
      redis_.Eval(kReturnPayoutScript, {BalanceKey(org_id), PayoutMarkKey(payout_ledger_id)},
                  {std::to_string(amount_micro_usd)});
  if (!reply.ok()) return reply.status();
  if (reply->type != redis::Reply::Type::kInteger) return Unexpected("return payout");
  return reply->integer == 1;
}

Result<std::vector<std::pair<std::string, int64_t>>> BalanceStore::LoadedBalances() {
  static const std::string kPrefix = BalanceKey("");
  // SCAN may return a key more than once: by organization, each once.
  std::map<std::string, int64_t> balances;
  std::string cursor = "0";
  do {
    auto page =
        redis_.Command({"SCAN", cursor, "MATCH", kPrefix + "*", "COUNT", kBalanceScanCount});
    if (!page.ok()) return page.status();
    if (page->type != redis::Reply::Type::kArray || page->elements.size() != 2 ||
        page->elements[1].type != redis::Reply::Type::kArray) {
      return Unexpected("SCAN");
    }
    cursor = page->elements[0].str;
    const auto& keys = page->elements[1].elements;
    if (keys.empty()) continue;
    std::vector<std::string> argv = {"MGET"};
    for (const auto& key : keys) argv.push_back(key.str);
    auto values = redis_.Command(argv);
    if (!values.ok()) return values.status();
    if (values->type != redis::Reply::Type::kArray || values->elements.size() != keys.size()) {
      return Unexpected("MGET");
    }
    for (size_t i = 0; i < keys.size(); ++i) {
      const redis::Reply& value = values->elements[i];
      if (value.type == redis::Reply::Type::kNil) continue;  // gone since the SCAN
      auto balance = ToInt(value.str);
      if (!balance) return Unexpected("MGET");
      balances[keys[i].str.substr(kPrefix.size())] = *balance;
    }
  } while (cursor != "0");
  return std::vector<std::pair<std::string, int64_t>>(balances.begin(), balances.end());
}

}  // namespace toolgate::billing
