CREATE INDEX functions_org_idx ON registry.functions (org_id, created_at);
