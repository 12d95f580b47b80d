-- Executions that outlive a connection (docs/api.md "Asynchronous calls", "Idempotency keys"):
-- one row per asynchronous call from the moment it is accepted, and per call made with an
-- Idempotency-Key from the moment it is claimed. The row is the execution's state machine:
--   queued -> running -> succeeded | failed | timed_out | cancelled   (asynchronous)
--   running -> succeeded | failed | timed_out                        (synchronous, with a key)
--   queued -> cancelled (cancel before it started); queued | running -> failed (lost: its hold
--   expired with no result; lost = true until a late result replaces it)
-- reply is the final v1::InvokeReply (what a synchronous call would have answered), written
-- in the same statement as the execution's ledger row (LedgerStore::RecordSettlements), so a
-- charge and its outcome commit together. The job itself (with its sealed secrets) is never
-- stored here: it waits in the JetStream stream TG_ASYNC.
CREATE TABLE billing.execution_states (
  execution_id text PRIMARY KEY,
  org_id text NOT NULL,
  function_id text NOT NULL,
  version text NOT NULL,
  -- The API key that made the call (NULL: a session): a key with only the invoke scope reads
  -- and cancels the executions it made, and no others.
  key_id text,
  async boolean NOT NULL,
  status text NOT NULL CHECK (status IN ('queued', 'running', 'succeeded', 'failed',
                                         'timed_out', 'cancelled')),
  cancel_requested boolean NOT NULL DEFAULT false,
  lost boolean NOT NULL DEFAULT false,
  -- Idempotency-Key (NULL: none) and the SHA-256 of the request it came with.
  idempotency_key text,
  request_sha256 bytea,
  reply bytea,
  -- After this the execution is presumed lost if it has not finished (its hold's expiry).
  deadline_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  started_at timestamptz,
  finished_at timestamptz,
  -- X-Callback-Url (NULL: none): the final state is POSTed there once finished, signed with the
  -- organization's webhook secret; attempts so far, when the next is due (NULL: at once), and
  -- how it ended (NULL: not yet; 'delivered', 'failed': rejected or retried for 24 hours).
  callback_url text,
  callback_attempts integer NOT NULL DEFAULT 0,
  callback_next_at timestamptz,
  callback_outcome text CHECK (callback_outcome IN ('delivered', 'failed'))
);
-- A key names one execution per organization while it is kept.
CREATE UNIQUE INDEX execution_states_key ON billing.execution_states (org_id, idempotency_key)
  WHERE idempotency_key IS NOT NULL;
-- The sweep of unfinished executions past their deadline, and of expired rows.
CREATE INDEX execution_states_unfinished ON billing.execution_states (deadline_at)
  WHERE finished_at IS NULL;
CREATE INDEX execution_states_created ON billing.execution_states (created_at);
CREATE INDEX execution_states_callbacks_due
  ON billing.execution_states (COALESCE(callback_next_at, finished_at))
  WHERE callback_url IS NOT NULL AND callback_outcome IS NULL AND finished_at IS NOT NULL;

-- Each attempt to deliver a callback, shown with the execution.
CREATE TABLE billing.callback_attempts (
  execution_id text NOT NULL REFERENCES billing.execution_states ON DELETE CASCADE,
  attempt integer NOT NULL,
  attempted_at timestamptz NOT NULL DEFAULT now(),
  status_code integer,  -- the receiver's HTTP status; NULL without an answer
  error text,           -- why it was not delivered; names nothing secret
  outcome text NOT NULL CHECK (outcome IN ('delivered', 'rejected', 'retryable', 'network_error',
                                           'refused')),
  PRIMARY KEY (execution_id, attempt)
);

-- The secret an organization's callbacks are signed with ("whsec_" + base64, Standard
-- Webhooks), shown once when made; after a rotation the previous one signs alongside until
-- previous_until, so receivers can switch without missing a callback.
CREATE TABLE billing.webhook_secrets (
  org_id text PRIMARY KEY,
  secret text NOT NULL,
  previous_secret text,
  previous_until timestamptz,
  created_at timestamptz NOT NULL DEFAULT now()
);
