-- Releases a batch of holds, in order: each hold's amount returns to the available balance and
-- to each budget the hold lists, and it ends as an execution in flight. A release with a tombstone TTL leaves the hold as a
-- tombstone for that long (a charge that still arrives then moves the balances alone); TTL 0
-- deletes it. A release that ends a call which ran past its timeout (408, not charged) spends
-- that sandbox time from its organization's allowance (prelude.lua), in the same step: a result
-- delivered twice releases, and so counts, once. What each organization spends is written once
-- per batch.
--
-- A queued hold (an asynchronous call not yet started: field queued) leaves its organization's
-- queued count (tg:queued) rather than the count in flight.
--
-- KEYS: tg:holds, then per release: hold res conc tmo queued
-- ARGV: timeout_allowance_ms (0: nothing counted), then per release: execution_id org
--       tombstone_ttl_ms timeout_ms (0: the call did not time out)
-- Returns one integer per release: 1 released, 2 released, and its timeout spent what was left
-- of the organization's allowance, 0 already released or gone, -1 the hold belongs to another
-- organization (nothing changed).
--
-- Runs after prelude.lua (EXACT, less, plus, budget_keys, budget_loaded, move_budget,
-- apply_budget_moves, now_us, timeout_allowance_left, call_in_runs, each_item).

local timeout_allowance = tonumber(ARGV[1])
local now -- microseconds, read once
-- Per allowance key, in the order first met: what is left after this batch's timeouts.
local allowances, allowance_order = {}, {}

-- Spends ms of the allowance at key; true when that took it from above 0 to 0 or below.
local function spend(key, ms)
  local a = allowances[key]
  if not a then
    if not now then now = now_us() end
    a = {key = key, left = timeout_allowance_left(key, timeout_allowance, now)}
    allowances[key] = a
    allowance_order[#allowance_order + 1] = a
  end
  local before = a.left
  a.left = a.left - ms
  return before > 0 and a.left <= 0
end

local function release(k, a)
  local hold_key, res_key, conc_key, tmo_key = KEYS[k], KEYS[k + 1], KEYS[k + 2], KEYS[k + 3]
  local queued_key = KEYS[k + 4]
  local ttl, timeout_ms = ARGV[a + 2], tonumber(ARGV[a + 3])
  local h = redis.call('HMGET', hold_key, 'state', 'org', 'amount', 'budgets', 'queued')
  if not h[1] then return 0 end
  if h[2] ~= ARGV[a + 1] then return -1 end
  local held = h[1] == 'held'
  if held then
    redis.call('DECRBY', res_key, h[3])
    redis.call('DECR', h[5] == '1' and queued_key or conc_key)
    redis.call('ZREM', KEYS[1], ARGV[a])
    for _, key in ipairs(budget_keys(h[4])) do
      if budget_loaded(key) then move_budget(key, 'reserved', h[3], '-') end
    end
  end
  if ttl == '0' then
    redis.call('DEL', hold_key)
  elseif held then
    redis.call('HSET', hold_key, 'state', 'released')
    redis.call('PEXPIRE', hold_key, ttl)
  end
  if not held then return 0 end
  if timeout_allowance > 0 and timeout_ms > 0 and spend(tmo_key, timeout_ms) then return 2 end
  return 1
end

local out, err = each_item('release', 1, 5, 1, 4, release)
if not out then return err end
apply_budget_moves()
-- Each allowance as spent now, kept until it would have refilled: an absent key is full.
for _, a in ipairs(allowance_order) do
  redis.call('HSET', a.key, 'ms', a.left, 'at', now)
  local refill_ms = math.ceil((timeout_allowance - a.left) * 3600000 / timeout_allowance)
  redis.call('PEXPIRE', a.key, refill_ms)
end
return out
