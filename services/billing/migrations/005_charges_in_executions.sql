-- One row per call. An execution's charge is its execution row (charged: the handler ran and
-- the caller paid its total) instead of a ledger row of its own: the ledger keeps top-ups and
-- revenue, and the ledger's readers add the charged executions. A settled call thus writes one
-- row and three index entries, where it wrote two rows and six.
ALTER TABLE billing.executions ADD COLUMN charged boolean NOT NULL DEFAULT false;
-- A charge's ledger id is its execution's seq: new executions number from the ledger's sequence,
-- which starts past every id and seq so far, so ledger rows and charges share one id space and
-- executions keep their order. Executions before this step keep their seq; their charges stay
-- ledger rows (charged is false for them).
ALTER TABLE billing.executions ALTER COLUMN seq DROP IDENTITY;
SELECT setval('billing.ledger_id_seq',
              greatest((SELECT coalesce(max(id), 0) FROM billing.ledger),
                       (SELECT coalesce(max(seq), 0) FROM billing.executions), 1));
ALTER TABLE billing.executions ALTER COLUMN seq SET DEFAULT nextval('billing.ledger_id_seq');
-- An organization's charges are listed and summed from this index alone.
DROP INDEX billing.executions_org;
CREATE INDEX executions_org ON billing.executions (org_id, seq DESC)
  INCLUDE (charged, total_micro_usd);
-- No new charge rows: a billing replica from before this step, still running, would charge the
-- old way an execution a newer one charged already. Its settlement fails instead and is retried
-- until a current replica records it. The charge rows already here stay valid.
ALTER TABLE billing.ledger ADD CONSTRAINT ledger_charges_live_in_executions
  CHECK (type <> 'charge') NOT VALID;
