-- Functions. (One statement per migration file: pg::Migrate runs each as one statement.)
CREATE TABLE registry.functions (
  id uuid PRIMARY KEY,
  org_id text NOT NULL,
  org_name text NOT NULL,  -- the owner's name when the function was created
  name text NOT NULL,
  description text NOT NULL,
  overview text NOT NULL DEFAULT '',
  category text NOT NULL,
  sector text NOT NULL DEFAULT '',
  tags text[] NOT NULL DEFAULT '{}',
  visibility text NOT NULL CHECK (visibility IN ('public', 'private')),
  price_micro_usd bigint NOT NULL CHECK (price_micro_usd >= 0),
  mcp boolean NOT NULL DEFAULT false,
  executions bigint NOT NULL DEFAULT 0,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
