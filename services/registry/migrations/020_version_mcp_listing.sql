-- What an MCP version lists, as its publisher's edge found it right after publishing:
-- {"tools": [...], "resources": [...], "resource_templates": [...], "prompts": [...]}, the arrays
-- of the handler's tools/list, resources/list, resources/templates/list and prompts/list. The
-- workspace endpoint lists from it instead of running (and billing) every handler on every
-- tools/list. Written once, like the version (NULL until then, and for versions of non-MCP
-- functions, whose listing failed, or that predate listings: those are listed live).
ALTER TABLE registry.versions ADD COLUMN mcp_listing jsonb;
