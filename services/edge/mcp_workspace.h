// The workspace MCP server (/mcp): an organization's functions as MCP tools (docs/mcp.md,
// "The workspace endpoint"). Pure functions; thread-safe.
//
// Naming: every listed function gets a name derived from its own (lower-case letters, digits,
// '-' and single '_', at most kMaxBaseChars); a name already given to a function listed earlier
// gets "_" and the start of the function id appended, so names stay put as functions come and
// go. A plain function is the tool of that name. An MCP function is not a tool itself: each of
// its tools is listed as "<its name>__<tool name>". Derived names never contain "__", so the
// first "__" of a called name separates the two.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "toolgate/v1/toolgate.pb.h"

namespace toolgate::edge {

inline constexpr size_t kMaxToolNameChars = 64;  // MCP tool names: [A-Za-z0-9_-]{1,64}
inline constexpr size_t kMaxBaseChars = 32;
inline constexpr std::string_view kToolSeparator = "__";

// The name of a function before uniqueness: "Weather Forecast!" -> "weather_forecast"; "tool"
// when nothing usable is left.
std::string ToolNameBase(std::string_view function_name);
// One unique name per function, in the order given (see above).
std::vector<std::string> AssignToolNames(const std::vector<v1::WorkspaceTool>& functions);

// A function's input_schema as an MCP inputSchema, which must describe an object. An object
// schema (or one naming no type) is used as is (with "type": "object" added when missing), and
// the call's arguments are the event. Any other schema is wrapped as the property "event" of an
// object schema, and the call's arguments carry the event under "event".
struct McpInputSchema {
  std::string json;
  bool wrapped = false;
};
McpInputSchema ToMcpInputSchema(std::string_view input_schema_json);

// The event of a tools/call: arguments_json itself ("{}" when empty), or its member "event" for
// a wrapped schema; or, when that is not an object or a string (what an event may be), the
// message of a -32602 error.
struct ArgumentsEvent {
  std::string event_json;
  std::string error;  // empty: event_json holds the event
};
ArgumentsEvent EventFromArguments(std::string_view arguments_json, bool wrapped);

// What a tools/call names.
struct ToolTarget {
  size_t function = 0;   // index into the functions
  std::string mcp_tool;  // for an MCP function: its tool's own name
};
// The target of tool `name` among functions named by AssignToolNames; nullopt when none.
std::optional<ToolTarget> ResolveTool(const std::vector<v1::WorkspaceTool>& functions,
                                      const std::vector<std::string>& names, std::string_view name);

// A tools/list entry for a plain function: with outputSchema when its version declares one.
std::string FunctionToolJson(const v1::WorkspaceTool& function, std::string_view name);
// One page of a list result (tools/list, resources/list, ...): the array `member` of a JSON-RPC
// response's result as JSON, and its nextCursor ("" on the last page); nullopt when body is not
// such a result.
struct ListPage {
  std::string items_json;
  std::string next_cursor;
};
std::optional<ListPage> ListResultPage(std::string_view response_body, std::string_view member);

// The entries of an MCP function's tools array (a tools/list result's "tools"), each renamed
// "<prefix>__<name>"; tools whose new name would be longer than kMaxToolNameChars are left out.
// Empty when tools_json is not an array.
std::vector<std::string> PrefixedToolsJson(std::string_view tools_json, std::string_view prefix);
// {"tools": [entries...]}
std::string ToolsListResult(const std::vector<std::string>& entries);

// The result of a tools/call that ran a plain function: the body as text content,
// structuredContent when the body is a JSON object, isError when status_code >= 400.
// With the version's output_schema (an object schema; "" when it declares none), a result whose
// body is not an object following it is a tool error naming what differs (the client gets no
// structuredContent its outputSchema does not describe); a failed call (400 or more) is not
// checked.
std::string ToolCallResult(int status_code, std::string_view body,
                           std::string_view output_schema_json = {});

// The JSON-RPC request an MCP function receives for a forwarded tools/call: the client's id and
// params, with params.name replaced by the function's own tool name.
std::string ForwardedToolCall(std::string_view id_json, std::string_view params_json,
                              std::string_view tool_name);
// The same for any method whose params name what it acts on: params.<member> (name, uri)
// replaced by the function's own value.
std::string ForwardedRequest(std::string_view id_json, std::string_view method,
                             std::string_view params_json, std::string_view member,
                             std::string_view value);

// Resources and prompts of MCP functions on the workspace, from their listings. A prompt is
// named like a tool ("<function name>__<prompt>"); a resource's URI (and a template's
// uriTemplate) becomes "toolgate://<function name>/<its own URI>", so URIs of different
// functions never collide and the function is read back from the URI.
inline constexpr std::string_view kWorkspaceUriScheme = "toolgate://";
// The entries of a listing's resources (member "uri") or resource templates ("uriTemplate"),
// each under the function's name; entries without that member are left out.
std::vector<std::string> PrefixedResourcesJson(std::string_view array_json,
                                               std::string_view function_name,
                                               std::string_view uri_member);
// "toolgate://<function name>/<uri>" -> (function name, uri); nullopt for any other URI.
struct WorkspaceUri {
  std::string function_name;
  std::string uri;
};
std::optional<WorkspaceUri> ParseWorkspaceUri(std::string_view uri);

// The X-Env-Keys header for one function: only the pairs whose names it declares (a workspace
// client sends one header for every tool). The header unchanged when it does not parse (the
// invoke chain then answers 400); empty when no pair is left.
std::string EnvKeysFor(std::string_view header, const v1::WorkspaceTool& function);

}  // namespace toolgate::edge
