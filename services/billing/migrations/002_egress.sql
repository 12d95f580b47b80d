-- A call's outbound requests through the egress gateway (a JSON array of {method, host, port,
-- address, status, bytes_sent, bytes_received, ms, refused}; never a path, query string, header
-- or body) and their bytes, for the execution log.
ALTER TABLE billing.executions
  ADD COLUMN egress text NOT NULL DEFAULT '[]',
  ADD COLUMN egress_bytes bigint NOT NULL DEFAULT 0;
