-- Failed sign-ins (and sign-ups) per subject, shared by every auth replica.
-- subject: 'account:<lower-case email>', 'client:<address>' or 'signup:<address>'.
CREATE TABLE auth.sign_in_throttle (
  subject text PRIMARY KEY,
  attempts integer NOT NULL,
  last_attempt_at timestamptz NOT NULL,
  locked_until timestamptz
);
