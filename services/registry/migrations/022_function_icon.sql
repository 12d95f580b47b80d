-- A function's icon: an https:// URL of an image, shown with its tool in MCP listings and in the
-- web app; '' when it has none.
ALTER TABLE registry.functions ADD COLUMN icon_url text NOT NULL DEFAULT '';
