-- Platform operators (docs/operations.md "Operators"): users who may grant credit to any
-- organization. Only `toolgate admin create` sets the flag, on the database directly; no route
-- of the API writes it, so signing up can never make an operator.
ALTER TABLE auth.users ADD COLUMN is_operator boolean NOT NULL DEFAULT false;
