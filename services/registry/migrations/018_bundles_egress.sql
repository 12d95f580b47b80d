-- A version's code may be a bundle (a .tar.gz of the handler and its modules). Bundles are
-- stored once per SHA-256 of their bytes, however many versions (of any function) publish the
-- same archive; size_bytes, unpacked_bytes and files are what the publish-time check found.
CREATE TABLE registry.bundles (
  digest text PRIMARY KEY CHECK (digest ~ '^[0-9a-f]{64}$'),
  bytes bytea NOT NULL,
  size_bytes bigint NOT NULL CHECK (size_bytes > 0),
  unpacked_bytes bigint NOT NULL CHECK (unpacked_bytes >= 0),
  files integer NOT NULL CHECK (files > 0),
  created_at timestamptz NOT NULL DEFAULT now()
);
-- egress: where the handler may connect, as published ('{}': nowhere). A bundle version has
-- bundle_digest and handler (its entry file) and an empty code; a single-file version neither.
ALTER TABLE registry.versions
  ADD COLUMN egress text[] NOT NULL DEFAULT '{}',
  ADD COLUMN bundle_digest text REFERENCES registry.bundles (digest),
  ADD COLUMN handler text,
  ADD CONSTRAINT versions_code_or_bundle CHECK (
    (bundle_digest IS NULL AND handler IS NULL) OR
    (bundle_digest IS NOT NULL AND handler IS NOT NULL AND code = ''));
CREATE INDEX versions_bundle_digest_idx ON registry.versions (bundle_digest)
  WHERE bundle_digest IS NOT NULL;
