-- Every settled call writes a ledger row and an execution row, and every index on them is work
-- in the statement that commits the call. Two of them kept nothing the queries use:
-- - only top-ups carry an idempotency key, so the key's uniqueness needs entries for top-ups
--   alone (a charge or revenue row added one holding NULL);
-- - an execution's seq comes from an identity and is read only with its organization
--   (executions_org, executions_org_function): its own unique index was never used.
ALTER TABLE billing.ledger DROP CONSTRAINT ledger_org_id_idempotency_key_key;
CREATE UNIQUE INDEX ledger_top_up_idempotency ON billing.ledger (org_id, idempotency_key)
  WHERE idempotency_key IS NOT NULL;
ALTER TABLE billing.executions DROP CONSTRAINT executions_seq_key;
