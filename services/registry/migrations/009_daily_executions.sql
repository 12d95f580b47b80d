-- Executions per function and UTC day, for the Trending highlight (the last 7 days).
CREATE TABLE registry.daily_executions (
  function_id uuid NOT NULL REFERENCES registry.functions (id),
  day date NOT NULL,
  executions bigint NOT NULL,
  PRIMARY KEY (function_id, day)
);
