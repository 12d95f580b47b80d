-- Holds a batch of executions' charges, in order. Each hold is the contract's atomic step:
-- per-key rate, per-organization concurrency, the organization's allowance of uncharged timeouts
-- (prelude.lua; release.lua spends it), then each of the hold's budgets (a cap of its own beside
-- the balance, such as an OAuth grant's: reserved + spent + amount <= cap), then available =
-- balance - reserved >= amount; held: reserved += amount, in flight += 1, each budget's reserved
-- += amount, and the hold is recorded with the keys of its budgets. One script per batch, so
-- Redis parses, looks up and replies to one command however many calls the batch carries. What
-- is per organization or per key (the balance, the count in flight, the token bucket, the
-- allowance of uncharged timeouts, which only release.lua writes) is read once and written once
-- per batch (so is each budget), and the new holds join the due list in one ZADD: the script runs as one instant, so
-- nothing else can read or change them in between.
--
-- Money is never a Lua number where it could lose a digit: amounts stay decimal strings handed
-- to INCRBY/DECRBY and compared as strings (less, in prelude.lua); a reply of INCRBY is used as
-- a number only below 2^53, where a double is exact.
--
-- A hold in mode 'estimate' (POST .../estimate) is checked the same way and changes nothing:
-- no token is taken, nothing is reserved or recorded; its answer is what the hold would leave.
-- A hold in mode 'queue' (an asynchronous call) is counted among its organization's queued
-- executions instead of those in flight: its conc key is then tg:queued:<org> and its limit the
-- queue's (refused {9, retry_after_s} beyond it), and the hold is recorded with queued = 1.
-- dispatch.lua moves it to the count in flight when it starts, under the concurrency limit.
--
-- KEYS: tg:holds, then per hold: bal res conc rl hold tmo, then the key of each of its budgets
-- ARGV: burst concurrency timeout_allowance_ms queue_limit, then per hold: execution_id amount rate
--       expiry_ms org detail mode budgets, then the cap of each of its budgets (rate 0: no rate
--       limit; timeout_allowance_ms 0: no allowance checked; detail: the rest of the record,
--       opaque here; mode: 'hold', 'estimate' or 'queue'; budgets: how many; a cap of 0:
--       counted, not capped; queue_limit 0: no limit)
-- Returns one array per hold: {0, balance, reserved, cap_1, used_1, ...} held (or, for an
-- estimate, would be), with what the hold left: the balance, the organization's reserved and,
-- per budget, its cap and reserved + spent (this hold counted); {1} already held, {2} balance
-- not loaded,
-- {3, retry_after_s} rate limited, {4, retry_after_s} concurrency limit,
-- {5, balance, reserved} insufficient balance, {6, retry_after_s} timeout allowance spent,
-- {7, i} its i-th budget not loaded, {8, i, cap, used} its i-th budget cannot take the amount
-- (used: reserved + spent), {9, retry_after_s} its organization's queue is full.
--
-- Runs after prelude.lua (EXACT, less, plus, now_us, timeout_allowance_left,
-- timeout_retry_after_s, call_in_runs, each_listed_item).

local burst, limit, timeout_allowance = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local queue_limit = tonumber(ARGV[4])
local now -- microseconds, read once

local function clock()
  if not now then now = now_us() end
  return now
end

-- Per organization and count (by balance and conc key: a queued hold counts in tg:queued, the
-- others in tg:conc): the balance (holds never change it), the count and what this batch added
-- to it, and the allowance of uncharged timeouts left. Per rate key:
-- the bucket, written back at the end.
local orgs, org_order = {}, {}
-- The new holds' expiries and ids, added to tg:holds in one ZADD.
local due = {}
local buckets, bucket_order = {}, {}

