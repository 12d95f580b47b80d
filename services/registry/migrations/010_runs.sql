-- Which organizations have run which functions: an organization may rate a function only once
-- it has run it.
CREATE TABLE registry.runs (
  org_id text NOT NULL,
  function_id uuid NOT NULL REFERENCES registry.functions (id),
  executions bigint NOT NULL,
  first_run_at timestamptz NOT NULL DEFAULT now(),
  last_run_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (org_id, function_id)
);
