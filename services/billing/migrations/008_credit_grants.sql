-- Operators' credit grants (POST /admin/organizations/{id}/credits): ledger rows of type 'grant'
-- that say why (reason) and who (the operator's user id, and email as it was then). Money is
-- never created without a source someone answers for, so a grant without both is refused here
-- too. The first answer to a repeated Idempotency-Key is kept in billing.top_ups, like a top-up's.
ALTER TABLE billing.ledger
  DROP CONSTRAINT ledger_type_check,
  ADD CONSTRAINT ledger_type_check CHECK (type IN ('top_up', 'charge', 'revenue', 'grant')),
  ADD COLUMN reason text,
  ADD COLUMN granted_by_user_id text,
  ADD COLUMN granted_by_email text,
  ADD CONSTRAINT ledger_grant_has_source
    CHECK (type <> 'grant' OR (reason IS NOT NULL AND granted_by_user_id IS NOT NULL));
