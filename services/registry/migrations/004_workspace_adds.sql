CREATE TABLE registry.workspace_adds (
  org_id text NOT NULL,
  function_id uuid NOT NULL REFERENCES registry.functions (id),
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (org_id, function_id)
);
