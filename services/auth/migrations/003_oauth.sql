-- OAuth 2.1 for MCP clients (docs/oauth.md): registered clients, pending authorization requests,
-- grants (a member's consent: one client, one MCP endpoint, billed to one organization), codes and
-- tokens. Codes and tokens are stored only as their SHA-256, client secrets too.
DO $migration$ BEGIN
  -- Clients registered dynamically (RFC 7591) or by the operator. Clients identified by a metadata
  -- document URL are not stored: their document is fetched and cached.
  CREATE TABLE auth.oauth_clients (
    client_id text PRIMARY KEY,
    kind text NOT NULL CHECK (kind IN ('registered', 'pre_registered')),
    client_name text NOT NULL,
    logo_uri text,
    client_uri text,
    redirect_uris text[] NOT NULL,
    grant_types text[] NOT NULL,
    token_endpoint_auth_method text NOT NULL,
    client_secret_sha256 bytea,
    created_at timestamptz NOT NULL DEFAULT now()
  );

  -- An authorization request waiting for the member's answer on the consent page. Its id is
  -- shown in the page's URL; the client's details are kept as the client gave them at the time.
  CREATE TABLE auth.oauth_requests (
    id text PRIMARY KEY,
    client_id text NOT NULL,
    client_kind text NOT NULL,
    client_name text NOT NULL,
    logo_uri text,
    client_uri text,
    redirect_uri text NOT NULL,
    state text,
    code_challenge text NOT NULL,
    resource text NOT NULL,
    resource_path text NOT NULL,
    scopes text[] NOT NULL,
    refresh_allowed boolean NOT NULL,
    issuer text NOT NULL,
    expires_at timestamptz NOT NULL,
    answered_at timestamptz
  );
  CREATE INDEX oauth_requests_expires_at ON auth.oauth_requests (expires_at);

  CREATE TABLE auth.oauth_grants (
    id uuid PRIMARY KEY,
    user_id uuid NOT NULL REFERENCES auth.users (id) ON DELETE CASCADE,
    org_id uuid NOT NULL REFERENCES auth.organizations (id),
    client_id text NOT NULL,
    client_name text NOT NULL,
    logo_uri text,
    redirect_uri text NOT NULL,
    resource text NOT NULL,
    resource_path text NOT NULL,
    scopes text[] NOT NULL,
    refresh_allowed boolean NOT NULL,
    cap_micro_usd bigint CHECK (cap_micro_usd > 0),
    created_at timestamptz NOT NULL DEFAULT now(),
    revoked_at timestamptz
  );
  CREATE INDEX oauth_grants_org_created ON auth.oauth_grants (org_id, created_at DESC);

  -- One per approved request; used once. A second use revokes the grant.
  CREATE TABLE auth.oauth_codes (
    code_sha256 bytea PRIMARY KEY,
    grant_id uuid NOT NULL REFERENCES auth.oauth_grants (id) ON DELETE CASCADE,
    client_id text NOT NULL,
    redirect_uri text NOT NULL,
    code_challenge text NOT NULL,
    expires_at timestamptz NOT NULL,
    used_at timestamptz
  );

  -- Access and refresh tokens, each of one grant (the refresh family: reuse of a rotated refresh
  -- token revokes the grant).
  CREATE TABLE auth.oauth_tokens (
    token_sha256 bytea PRIMARY KEY,
    grant_id uuid NOT NULL REFERENCES auth.oauth_grants (id) ON DELETE CASCADE,
    kind text NOT NULL CHECK (kind IN ('access', 'refresh')),
    expires_at timestamptz NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    rotated_at timestamptz,
    revoked_at timestamptz
  );
  CREATE INDEX oauth_tokens_grant ON auth.oauth_tokens (grant_id);
  CREATE INDEX oauth_tokens_expires_at ON auth.oauth_tokens (expires_at);
END $migration$;
