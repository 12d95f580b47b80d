-- Checkout funding (docs/operations.md "Checkout funding"): credit bought through a payment
-- provider's hosted checkout. Billing records each checkout session it creates, credits the
-- organization when the provider's signed event says the session was paid, and debits it when the
-- payment is refunded or disputed.

-- One row per checkout session billing created. paid, refunded and disputed are what the ledger
-- credited and debited for it, so that refunds and disputes never take back more than was paid.
CREATE TABLE billing.checkout_sessions (
  provider text NOT NULL,
  session_id text NOT NULL,
  org_id text NOT NULL,
  amount_micro_usd bigint NOT NULL CHECK (amount_micro_usd > 0),
  currency text NOT NULL,
  url text NOT NULL,
  status text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'paid', 'refused')),
  -- The member's Idempotency-Key: a repeated request answers the same session.
  idempotency_key text,
  -- Known once the session completed: refunds and disputes name the payment by it.
  payment_intent_id text,
  paid_micro_usd bigint NOT NULL DEFAULT 0 CHECK (paid_micro_usd >= 0),
  refunded_micro_usd bigint NOT NULL DEFAULT 0 CHECK (refunded_micro_usd >= 0),
  disputed_micro_usd bigint NOT NULL DEFAULT 0 CHECK (disputed_micro_usd >= 0),
  created_at timestamptz NOT NULL DEFAULT now(),
  completed_at timestamptz,
  PRIMARY KEY (provider, session_id),
  UNIQUE (org_id, idempotency_key),
  CHECK (refunded_micro_usd + disputed_micro_usd <= paid_micro_usd)
);
CREATE UNIQUE INDEX checkout_sessions_payment_intent
  ON billing.checkout_sessions (provider, payment_intent_id) WHERE payment_intent_id IS NOT NULL;

-- One row per provider event billing acted on, inserted in the transaction of the credit or debit
-- it made: a redelivered event (even concurrently) finds its row and changes nothing.
CREATE TABLE billing.payment_events (
  provider text NOT NULL,
  event_id text NOT NULL,
  type text NOT NULL,
  -- credited, debited, refused (e.g. another currency) or ignored (e.g. an unknown payment)
  outcome text NOT NULL CHECK (outcome IN ('credited', 'debited', 'refused', 'ignored')),
  ledger_id bigint REFERENCES billing.ledger (id),
  detail text NOT NULL DEFAULT '',
  received_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (provider, event_id)
);

-- Ledger rows of a payment (credit), a refund and a dispute (debits, negative) carry the
-- provider's ids, so that an operator can answer for each with the provider's records.
ALTER TABLE billing.ledger
  DROP CONSTRAINT ledger_type_check,
  ADD CONSTRAINT ledger_type_check
    CHECK (type IN ('top_up', 'charge', 'revenue', 'grant', 'payment', 'refund', 'dispute')),
  ADD COLUMN provider text,
  ADD COLUMN provider_event_id text,
  ADD COLUMN checkout_session_id text,
  ADD COLUMN payment_intent_id text,
  ADD COLUMN dispute_id text,
  ADD CONSTRAINT ledger_payment_has_source
    CHECK (type NOT IN ('payment', 'refund', 'dispute')
           OR (provider IS NOT NULL AND provider_event_id IS NOT NULL
               AND checkout_session_id IS NOT NULL)),
  ADD CONSTRAINT ledger_payment_sign
    CHECK ((type <> 'payment' OR amount_micro_usd > 0)
           AND (type NOT IN ('refund', 'dispute') OR amount_micro_usd < 0));
-- Whatever a bug upstream did, a session is credited once, a dispute debited once and an event
-- makes one row at most.
CREATE UNIQUE INDEX ledger_payment_session ON billing.ledger (provider, checkout_session_id)
  WHERE type = 'payment';
CREATE UNIQUE INDEX ledger_dispute ON billing.ledger (provider, dispute_id)
  WHERE type = 'dispute';
CREATE UNIQUE INDEX ledger_provider_event ON billing.ledger (provider, provider_event_id)
  WHERE provider_event_id IS NOT NULL;
