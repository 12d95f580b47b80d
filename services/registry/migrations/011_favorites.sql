-- Favorites belong to a user (not to the organization): the heart is personal.
CREATE TABLE registry.favorites (
  user_id text NOT NULL,
  function_id uuid NOT NULL REFERENCES registry.functions (id),
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (user_id, function_id)
);
