#include "toolgate/billing/balance_store.h"

#include <charconv>

#include "toolgate/metrics/metrics.h"

namespace toolgate::billing {
namespace {

constexpr const char* kHolds = "tg:holds";
// A charge for a hold the reaper released can still arrive while the executor retries; the
// tombstone that lets it be applied exactly once lives this long.
constexpr int64_t kTombstoneTtlMs = 7 * 24 * 3600 * 1000LL;
// A credited top-up is remembered this long against retries of its credit.
constexpr int64_t kCreditMarkTtlMs = 24 * 3600 * 1000LL;

std::string BalanceKey(const std::string& org) {
  return "tg:bal:" + org;
}
std::string ReservedKey(const std::string& org) {
  return "tg:res:" + org;
}
std::string InFlightKey(const std::string& org) {
  return "tg:conc:" + org;
}
std::string RateKey(const std::string& key_id) {
  return "tg:rl:" + key_id;
}
std::string HoldKey(const std::string& execution_id) {
  return "tg:hold:" + execution_id;
}

// Exact comparison of two canonical decimal integers (as Redis stores them), so that no amount
// ever becomes a Lua (double) number.
#define TG_LUA_LESS                                                           \
  "local function less(a, b)\n"                                               \
  "  local na, nb = string.sub(a, 1, 1) == '-', string.sub(b, 1, 1) == '-'\n" \
  "  if na ~= nb then return na end\n"                                        \
  "  if na then a, b = string.sub(b, 2), string.sub(a, 2) end\n"              \
  "  if #a ~= #b then return #a < #b end\n"                                   \
  "  return a < b\n"                                                          \
  "end\n"

// KEYS: bal res conc rl hold holds
// ARGV: execution_id amount rate burst concurrency expiry_ms field value ...
// Returns {0} held, {1} already held, {2} balance not loaded, {3, retry_after_s} rate limited,
// {4, retry_after_s} concurrency limit, {5, balance, reserved} insufficient balance.
const redis::Script kHoldScript(TG_LUA_LESS R"lua(
if redis.call('EXISTS', KEYS[5]) == 1 then return {1} end
local bal = redis.call('GET', KEYS[1])
if not bal then return {2} end
local rate = tonumber(ARGV[3])
if rate > 0 then
  local burst = tonumber(ARGV[4])
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
  local bucket = redis.call('HMGET', KEYS[4], 'tokens', 'at')
  local tokens, at = tonumber(bucket[1]), tonumber(bucket[2])
  if not tokens or not at then tokens, at = burst, now end
  if now > at then
    tokens = math.min(burst, tokens + (now - at) * rate / 1000000)
    at = now
  end
  if tokens < 1 then return {3, math.ceil((1 - tokens) / rate)} end
  redis.call('HSET', KEYS[4], 'tokens', tokens - 1, 'at', at)
  redis.call('PEXPIRE', KEYS[4], math.ceil(burst / rate * 1000) + 1000)
end
local limit = tonumber(ARGV[5])
if limit > 0 and tonumber(redis.call('GET', KEYS[3]) or '0') >= limit then return {4, 1} end
local reserved = redis.call('GET', KEYS[2]) or '0'
redis.call('INCRBY', KEYS[2], ARGV[2])
if less(bal, redis.call('GET', KEYS[2])) then
  redis.call('DECRBY', KEYS[2], ARGV[2])
  return {5, bal, reserved}
end
redis.call('INCR', KEYS[3])
redis.call('HSET', KEYS[5], 'state', 'held', unpack(ARGV, 7))
redis.call('ZADD', KEYS[6], ARGV[6], ARGV[1])
return {0}
)lua");

// KEYS: hold bal res conc owner_bal holds
// ARGV: execution_id org total revenue
const redis::Script kSettleScript(R"lua(
local h = redis.call('HMGET', KEYS[1], 'state', 'org', 'amount')
if not h[1] then return 0 end
if h[2] ~= ARGV[2] then return redis.error_reply('hold of another organization') end
if redis.call('EXISTS', KEYS[2]) == 1 then redis.call('DECRBY', KEYS[2], ARGV[3]) end
if h[1] == 'held' then
  redis.call('DECRBY', KEYS[3], h[3])
  redis.call('DECR', KEYS[4])
end
if ARGV[4] ~= '0' and redis.call('EXISTS', KEYS[5]) == 1 then
  redis.call('INCRBY', KEYS[5], ARGV[4])
end
redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[6], ARGV[1])
return 1
)lua");

// KEYS: hold res conc holds
// ARGV: execution_id org tombstone_ttl_ms (0: delete the hold)
const redis::Script kReleaseScript(R"lua(
local h = redis.call('HMGET', KEYS[1], 'state', 'org', 'amount')
if not h[1] then return 0 end
if h[2] ~= ARGV[2] then return redis.error_reply('hold of another organization') end
local held = h[1] == 'held'
if held then
  redis.call('DECRBY', KEYS[2], h[3])
  redis.call('DECR', KEYS[3])
  redis.call('ZREM', KEYS[4], ARGV[1])
end
if ARGV[3] == '0' then
  redis.call('DEL', KEYS[1])
elseif held then
  redis.call('HSET', KEYS[1], 'state', 'released')
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
end
if held then return 1 end
return 0
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

#undef TG_LUA_LESS

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

BalanceStore::BalanceStore(redis::Client& redis, Limits limits) : redis_(redis), limits_(limits) {}

namespace {

redis::Client::ScriptCall HoldCall(const HoldRecord& hold, const Limits& limits) {
  bool limit_rate = limits.rate_per_key_per_s > 0 && !hold.key_id.empty();
  return {{BalanceKey(hold.org_id), ReservedKey(hold.org_id), InFlightKey(hold.org_id),
           RateKey(hold.key_id), HoldKey(hold.execution_id), kHolds},
          {hold.execution_id,
           std::to_string(hold.amount_micro_usd),
           limit_rate ? std::to_string(limits.rate_per_key_per_s) : "0",
           std::to_string(limits.rate_burst),
           std::to_string(limits.concurrency_per_org),
           std::to_string(hold.expiry_ms),
           "org",
           hold.org_id,
           "owner",
           hold.owner_org_id,
           "amount",
           std::to_string(hold.amount_micro_usd),
           "key_id",
           hold.key_id,
           "key_expires_at_ms",
           std::to_string(hold.key_expires_at_ms),
           "edge_reply",
           hold.edge_reply,
           "traceparent",
           hold.traceparent,
           "runtime",
           hold.runtime,
           "compute_type",
           hold.compute_type,
           "created_ms",
           std::to_string(hold.created_ms),
           "expiry_ms",
           std::to_string(hold.expiry_ms)}};
}

Result<HoldOutcome> HoldOutcomeOf(const Result<redis::Reply>& reply) {
  if (!reply.ok()) return reply.status();
  const auto& e = reply->elements;
  if (reply->type != redis::Reply::Type::kArray || e.empty() || !IntOf(e[0])) {
    return Unexpected("hold");
  }
  HoldOutcome out;
  switch (*IntOf(e[0])) {
    case 0:
      out.verdict = HoldVerdict::kHeld;
      return out;
    case 1:
      out.verdict = HoldVerdict::kAlreadyHeld;
      return out;
    case 2:
      out.verdict = HoldVerdict::kBalanceNotLoaded;
      return out;
    case 3:
    case 4:
      if (e.size() < 2 || !IntOf(e[1])) return Unexpected("hold");
      out.verdict = *IntOf(e[0]) == 3 ? HoldVerdict::kRateLimited : HoldVerdict::kConcurrencyLimit;
      out.retry_after_s = *IntOf(e[1]);
      return out;
    case 5: {
      if (e.size() < 3 || !IntOf(e[1]) || !IntOf(e[2])) return Unexpected("hold");
      out.verdict = HoldVerdict::kInsufficientBalance;
      out.available_micro_usd = *IntOf(e[1]) - *IntOf(e[2]);
      return out;
    }
  }
  return Unexpected("hold");
}

}  // namespace

namespace {

// Holds by verdict, and captures and releases that changed a hold (a repeated one that found
// the hold gone does not count).
Result<HoldOutcome> CountHold(Result<HoldOutcome> outcome) {
  static auto& family = metrics::Registry::Global().Counter(
      "toolgate_billing_holds_total",
      "Hold attempts by outcome: held, already_held, not_loaded, rate_limited, "
      "concurrency_limit, insufficient_balance or error.",
      {"outcome"});
  static metrics::Counter* by_verdict[] = {&family.With({"held"}),
                                           &family.With({"already_held"}),
                                           &family.With({"not_loaded"}),
                                           &family.With({"rate_limited"}),
                                           &family.With({"concurrency_limit"}),
                                           &family.With({"insufficient_balance"})};
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

Result<bool> CountRelease(Result<bool> released) {
  static auto& releases =
      metrics::Registry::Global()
          .Counter("toolgate_billing_releases_total", "Holds released without a charge.")
          .With({});
  if (released.ok() && *released) releases.Inc();
  return released;
}

}  // namespace

Result<HoldOutcome> BalanceStore::Hold(const HoldRecord& hold) {
  auto call = HoldCall(hold, limits_);
  return CountHold(HoldOutcomeOf(redis_.Eval(kHoldScript, call.keys, call.args)));
}

std::vector<Result<HoldOutcome>> BalanceStore::HoldMany(const std::vector<HoldRecord>& holds) {
  std::vector<redis::Client::ScriptCall> calls;
  calls.reserve(holds.size());
  for (const auto& hold : holds) calls.push_back(HoldCall(hold, limits_));
  auto replies = redis_.EvalMany(kHoldScript, calls);
  std::vector<Result<HoldOutcome>> out;
  out.reserve(holds.size());
  for (size_t i = 0; i < holds.size(); ++i) {
    out.push_back(CountHold(replies.ok() ? HoldOutcomeOf((*replies)[i])
                                         : Result<HoldOutcome>(replies.status())));
  }
  return out;
}

namespace {

redis::Client::ScriptCall SettleCall(const SettleStep& step) {
  const std::string& owner = step.owner_org_id.empty() ? step.org_id : step.owner_org_id;
  return {{HoldKey(step.execution_id), BalanceKey(step.org_id), ReservedKey(step.org_id),
           InFlightKey(step.org_id), BalanceKey(owner), kHolds},
          {step.execution_id, step.org_id, std::to_string(step.total_micro_usd),
           std::to_string(step.revenue_micro_usd)}};
}

Result<bool> SettleOutcome(const Result<redis::Reply>& reply) {
  if (!reply.ok()) return reply.status();
  if (reply->type != redis::Reply::Type::kInteger) return Unexpected("settle");
  return reply->integer == 1;
}

}  // namespace

Result<bool> BalanceStore::Settle(const SettleStep& step) {
  auto call = SettleCall(step);
  return CountCapture(SettleOutcome(redis_.Eval(kSettleScript, call.keys, call.args)));
}

std::vector<Result<bool>> BalanceStore::SettleMany(const std::vector<SettleStep>& steps,
                                                   const std::function<void()>& written) {
  std::vector<redis::Client::ScriptCall> calls;
  calls.reserve(steps.size());
  for (const auto& step : steps) calls.push_back(SettleCall(step));
  auto replies = redis_.EvalMany(kSettleScript, calls, written);
  std::vector<Result<bool>> out;
  out.reserve(steps.size());
  for (size_t i = 0; i < steps.size(); ++i) {
    out.push_back(
        CountCapture(replies.ok() ? SettleOutcome((*replies)[i]) : Result<bool>(replies.status())));
  }
  return out;
}

Result<bool> BalanceStore::Release(const std::string& execution_id, const std::string& org_id,
                                   ReleaseMode mode) {
  int64_t ttl = mode == ReleaseMode::kKeepTombstone ? kTombstoneTtlMs : 0;
  auto reply = redis_.Eval(
      kReleaseScript, {HoldKey(execution_id), ReservedKey(org_id), InFlightKey(org_id), kHolds},
      {execution_id, org_id, std::to_string(ttl)});
  if (!reply.ok()) return reply.status();
  if (reply->type != redis::Reply::Type::kInteger) return Unexpected("release");
  return CountRelease(reply->integer == 1);
}

std::vector<Result<bool>> BalanceStore::ReleaseMany(const std::vector<const HoldRecord*>& holds) {
  std::vector<redis::Client::ScriptCall> calls;
  calls.reserve(holds.size());
  for (const HoldRecord* h : holds) {
    calls.push_back(
        {{HoldKey(h->execution_id), ReservedKey(h->org_id), InFlightKey(h->org_id), kHolds},
         {h->execution_id, h->org_id, "0"}});
  }
  auto replies = redis_.EvalMany(kReleaseScript, calls);
  std::vector<Result<bool>> out;
  out.reserve(holds.size());
  for (size_t i = 0; i < holds.size(); ++i) {
    if (!replies.ok()) {
      out.push_back(replies.status());
    } else if (!(*replies)[i].ok()) {
      out.push_back((*replies)[i].status());
    } else if ((*replies)[i]->type != redis::Reply::Type::kInteger) {
      out.push_back(Unexpected("release"));
    } else {
      out.push_back(CountRelease((*replies)[i]->integer == 1));
    }
  }
  return out;
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
    if (field == "owner") h.owner_org_id = value;
    if (field == "amount") h.amount_micro_usd = ToInt(value).value_or(0);
    if (field == "key_id") h.key_id = value;
    if (field == "key_expires_at_ms") h.key_expires_at_ms = ToInt(value).value_or(0);
    if (field == "edge_reply") h.edge_reply = value;
    if (field == "traceparent") h.traceparent = value;
    if (field == "runtime") h.runtime = value;
    if (field == "compute_type") h.compute_type = value;
    if (field == "created_ms") h.created_ms = ToInt(value).value_or(0);
    if (field == "expiry_ms") h.expiry_ms = ToInt(value).value_or(0);
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

}  // namespace toolgate::billing
