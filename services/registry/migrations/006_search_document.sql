-- The full-text document of a function, by weight: name (A), tags and category (B), description
-- (C), overview (D). Immutable (a fixed text search configuration), so a generated column may
-- use it.
CREATE FUNCTION registry.search_document(name text, tags text[], category text,
                                         description text, overview text)
RETURNS tsvector LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT setweight(to_tsvector('english'::regconfig, name), 'A') ||
         setweight(to_tsvector('english'::regconfig,
                               array_to_string(tags, ' ') || ' ' || category), 'B') ||
         setweight(to_tsvector('english'::regconfig, description), 'C') ||
         setweight(to_tsvector('english'::regconfig, overview), 'D')
$$;