local function org_of(bal_key, conc_key, tmo_key)
  local o = orgs[bal_key .. ' ' .. conc_key]
  if not o then
    o = {bal = redis.call('GET', bal_key), conc_key = conc_key, tmo_key = tmo_key, added = 0}
    orgs[bal_key .. ' ' .. conc_key] = o
    org_order[#org_order + 1] = o
  end
  return o
end

local function in_flight(o)
  if not o.conc then o.conc = tonumber(redis.call('GET', o.conc_key) or '0') end
  return o.conc + o.added
end

local function timeout_left(o)
  if not o.tmo_left then
    o.tmo_left = timeout_allowance_left(o.tmo_key, timeout_allowance, clock())
  end
  return o.tmo_left
end

local function bucket_of(rate_key)
  local b = buckets[rate_key]
  if not b then
    clock()
    local stored = redis.call('HMGET', rate_key, 'tokens', 'at')
    b = {key = rate_key, tokens = tonumber(stored[1]), at = tonumber(stored[2]), used = false}
    if not b.tokens or not b.at then b.tokens, b.at = burst, now end
    buckets[rate_key] = b
    bucket_order[#bucket_order + 1] = b
  end
  return b
end

-- Per budget key: what is reserved (with what this batch added) and spent, as decimal strings;
-- spent is false until the budget is loaded. Reserved is written back at the end.
local budgets, budget_order = {}, {}

-- A count that is below 0 can only be a fault (a hand edit): as nothing, so that it never makes
-- room under a cap.
local function at_least_zero(text)
  if not text or string.sub(text, 1, 1) == '-' then return '0' end
  return text
end

local function budget_of(key)
  local b = budgets[key]
  if not b then
    local stored = redis.call('HMGET', key, 'reserved', 'spent')
    b = {key = key, reserved = at_least_zero(stored[1]), spent = stored[2], added = '0'}
    if b.spent then b.spent = at_least_zero(b.spent) end
    budgets[key] = b
    budget_order[#budget_order + 1] = b
  end
  return b
end

-- The first of the n budgets at KEYS[k] (caps at ARGV[a]) that cannot take amount, as the
-- refusal to answer; nil when each can.
local function over_a_cap(k, a, n, amount)
  for i = 1, n do
    local b, cap = budget_of(KEYS[k + i - 1]), ARGV[a + i - 1]
    if cap ~= '0' then
      local used = plus(b.reserved, b.spent)
      if less(cap, plus(used, amount)) then return {8, i, cap, used} end
    end
  end
  return nil
end

local function hold(k, a, n)
  local bal_key, res_key, conc_key, rate_key, hold_key, tmo_key =
    KEYS[k], KEYS[k + 1], KEYS[k + 2], KEYS[k + 3], KEYS[k + 4], KEYS[k + 5]
  local amount, rate = ARGV[a + 1], tonumber(ARGV[a + 2])
  local estimate, queue = ARGV[a + 6] == 'estimate', ARGV[a + 6] == 'queue'
  -- The hold's budgets: keys from KEYS[k + 6], caps from ARGV[a + 8].
  local bk, ba = k + 6, a + 8
  if redis.call('EXISTS', hold_key) == 1 then return {1} end
  local o = org_of(bal_key, conc_key, tmo_key)
  if not o.bal then return {2} end
  -- Before any token is taken: the call comes back once the budget is loaded.
  for i = 1, n do
    if not budget_of(KEYS[bk + i - 1]).spent then return {7, i} end
  end
  if rate > 0 then
    local b = bucket_of(rate_key)
    if now > b.at then
      b.tokens = math.min(burst, b.tokens + (now - b.at) * rate / 1000000)
      b.at = now
    end
    if b.tokens < 1 then return {3, math.ceil((1 - b.tokens) / rate)} end
    if not estimate then
      b.tokens = b.tokens - 1
      b.used, b.ttl = true, math.ceil(burst / rate * 1000) + 1000
    end
  end
  if queue then
    if queue_limit > 0 and in_flight(o) >= queue_limit then return {9, 1} end
  elseif limit > 0 and in_flight(o) >= limit then
    return {4, 1}
  end
  if timeout_allowance > 0 and timeout_left(o) <= 0 then
    return {6, timeout_retry_after_s(o.tmo_left, timeout_allowance)}
  end
  local capped = over_a_cap(bk, ba, n, amount)
  if capped then return capped end
  if estimate then
    local reserved_now = at_least_zero(redis.call('GET', res_key))
    local reserved_after = plus(reserved_now, amount)
    if less(o.bal, reserved_after) then return {5, o.bal, reserved_now} end
    local out = {0, o.bal, reserved_after}
    for i = 1, n do
      local b = budget_of(KEYS[bk + i - 1])
      out[#out + 1] = ARGV[ba + i - 1]
      out[#out + 1] = plus(plus(b.reserved, b.spent), amount)
    end
    return out
  end
  local reserved = redis.call('INCRBY', res_key, amount)
  local reserved_text = math.abs(reserved) <= EXACT and string.format('%.0f', reserved)
                        or redis.call('GET', res_key)
  if less(o.bal, reserved_text) then
    redis.call('DECRBY', res_key, amount)
    return {5, o.bal, redis.call('GET', res_key) or '0'}
  end
  o.added = o.added + 1
  local keys = {}
  local out = {0, o.bal, reserved_text}
  for i = 1, n do
    local b = budget_of(KEYS[bk + i - 1])
    b.reserved, b.added = plus(b.reserved, amount), plus(b.added, amount)
    keys[i] = b.key
    out[#out + 1] = ARGV[ba + i - 1]
    out[#out + 1] = plus(b.reserved, b.spent)
  end
  redis.call('HSET', hold_key, 'state', 'held', 'org', ARGV[a + 4], 'amount', amount,
             'detail', ARGV[a + 5])
  if n > 0 then redis.call('HSET', hold_key, 'budgets', table.concat(keys, ' ')) end
  if queue then redis.call('HSET', hold_key, 'queued', '1') end
  due[#due + 1] = ARGV[a + 3]
  due[#due + 1] = ARGV[a]
  return out
end

local out, err = each_listed_item('hold', 1, 6, 4, 8, hold)
if not out then return err end
call_in_runs('ZADD', KEYS[1], due)
for _, b in ipairs(budget_order) do
  if b.added ~= '0' then redis.call('HINCRBY', b.key, 'reserved', b.added) end
end
for _, o in ipairs(org_order) do
  if o.added > 0 then redis.call('INCRBY', o.conc_key, o.added) end
end
for _, b in ipairs(bucket_order) do
  if b.used then
    redis.call('HSET', b.key, 'tokens', b.tokens, 'at', b.at)
    redis.call('PEXPIRE', b.key, b.ttl)
  end
end
return out
