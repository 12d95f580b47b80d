-- Takes a payout (an operator's record of money sent to an organization for its earnings) from
-- the organization's balance, in one atomic step with the holds (hold.lua): only what no call in
-- flight holds may leave, so that a capture can never find its hold's money paid out. With
-- available = balance - reserved >= amount, balance -= amount and a mark keyed by the payout's
-- ledger id is set, so that the payout is taken once however often the step is retried, and
-- given back (BalanceStore::ReturnPayout) only while the mark stands.
--
-- Money is never a Lua number: amounts stay decimal strings compared with less and summed with
-- plus (prelude.lua) and handed to DECRBY.
--
-- KEYS: bal res mark
-- ARGV: amount mark_ttl_ms
-- Returns {0} taken, {1} taken before (nothing changed), {2} balance not loaded,
-- {3, balance, reserved} not available (nothing changed).
--
-- Runs after prelude.lua (less, plus).

if redis.call('EXISTS', KEYS[3]) == 1 then return {1} end
local balance = redis.call('GET', KEYS[1])
if not balance then return {2} end
local reserved = redis.call('GET', KEYS[2]) or '0'
-- A reserved count below 0 can only be a fault (a hand edit): as nothing, so it makes no room.
if string.sub(reserved, 1, 1) == '-' then reserved = '0' end
if less(balance, plus(reserved, ARGV[1])) then return {3, balance, reserved} end
redis.call('DECRBY', KEYS[1], ARGV[1])
redis.call('SET', KEYS[3], '1', 'PX', ARGV[2])
return {0}
