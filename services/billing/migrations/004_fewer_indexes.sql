-- Every settled call writes an execution row, and every index on it is work in the statement
-- that commits the call. An execution's seq is read only with its organization
-- (executions_org, executions_org_function): its own unique index served no query.
ALTER TABLE billing.executions DROP CONSTRAINT executions_seq_key;
