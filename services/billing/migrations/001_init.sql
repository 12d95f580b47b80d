-- The ledger is the system of record: a balance is the sum of an organization's entries.
CREATE TABLE billing.ledger (
  id bigserial PRIMARY KEY,
  org_id text NOT NULL,
  type text NOT NULL CHECK (type IN ('top_up', 'charge', 'revenue')),
  execution_id text,
  function_id text,
  version text,
  compute_micro_usd bigint NOT NULL DEFAULT 0,
  function_micro_usd bigint NOT NULL DEFAULT 0,
  amount_micro_usd bigint NOT NULL,
  idempotency_key text,
  created_at timestamptz NOT NULL DEFAULT now(),
  -- A retried settlement can never charge twice, nor a retried top-up credit twice.
  UNIQUE (execution_id, type),
  UNIQUE (org_id, idempotency_key)
);
-- Newest-first listing, and SUM(amount) per organization from the index alone.
CREATE INDEX ledger_org_id ON billing.ledger (org_id, id DESC) INCLUDE (amount_micro_usd);

-- The first answer to a top-up, returned again for a repeated Idempotency-Key.
CREATE TABLE billing.top_ups (
  ledger_id bigint PRIMARY KEY REFERENCES billing.ledger (id),
  balance_micro_usd bigint NOT NULL
);

CREATE TABLE billing.executions (
  execution_id text PRIMARY KEY,
  seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
  org_id text NOT NULL,
  owner_org_id text NOT NULL,
  function_id text NOT NULL,
  version text NOT NULL,
  status_code integer NOT NULL,
  runtime_ms bigint NOT NULL,
  memory_used_mb bigint NOT NULL,
  compute_type text NOT NULL,
  compute_micro_usd bigint NOT NULL,
  function_micro_usd bigint NOT NULL,
  total_micro_usd bigint NOT NULL,
  trace_id text NOT NULL,
  logs text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX executions_org ON billing.executions (org_id, seq DESC);
CREATE INDEX executions_org_function ON billing.executions (org_id, function_id, seq DESC);
