-- The secret mapping an organization stores for a function of its workspace (the X-Env-Keys
-- syntax, NAME=secret-id,...), which the workspace MCP endpoint applies when a call brings none.
CREATE TABLE registry.workspace_env_keys (
  org_id text NOT NULL,
  function_id uuid NOT NULL REFERENCES registry.functions (id),
  env_keys text NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (org_id, function_id)
);
