-- The OAuth grant a call was made with (a user's consent for one client on one MCP endpoint)
-- and the client's name as it gave it; both NULL for calls made with an API key or a session.
-- A grant's budget (its spending cap) is rebuilt from its charged executions, and its usage
-- (calls, spent, last used) is read from them.
ALTER TABLE billing.executions
  ADD COLUMN grant_id uuid,
  ADD COLUMN client_name text;
-- Partial: only calls made with a grant pay for an entry. It holds what the grant's sums read,
-- so they come from the index alone.
CREATE INDEX executions_grant ON billing.executions (grant_id)
  INCLUDE (org_id, charged, total_micro_usd, created_at) WHERE grant_id IS NOT NULL;
