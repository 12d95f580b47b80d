#include "templates.h"

#include <cctype>
#include <fstream>

#include "TemplateBundleFiles.h"
#include "TemplateJavascriptMcp.h"
#include "TemplateJavascriptTool.h"
#include "TemplateLuaMcp.h"
#include "TemplateLuaTool.h"
#include "TemplatePythonMcp.h"
#include "TemplatePythonTool.h"
#include "toolgate/base/json_writer.h"

namespace toolgate::cli {
namespace fs = std::filesystem;
namespace {

struct Runtime {
  std::string_view name;
  std::string_view handler_file;
  std::string_view (*tool)();
  std::string_view (*mcp)();
};

constexpr Runtime kRuntimes[] = {
    {"python", "handler.py", TemplatePythonTool, TemplatePythonMcp},
    {"javascript", "handler.js", TemplateJavascriptTool, TemplateJavascriptMcp},
    {"lua", "handler.lua", TemplateLuaTool, TemplateLuaMcp},
};

// The event of an MCP tool is a JSON-RPC request. The schema only describes it: Toolgate checks
// events against input schemas, and a malformed request must reach the tool, whose JSON-RPC
// answer (-32600) the client expects, rather than be refused before it.
constexpr std::string_view kMcpInputSchema = R"({
    "type": "object",
    "description": "A JSON-RPC 2.0 request of the Model Context Protocol",
    "properties": {
      "jsonrpc": { "description": "\"2.0\"" },
      "id": { "description": "A string or an integer; absent in a notification" },
      "method": { "description": "initialize, ping, tools/list or tools/call" },
      "params": { "description": "The method's parameters, an object" }
    }
  })";

constexpr std::string_view kMcpExamples = R"([
    {
      "title": "List the tools",
      "event": { "jsonrpc": "2.0", "id": 1, "method": "tools/list" }
    },
    {
      "title": "Call divide",
      "event": {
        "jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": { "name": "divide", "arguments": { "a": 7, "b": 2 } }
      }
    }
  ])";

constexpr std::string_view kToolInputSchema = R"({
    "type": "object",
    "properties": {
      "name": { "type": "string", "description": "Who to greet" }
    }
  })";

constexpr std::string_view kToolExamples = R"([
    { "title": "Greet Ada", "event": { "name": "Ada" } }
  ])";

// The serverInfo name, written into handler code as a string literal that Python, JavaScript and
// Lua all read the same way: letters, digits, '-', '_', '.' and spaces only.
std::string ServerName(std::string_view name) {
  std::string out;
  for (char c : name) {
    unsigned char u = static_cast<unsigned char>(c);
    bool plain = u < 0x80 && (std::isalnum(u) || c == '-' || c == '_' || c == '.' || c == ' ');
    out.push_back(plain ? c : '-');
  }
  return out.empty() ? "tool" : out;
}

std::string ReplaceAll(std::string_view text, std::string_view from, std::string_view to) {
  std::string out;
  size_t start = 0;
  for (size_t at; (at = text.find(from, start)) != std::string_view::npos;
       start = at + from.size()) {
    out.append(text.substr(start, at - start)).append(to);
  }
  return out.append(text.substr(start));
}

// An npm package name for the tool: lower-case letters, digits and '-'.
std::string PackageName(std::string_view name) {
  std::string out;
  for (char c : name) {
    unsigned char u = static_cast<unsigned char>(c);
    out.push_back(u < 0x80 && std::isalnum(u) ? static_cast<char>(std::tolower(u)) : '-');
  }
  return out.empty() ? "tool" : out;
}

std::string Manifest(const Runtime& runtime, bool mcp, std::string_view name, bool bundle) {
  std::string m = "{\n";
  m += "  \"name\": " + JsonWriter::Quote(name) + ",\n";
  m += std::string("  \"description\": ") +
       (mcp ? "\"An MCP server with the tools divide and echo.\""
            : "\"Greets whoever it is given.\"") +
       ",\n";
  m += "  \"category\": \"Utilities\",\n";
  m += "  \"visibility\": \"private\",\n";
  m += "  \"price_micro_usd\": 0,\n";
  if (mcp) m += "  \"mcp\": true,\n";
  m += "  \"version\": \"0.1.0\",\n";
  m += "  \"runtime\": \"" + std::string(runtime.name) + "\",\n";
  m += "  \"compute_type\": \"CPU\",\n";
  m += "  \"input_schema\": " + std::string(mcp ? kMcpInputSchema : kToolInputSchema) + ",\n";
  m += "  \"examples\": " + std::string(mcp ? kMcpExamples : kToolExamples) + ",\n";
  if (bundle) m += "  \"bundle\": true,\n";
  m += "  \"handler\": \"" + std::string(runtime.handler_file) + "\"\n";
  m += "}\n";
  return m;
}

}  // namespace

Result<std::vector<TemplateFile>> ToolTemplate(std::string_view runtime, bool mcp,
                                               std::string_view name, bool bundle) {
  if (mcp && bundle) {
    return Status::InvalidArgument(
        "--bundle writes a plain tool's layout; start an MCP server "
        "with --mcp and add modules beside its handler");
  }
  for (const Runtime& r : kRuntimes) {
    if (r.name != runtime) continue;
    if (bundle) {
      std::vector<TemplateFile> files = {{"toolgate.json", Manifest(r, false, name, true)}};
      const std::string prefix = std::string(runtime) + "/";
      for (const EmbeddedFile& f : TemplateBundleFiles()) {
        if (!f.path.starts_with(prefix)) continue;
        files.push_back({std::string(f.path.substr(prefix.size())),
                         ReplaceAll(f.text, "{{package_name}}", PackageName(name))});
      }
      return files;
    }
    std::string code = ReplaceAll(mcp ? r.mcp() : r.tool(), "{{server_name}}", ServerName(name));
    return std::vector<TemplateFile>{{"toolgate.json", Manifest(r, mcp, name, false)},
                                     {std::string(r.handler_file), std::move(code)}};
  }
  return Status::InvalidArgument("--runtime must be python, javascript or lua");
}

Status WriteToolTemplate(const fs::path& dir, const std::vector<TemplateFile>& files) {
  for (const auto& f : files) {
    if (fs::exists(dir / f.path)) {
      return Status::Conflict((dir / f.path).string() + " exists already; choose a new directory");
    }
  }
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Status::Unavailable("cannot create " + dir.string() + ": " + ec.message());
  for (const auto& f : files) {
    fs::create_directories((dir / f.path).parent_path(), ec);
    std::ofstream out(dir / f.path, std::ios::binary | std::ios::trunc);
    out << f.text;
    if (!out.flush()) return Status::Unavailable("cannot write " + (dir / f.path).string());
  }
  return Status::Ok();
}

}  // namespace toolgate::cli
