-- A version's output_schema: the JSON Schema its result body follows (an object), offered to MCP
-- clients as the tool's outputSchema; NULL when it declares none.
ALTER TABLE registry.versions ADD COLUMN output_schema json;
