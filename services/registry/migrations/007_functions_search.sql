ALTER TABLE registry.functions ADD COLUMN search tsvector
  GENERATED ALWAYS AS (registry.search_document(name, tags, category, description, overview))
  STORED;
