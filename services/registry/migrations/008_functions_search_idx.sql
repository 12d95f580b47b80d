CREATE INDEX functions_search_idx ON registry.functions USING gin (search);
