// The per-request rules of MCP revision 2026-07-28 and later ("stateless": no initialize, no
// Mcp-Session-Id; every request names its revision and the client's capabilities in
// params._meta, and mirrors its method and name into headers). docs/mcp.md, "Two eras of the
// protocol". Pure functions; thread-safe.
//
// The edge checks everything here before a handler runs, so a request refused for its envelope
// is never charged; what the request does (which tool, which arguments) is always read from the
// parsed body, never from the headers, which are only compared with it.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>

#include "mcp_protocol.h"

namespace toolgate::edge {

// The stateless revisions the endpoints serve, oldest first.
inline constexpr std::array<std::string_view, 1> kStatelessMcpRevisions = {"2026-07-28"};

// The _meta keys of a stateless request.
inline constexpr std::string_view kMetaProtocolVersion = "io.modelcontextprotocol/protocolVersion";
inline constexpr std::string_view kMetaClientCapabilities =
    "io.modelcontextprotocol/clientCapabilities";
inline constexpr std::string_view kMetaServerInfo = "io.modelcontextprotocol/serverInfo";

// JSON-RPC error codes the 2026-07-28 revision defines.
inline constexpr int kJsonRpcHeaderMismatch = -32020;
inline constexpr int kJsonRpcMissingClientCapability = -32021;
inline constexpr int kJsonRpcUnsupportedProtocolVersion = -32022;

bool IsStatelessMcpRevision(std::string_view revision);

// What the edge reads of a request's params._meta.
struct RequestMeta {
  std::optional<std::string> protocol_version;  // absent, or not a string: nullopt
  bool has_client_capabilities = false;         // an object under kMetaClientCapabilities
  std::string traceparent;                      // _meta.traceparent (W3C), "" when absent
};
RequestMeta ReadRequestMeta(const McpMessage& message);

// The W3C traceparent a request's params._meta carries (the revision's way to continue a
// client's trace), or "" when it carries none. Cheap for the bodies that name none.
std::string MetaTraceparent(std::string_view body);

// Whether a POST speaks a stateless revision: its _meta names a protocol version, or it carries
// no session and an MCP-Protocol-Version header that is not a session-era revision. Everything
// else (initialize, a session's requests, a session-era header) is the 2025-11-25 era.
bool IsStatelessRequest(const RequestMeta& meta,
                        const std::optional<std::string>& protocol_version_header,
                        bool has_session_header);

// The headers a stateless request mirrors from its body.
struct MirroredHeaders {
  std::optional<std::string> protocol_version;  // MCP-Protocol-Version
  std::optional<std::string> method;            // Mcp-Method
  std::optional<std::string> name;              // Mcp-Name, possibly "=?base64?...?="
};

// A JSON-RPC error the edge answers itself, with the HTTP status the transport gives it.
struct McpRefusal {
  int http_status = 400;
  std::string body;  // a JSON-RPC error response
};

// The refusal of a stateless request whose envelope is wrong, checked in this order (each names
// what to fix): _meta without a protocol version or client capabilities (-32602); an
// MCP-Protocol-Version header absent or unlike the _meta version (-32020); a revision this edge
// does not serve (-32022, data {supported, requested}); Mcp-Method absent or unlike the method,
// Mcp-Name absent or unlike params.name (tools/call, prompts/get) or params.uri (resources/read),
// after decoding the base64 form (-32020). nullopt: the request may go on.
std::optional<McpRefusal> CheckStatelessRequest(const McpMessage& message, const RequestMeta& meta,
                                                const MirroredHeaders& headers);

// The HTTP status of a stateless answer: 404 for -32601 (method not found), 400 for the
// envelope errors (-32700, -32600, -32020, -32021, -32022), 200 for any other response,
// results and tool errors alike.
int StatelessHttpStatus(std::string_view response_body);

// Every stateless revision served and every session-era one, newest first, as a JSON array:
// the versions an UnsupportedProtocolVersion error and a server/discover result list.
std::string SupportedRevisionsJson();

// body (a JSON-RPC response) with result.resultType set to "complete" when the result has
// none, as this revision requires of every result; anything else unchanged.
std::string WithResultType(std::string body);

// The string member `member` of the object `outer` of a JSON object (result.requestState of a
// response, params.requestState of a request); nullopt when absent or not a string.
std::optional<std::string> NestedString(std::string_view json, std::string_view outer,
                                        std::string_view member);
// json with outer.member set to value_json (replaced where present, else added last); json
// unchanged when it has no object `outer`.
std::string WithNestedMember(std::string_view json, std::string_view outer, std::string_view member,
                             std::string_view value_json);

}  // namespace toolgate::edge
