-- How a function's calls went, per UTC day: how many succeeded (the handler answered below 500)
-- and a histogram of their runtimes (bucket 0: under 1 ms; bucket b: [2^(b-1), 2^b) ms), for the
-- 7-day success rate and p50 latency the marketplace shows.
ALTER TABLE registry.daily_executions ADD COLUMN succeeded bigint NOT NULL DEFAULT 0;
CREATE TABLE registry.daily_latency (
  function_id uuid NOT NULL REFERENCES registry.functions (id),
  day date NOT NULL,
  bucket smallint NOT NULL,
  n bigint NOT NULL,
  PRIMARY KEY (function_id, day, bucket)
);
