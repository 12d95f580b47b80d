-- What billing's scripts share, put before each of them when billing loads it (a Redis script
-- cannot include another).

local EXACT = 9007199254740991 -- 2^53 - 1: below it, a double holds every integer exactly

-- Exact comparison of two canonical decimal integers (as Redis stores them).
local function less(a, b)
  local na, nb = string.sub(a, 1, 1) == '-', string.sub(b, 1, 1) == '-'
  if na ~= nb then return na end
  if na then a, b = string.sub(b, 2), string.sub(a, 2) end
  if #a ~= #b then return #a < #b end
  return a < b
end

-- Redis's clock in microseconds (TIME), the same for every billing replica.
local function now_us()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000000 + tonumber(t[2])
end

-- An organization's allowance of sandbox time for uncharged timeouts (tg:tmo:<org>, a hash of
-- ms and at): a bucket of allowance_ms that refills at allowance_ms per hour. An absent key is a
-- full allowance; ms may be negative, time spent past the allowance that is still owed, so calls
-- in flight when it ran out are paid back before more are let through. Not money: Lua numbers.
local HOUR_US = 3600 * 1000000

-- The allowance left at now (microseconds), in ms: what was written, refilled since, at most
-- allowance_ms.
local function timeout_allowance_left(key, allowance_ms, now)
  local stored = redis.call('HMGET', key, 'ms', 'at')
  local ms, at = tonumber(stored[1]), tonumber(stored[2])
  if not ms or not at then return allowance_ms end
  if now > at then ms = ms + (now - at) * allowance_ms / HOUR_US end
  return math.min(allowance_ms, ms)
end

-- Whole seconds until an allowance left at left_ms (0 or less) has refilled past 0.
local function timeout_retry_after_s(left_ms, allowance_ms)
  return math.floor(-left_ms * 3600 / allowance_ms) + 1
end

-- redis.call(command, [key,] list...) in runs of at most 1,000 list items: unpack's results
-- must fit Lua's C stack, and a batch's size is the operator's to set.
local function call_in_runs(command, key, list)
  for i = 1, #list, 1000 do
    local run = {}
    for j = i, math.min(i + 999, #list) do run[#run + 1] = list[j] end
    if key then redis.call(command, key, unpack(run)) else redis.call(command, unpack(run)) end
  end
end

-- The sum of two canonical non-negative decimal integers, as one: exact at any size, so a sum of
-- amounts never passes through a double.
local function plus(a, b)
  local digits, carry, i, j = {}, 0, #a, #b
  while i > 0 or j > 0 or carry > 0 do
    local d = carry
    if i > 0 then d, i = d + string.byte(a, i) - 48, i - 1 end
    if j > 0 then d, j = d + string.byte(b, j) - 48, j - 1 end
    carry = d >= 10 and 1 or 0
    digits[#digits + 1] = string.char(48 + d - 10 * carry)
  end
  if #digits == 0 then return '0' end
  return string.reverse(table.concat(digits))
end

-- Budgets: what a hold is counted against beside its organization's balance (today an OAuth
-- grant's; balance_store.h). A budget is a hash of reserved and spent, decimal micro-USD; it is
-- loaded once spent is present (from the ledger: a budget is never created by a capture or a
-- release, only by its load). A hold lists the keys of its budgets in its field budgets, space
-- separated, so that its capture and release move exactly the budgets it reserved, whoever
-- ends it; they are read from the hold rather than passed in KEYS for that reason (billing's
-- Redis is one instance, whose batches already span every organization's keys).
local function budget_keys(list)
  local keys = {}
  if list then
    for key in string.gmatch(list, '%S+') do keys[#keys + 1] = key end
  end
  return keys
end

local budgets_loaded = {}
local function budget_loaded(key)
  local l = budgets_loaded[key]
  if l == nil then
    l = redis.call('HEXISTS', key, 'spent') == 1
    budgets_loaded[key] = l
  end
  return l
end

-- A batch's changes to budgets, summed per budget and field in the order first met and applied
-- by apply_budget_moves once at the end: {key, field, sum, sign}.
local budget_moves, budget_move_order = {}, {}

-- Adds a non-negative decimal amount to what the batch moves in key's field; sign '-' takes it.
local function move_budget(key, field, amount, sign)
  local id = key .. ' ' .. field .. ' ' .. sign
  local m = budget_moves[id]
  if not m then
    m = {key = key, field = field, sum = '0', sign = sign}
    budget_moves[id] = m
    budget_move_order[#budget_move_order + 1] = m
  end
  m.sum = plus(m.sum, amount)
end

local function apply_budget_moves()
  for _, m in ipairs(budget_move_order) do
    if m.sum ~= '0' then
      redis.call('HINCRBY', m.key, m.field, m.sign == '-' and '-' .. m.sum or m.sum)
    end
  end
end

-- Runs item(k, a) for each item of a batch, in order, where KEYS holds shared_keys keys and
-- then keys_per keys per item, and ARGV head_args arguments and then args_per per item; k and a
-- are the item's first key and argument. Returns the items' results, or nil and an error reply
-- when KEYS and ARGV do not describe whole items.
local function each_item(name, shared_keys, keys_per, head_args, args_per, item)
  local n = (#ARGV - head_args) / args_per
  if n < 0 or n ~= math.floor(n) or #KEYS ~= shared_keys + n * keys_per then
    return nil, redis.error_reply(name .. ': KEYS and ARGV do not describe whole items')
  end
  local out = {}
  for i = 0, n - 1 do
    out[i + 1] = item(shared_keys + 1 + i * keys_per, head_args + 1 + i * args_per)
  end
  return out
end

-- each_item for items that end in a list: an item has keys_per keys and args_per arguments, the
-- last of which is a count n, and then n keys and n arguments more (one argument per listed
-- key). Runs item(k, a, n) for each, in order, once the whole layout has been checked.
local function each_listed_item(name, shared_keys, keys_per, head_args, args_per, item)
  local bad = redis.error_reply(name .. ': KEYS and ARGV do not describe whole items')
  local starts, k, a = {}, shared_keys + 1, head_args + 1
  while a <= #ARGV do
    local count = ARGV[a + args_per - 1]
    local n = count and tonumber(count)
    if not n or n < 0 or n ~= math.floor(n) then return nil, bad end
    starts[#starts + 1] = {k, a, n}
    k, a = k + keys_per + n, a + args_per + n
  end
  if a ~= #ARGV + 1 or k ~= #KEYS + 1 then return nil, bad end
  local out = {}
  for i, s in ipairs(starts) do out[i] = item(s[1], s[2], s[3]) end
  return out
end
