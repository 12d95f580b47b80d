-- Captures a batch of executions' charges, in order: balance -= total, the hold's amount
-- leaves reserved, in flight -= 1, the owner's balance += revenue (when it is loaded), in each
-- budget the hold lists the hold's amount leaves reserved and total joins spent (the charge may
-- be below the hold), and the hold is deleted. On a tombstone (a hold the reaper released) only
-- the balances and what the budgets spent move.
-- Idempotent: a hold that is gone (already captured) changes nothing. One script per batch;
-- what moves per organization is summed and written once per batch, and the captured holds go
-- in one DEL and one ZREM (the script runs as one instant, so nothing else reads those keys in
-- between).
--
-- Sums are Lua numbers only while they stay below 2^53, where a double is exact; an amount of
-- more than 15 digits, or a sum that would pass that bound, is applied as its own decimal
-- string. So the arithmetic on money stays exact 64-bit integer arithmetic.
--
-- KEYS: tg:holds, then per capture: hold bal res conc owner_bal
-- ARGV: per capture: execution_id org total revenue
-- Returns one integer per capture: 1 captured, 0 the hold was gone, -1 the hold belongs to
-- another organization (nothing changed).
--
-- Runs after prelude.lua (EXACT, less, plus, budget_keys, budget_loaded, move_budget,
-- apply_budget_moves, call_in_runs, each_item).

-- Pending changes by command and key, in the order first met: {key, command, sum}. A balance
-- can both pay (DECRBY) and earn (INCRBY) in one batch: two entries.
local pending, order = {}, {}

local function apply(p)
  if p.sum ~= 0 then redis.call(p.command, p.key, string.format('%.0f', p.sum)) end
  p.sum = 0
end

-- Adds a non-negative decimal amount to key's pending change (command INCRBY or DECRBY).
local function add(key, command, amount)
  local p = pending[command .. ' ' .. key]
  if not p then
    p = {key = key, command = command, sum = 0}
    pending[command .. ' ' .. key] = p
    order[#order + 1] = p
  end
  if #amount > 15 then
    redis.call(command, key, amount)
    return
  end
  local x = tonumber(amount)
  if p.sum + x > EXACT then apply(p) end
  p.sum = p.sum + x
end

-- The captured holds, deleted (and taken off tg:holds) in one DEL and one ZREM at the end; a
-- second capture of one in this batch finds it captured.
local captured, gone_keys, gone_ids = {}, {}, {}

local loaded = {}
local function is_loaded(key)
  local l = loaded[key]
  if l == nil then
    l = redis.call('EXISTS', key) == 1
    loaded[key] = l
  end
  return l
end

local function capture(k, a)
  local hold_key, bal_key, res_key, conc_key, owner_key =
    KEYS[k], KEYS[k + 1], KEYS[k + 2], KEYS[k + 3], KEYS[k + 4]
  if captured[hold_key] then return 0 end
  local h = redis.call('HMGET', hold_key, 'state', 'org', 'amount', 'budgets')
  if not h[1] then return 0 end
  if h[2] ~= ARGV[a + 1] then return -1 end
  if is_loaded(bal_key) then add(bal_key, 'DECRBY', ARGV[a + 2]) end
  if h[1] == 'held' then
    add(res_key, 'DECRBY', h[3])
    add(conc_key, 'DECRBY', '1')
  end
  for _, key in ipairs(budget_keys(h[4])) do
    if budget_loaded(key) then
      if h[1] == 'held' then move_budget(key, 'reserved', h[3], '-') end
      move_budget(key, 'spent', ARGV[a + 2], '+')
    end
  end
  if ARGV[a + 3] ~= '0' and is_loaded(owner_key) then add(owner_key, 'INCRBY', ARGV[a + 3]) end
  captured[hold_key] = true
  gone_keys[#gone_keys + 1] = hold_key
  gone_ids[#gone_ids + 1] = ARGV[a]
  return 1
end

local out, err = each_item('capture', 1, 5, 0, 4, capture)
if not out then return err end
for _, p in ipairs(order) do apply(p) end
apply_budget_moves()
call_in_runs('DEL', nil, gone_keys)
call_in_runs('ZREM', KEYS[1], gone_ids)
return out
