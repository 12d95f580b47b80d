-- Releases a batch of holds, in order: each hold's amount returns to the available balance and
-- it ends as an execution in flight. A release with a tombstone TTL leaves the hold as a
-- tombstone for that long (a charge that still arrives then moves the balances alone); TTL 0
-- deletes it.
--
-- KEYS: tg:holds, then per release: hold res conc
-- ARGV: per release: execution_id org tombstone_ttl_ms
-- Returns one integer per release: 1 released, 0 already released or gone, -1 the hold belongs
-- to another organization (nothing changed).

local function release(k, a)
  local hold_key, res_key, conc_key = KEYS[k], KEYS[k + 1], KEYS[k + 2]
  local ttl = ARGV[a + 2]
  local h = redis.call('HMGET', hold_key, 'state', 'org', 'amount')
  if not h[1] then return 0 end
  if h[2] ~= ARGV[a + 1] then return -1 end
  local held = h[1] == 'held'
  if held then
    redis.call('DECRBY', res_key, h[3])
    redis.call('DECR', conc_key)
    redis.call('ZREM', KEYS[1], ARGV[a])
  end
  if ttl == '0' then
    redis.call('DEL', hold_key)
  elseif held then
    redis.call('HSET', hold_key, 'state', 'released')
    redis.call('PEXPIRE', hold_key, ttl)
  end
  if held then return 1 end
  return 0
end

local n = #ARGV / 3
if n ~= math.floor(n) or #KEYS ~= 1 + n * 3 then
  return redis.error_reply('release: KEYS and ARGV do not describe whole releases')
end
local out = {}
for i = 0, n - 1 do
  out[i + 1] = release(2 + i * 3, 1 + i * 3)
end
return out
