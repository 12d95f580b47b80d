-- Starts a queued hold (an asynchronous call leaving the queue for an executor), or puts a
-- started one back (the executor pool had nobody to take it). One hold per call, one atomic
-- step: the organization's concurrency limit, counted exactly as for a synchronous call, is
-- what keeps a queued call waiting.
--
-- KEYS: tg:holds hold conc queued
-- ARGV: mode ('take' or 'untake') limit (0: none) execution_id expiry_ms
-- take:   0 started (queued -1, in flight +1, due at expiry_ms), 1 wait (the organization has
--         limit executions in flight), 2 gone (no hold held: cancelled, expired or settled),
--         3 already started (a dispatcher that crashed after starting it; nothing changed)
-- untake: 0 back in the queue, 2 gone or not started (nothing changed)

local hold_key, conc_key, queued_key = KEYS[2], KEYS[3], KEYS[4]
local mode, limit = ARGV[1], tonumber(ARGV[2])
local h = redis.call('HMGET', hold_key, 'state', 'queued')
if h[1] ~= 'held' then return 2 end
if mode == 'untake' then
  if h[2] == '1' then return 2 end
  redis.call('DECR', conc_key)
  redis.call('INCR', queued_key)
  redis.call('HSET', hold_key, 'queued', '1')
  return 0
end
if h[2] ~= '1' then return 3 end
if limit > 0 and tonumber(redis.call('GET', conc_key) or '0') >= limit then return 1 end
redis.call('INCR', conc_key)
redis.call('DECR', queued_key)
redis.call('HDEL', hold_key, 'queued')
redis.call('ZADD', KEYS[1], ARGV[4], ARGV[3])
return 0
