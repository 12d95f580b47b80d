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
