-- An owner may deprecate a version (it keeps running for whoever calls it; the API and the web
-- app mark it) and unpublish one (it is gone: calls pinned to it are 404, "latest" is the next
-- highest). An unpublished version's number is kept so that it is never published again:
-- executors cache code by function and version, and a reused number must never run old code.
ALTER TABLE registry.versions ADD COLUMN deprecated boolean NOT NULL DEFAULT false;
CREATE TABLE registry.unpublished_versions (
  function_id uuid NOT NULL REFERENCES registry.functions (id) ON DELETE CASCADE,
  version text NOT NULL,
  p1 integer NOT NULL,
  p2 integer NOT NULL,
  p3 integer NOT NULL,
  p4 integer NOT NULL,
  unpublished_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (function_id, p1, p2, p3, p4)
);
-- Publishing a number that was unpublished fails like publishing a published one (a unique
-- violation), inside the publishing transaction, so no race lets a number come back.
CREATE FUNCTION registry.refuse_unpublished_version() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM registry.unpublished_versions u
             WHERE u.function_id = NEW.function_id AND u.p1 = NEW.p1 AND u.p2 = NEW.p2
               AND u.p3 = NEW.p3 AND u.p4 = NEW.p4) THEN
    RAISE unique_violation USING MESSAGE = 'version ' || NEW.version || ' was unpublished';
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER versions_refuse_unpublished BEFORE INSERT ON registry.versions
  FOR EACH ROW EXECUTE FUNCTION registry.refuse_unpublished_version();
