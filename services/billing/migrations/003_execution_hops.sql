-- Each stage's time with the job ([{name, start_unix_us, duration_us}], in chain order), for the
-- execution detail. Executions recorded before have none.
ALTER TABLE billing.executions ADD COLUMN hops text NOT NULL DEFAULT '[]';
