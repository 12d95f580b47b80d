-- Users, organizations, sessions and API keys. Secrets (session tokens, API keys) are stored
-- only as their SHA-256; passwords only as Argon2id strings.
-- One DO block, because pg::Migrate runs each migration as a single statement.
DO $migration$ BEGIN
  CREATE TABLE auth.organizations (
    id uuid PRIMARY KEY,
    name text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
  );

  CREATE TABLE auth.users (
    id uuid PRIMARY KEY,
    email text NOT NULL,
    password_hash text NOT NULL,
    org_id uuid NOT NULL REFERENCES auth.organizations (id),
    created_at timestamptz NOT NULL DEFAULT now()
  );
  -- Emails are kept as typed but unique regardless of case.
  CREATE UNIQUE INDEX users_email_lower ON auth.users (lower(email));

  CREATE TABLE auth.sessions (
    token_sha256 bytea PRIMARY KEY,
    user_id uuid NOT NULL REFERENCES auth.users (id) ON DELETE CASCADE,
    org_id uuid NOT NULL REFERENCES auth.organizations (id),
    expires_at timestamptz NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
  );
  CREATE INDEX sessions_expires_at ON auth.sessions (expires_at);

  CREATE TABLE auth.api_keys (
    id uuid PRIMARY KEY,
    org_id uuid NOT NULL REFERENCES auth.organizations (id),
    user_id uuid REFERENCES auth.users (id),
    name text NOT NULL,
    prefix text NOT NULL,
    key_sha256 bytea NOT NULL UNIQUE,
    scopes text[] NOT NULL,
    expires_at timestamptz NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    last_used_at timestamptz,
    revoked_at timestamptz
  );
  -- GET /api-keys pages through an organization's keys newest first.
  CREATE INDEX api_keys_org_created ON auth.api_keys (org_id, created_at DESC, id DESC);
END $migration$;
