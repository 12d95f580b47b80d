-- Payouts (POST /admin/organizations/{id}/payouts): an operator's record that money was sent to
-- an organization for its earnings. Each is a ledger row of type 'payout' (negative: it leaves the
-- balance) with its details in billing.payouts: the bank or transfer reference and the operator
-- who recorded it, so that every debit has someone who answers for it. The type list keeps the
-- payment provider's types (payment, refund, dispute) that the previous step adds.
ALTER TABLE billing.ledger
  DROP CONSTRAINT ledger_type_check,
  ADD CONSTRAINT ledger_type_check CHECK (type IN ('top_up', 'charge', 'revenue', 'grant',
                                                   'payment', 'refund', 'dispute', 'payout')),
  ADD CONSTRAINT ledger_payout_is_a_debit CHECK (type <> 'payout' OR amount_micro_usd < 0);
CREATE TABLE billing.payouts (
  ledger_id bigint PRIMARY KEY REFERENCES billing.ledger (id),
  org_id text NOT NULL,
  -- What was paid, positive; the ledger row holds its negation. The whole-ledger identity
  -- (billing reconcile) reads payouts from here and balances from Redis.
  amount_micro_usd bigint NOT NULL CHECK (amount_micro_usd > 0),
  reference text NOT NULL CHECK (reference <> ''),
  recorded_by_user_id text NOT NULL,
  recorded_by_email text NOT NULL,
  -- What the organization could be paid just after this payout: the first answer, repeated for
  -- a request that repeats its Idempotency-Key.
  payable_after_micro_usd bigint NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX payouts_org ON billing.payouts (org_id, ledger_id DESC);
-- The earnings statement and the payable amount read an organization's revenue by time from this
-- index alone. Partial: only calls that paid a fee to another organization pay for an entry.
CREATE INDEX ledger_revenue_org_created ON billing.ledger (org_id, created_at)
  INCLUDE (function_id, function_micro_usd, amount_micro_usd) WHERE type = 'revenue';
