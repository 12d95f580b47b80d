CREATE INDEX ratings_list_idx ON registry.ratings (function_id, created_at DESC, user_id);
