-- The ratings' running totals, kept with the function so the marketplace sorts without joining.
ALTER TABLE registry.functions
  ADD COLUMN rating_count bigint NOT NULL DEFAULT 0,
  ADD COLUMN rating_sum bigint NOT NULL DEFAULT 0;
