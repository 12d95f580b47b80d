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
