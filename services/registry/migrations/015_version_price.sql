-- A version's price is fixed when it is published: a caller pinned to a version is charged what
-- that version cost when it was published, whatever the function's price (the default for new
-- versions) becomes later. Versions published before the column existed take the function's
-- price of now, which is what their callers paid until then.
ALTER TABLE registry.versions ADD COLUMN price_micro_usd bigint CHECK (price_micro_usd >= 0);
UPDATE registry.versions v SET price_micro_usd = f.price_micro_usd
  FROM registry.functions f WHERE f.id = v.function_id;
ALTER TABLE registry.versions ALTER COLUMN price_micro_usd SET NOT NULL;
