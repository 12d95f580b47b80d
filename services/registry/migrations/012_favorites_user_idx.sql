CREATE INDEX favorites_user_idx ON registry.favorites (user_id, created_at DESC, function_id);
