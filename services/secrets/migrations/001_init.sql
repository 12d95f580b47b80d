-- Secrets, encrypted at rest: XChaCha20-Poly1305 under the master key, additional data
-- "<org_id>:<id>". The value itself is never stored in clear.
CREATE TABLE secrets.secrets (
  id uuid PRIMARY KEY,
  org_id text NOT NULL,
  name text NOT NULL,
  nonce bytea NOT NULL,
  ciphertext bytea NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (org_id, name)
);
