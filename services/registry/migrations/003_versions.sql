-- A version's numeric parts (missing parts 0) make 1.0 and 1.0.0 collide on the unique index, and
-- order versions numerically.
CREATE TABLE registry.versions (
  function_id uuid NOT NULL REFERENCES registry.functions (id),
  version text NOT NULL,
  p1 integer NOT NULL,
  p2 integer NOT NULL,
  p3 integer NOT NULL,
  p4 integer NOT NULL,
  runtime text NOT NULL CHECK (runtime IN ('python', 'javascript', 'lua')),
  compute_type text NOT NULL CHECK (compute_type IN ('CPU', 'GPU')),
  code text NOT NULL,
  -- json, not jsonb: the author's key order (schema properties, example events) is kept.
  input_schema json NOT NULL,
  declared_keys text[] NOT NULL DEFAULT '{}',
  timeout_ms integer NOT NULL CHECK (timeout_ms BETWEEN 1 AND 900000),
  memory_mb integer NOT NULL CHECK (memory_mb BETWEEN 1 AND 4096),
  examples json NOT NULL DEFAULT '[]',
  published_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (function_id, version),
  UNIQUE (function_id, p1, p2, p3, p4)
);
