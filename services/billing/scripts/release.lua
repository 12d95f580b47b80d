-- Releases a batch of holds, in order: each hold's amount returns to the available balance and
-- it ends as an execution in flight. A release with a tombstone TTL leaves the hold as a
-- tombstone for that long (a charge that still arrives then moves the balances alone); TTL 0
-- deletes it.
--
-- KEYS: tg:holds, then per release: hold res conc
-- ARGV: per release: execution_id org tombstone_ttl_ms
-- Returns one integer per release: 1 released, 0 already released or gone, -1 the hold belongs
-- to another organization (nothing changed).
--
-- Runs after prelude.lua (EXACT, less, call_in_runs, each_item).

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

local out, err = each_item('release', 1, 3, 0, 3, release)
if not out then return err end
return out
