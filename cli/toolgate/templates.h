// `toolgate new DIR --runtime python|javascript|lua [--mcp]`: the files a new tool starts from,
// a manifest (toolgate.json, as `toolgate publish` reads it) and a handler that runs as written.
// The MCP templates are MCP servers: initialize, ping, tools/list and tools/call, with the
// JSON-RPC errors of gateway-spec.md. Pure functions apart from WriteToolTemplate.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "toolgate/base/status.h"

namespace toolgate::cli {

struct TemplateFile {
  std::string path;  // relative to the tool's directory
  std::string text;
};

// The files of a new tool called `name` (the manifest's name; the MCP serverInfo name is derived
// from it) for runtime "python", "javascript" or "lua"; an MCP server when mcp. With bundle, the
// tool is a bundle (templates/bundles/<runtime>: the handler, a module of its own beside it and
// a .toolgateignore; package.json for JavaScript) and its manifest says "bundle": true.
// InvalidArgument for any other runtime, or mcp with bundle.
Result<std::vector<TemplateFile>> ToolTemplate(std::string_view runtime, bool mcp,
                                               std::string_view name, bool bundle = false);

// Writes files into dir, creating it when missing. Conflict, and nothing written, when any of
// the files exists already; Unavailable when a file cannot be written.
Status WriteToolTemplate(const std::filesystem::path& dir, const std::vector<TemplateFile>& files);

}  // namespace toolgate::cli
