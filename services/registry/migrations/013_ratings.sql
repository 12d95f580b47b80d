-- One rating per user and function; org_name is the rater's organization when it rated.
CREATE TABLE registry.ratings (
  function_id uuid NOT NULL REFERENCES registry.functions (id),
  user_id text NOT NULL,
  org_id text NOT NULL,
  org_name text NOT NULL,
  stars smallint NOT NULL CHECK (stars BETWEEN 1 AND 5),
  review text NOT NULL DEFAULT '',
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (function_id, user_id)
);
