-- Spending limits (docs/api.md "Spending limits"): a cap per UTC day and per UTC calendar month,
-- for the organization (key_id '') or for one of its API keys. A row is never deleted: once
-- limits were set, the key's or organization's budgets are counted on every call even with both
-- caps NULL, so that a cap set again later counts what was spent before it.
CREATE TABLE billing.budgets (
  org_id text NOT NULL,
  key_id text NOT NULL,
  daily_micro_usd bigint CHECK (daily_micro_usd >= 0),
  monthly_micro_usd bigint CHECK (monthly_micro_usd >= 0),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (org_id, key_id)
);
-- The API key a call was made with (NULL for a session or an OAuth grant): a key's budget is
-- rebuilt from its charged executions, and the usage report groups by it.
ALTER TABLE billing.executions ADD COLUMN key_id text;
-- A period's spend of an organization, or of one of its keys, and the usage report, from the
-- index alone.
CREATE INDEX executions_org_created ON billing.executions (org_id, created_at)
  INCLUDE (key_id, function_id, charged, total_micro_usd);
