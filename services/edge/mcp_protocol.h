// The Model Context Protocol as the edge speaks it over Streamable HTTP (docs/mcp.md): protocol
// revisions, the transport's header rules, and JSON-RPC 2.0 messages. Pure functions; thread-safe.
#pragma once

#include <array>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "toolgate/v1/toolgate.pb.h"

namespace toolgate::edge {

// The revisions the MCP endpoints accept, oldest first.
inline constexpr std::array<std::string_view, 4> kMcpRevisions = {"2024-11-05", "2025-03-26",
                                                                  "2025-06-18", "2025-11-25"};
inline constexpr std::string_view kLatestMcpRevision = "2025-11-25";

bool IsSupportedMcpRevision(std::string_view revision);
// The revision a server answers to a client asking for `asked`: that one when supported, else the
// latest.
std::string_view NegotiateMcpRevision(std::string_view asked);

// Whether an Accept header value admits media_type ("application/json"). The most specific
// matching range decides (type/subtype over type/* over */*); q=0 refuses. An absent or empty
// header admits everything (RFC 9110, section 12.5.1).
bool AcceptsMediaType(std::string_view accept, std::string_view media_type);
// Whether the client accepts the answers of `revision`: application/json always, and from
// 2025-03-26 (when Streamable HTTP began) text/event-stream too, as those clients must list both.
bool AcceptsMcpAnswers(std::string_view accept, std::string_view revision);
// Whether a Content-Type value is application/json (parameters and case ignored).
bool IsJsonContentType(std::string_view content_type);

// One JSON-RPC 2.0 message from a client.
struct McpMessage {
  enum class Kind { kRequest, kNotification, kResponse };
  Kind kind = Kind::kRequest;
  std::string method;       // requests and notifications
  std::string id_json;      // requests and responses: the id as compact JSON ("7", "\"a\"")
  std::string params_json;  // "" when absent
  // The message nests deeper than core::kMaxEventDepth levels. A request's message, or part of
  // it, becomes an invocation's event, so such a request must be refused (JSON-RPC error) before
  // anything runs.
  bool too_deep = false;
};

// The message in a POST body, or the 400 problem (invalid_json, bad_request) that answers a body
// that is not exactly one JSON-RPC 2.0 message: not JSON, a batch, "jsonrpc" other than "2.0", a
// method that is not a string, an id that is neither a string nor a number. A body too deep for
// the JSON parser itself (over 1,024 levels) cannot even yield the id to answer to: it is the
// 400 invalid_event that refuses a too deep invoke body.
std::variant<McpMessage, v1::Problem> ParseMcpMessage(std::string_view body);

// The string member `key` of a message's params object, or "".
std::string ParamString(const McpMessage& message, std::string_view key);
// The member `key` of a message's params object as compact JSON, or "" when absent.
std::string ParamJson(const McpMessage& message, std::string_view key);

// {"jsonrpc":"2.0","id":<id_json>,"result":<result_json>}; id_json and result_json must be JSON.
std::string JsonRpcResult(std::string_view id_json, std::string_view result_json);
// {"jsonrpc":"2.0","id":<id_json>,"error":{"code","message"[,"data"]}}; data_json may be empty.
std::string JsonRpcError(std::string_view id_json, int code, std::string_view message,
                         std::string_view data_json = {});

// The JSON-RPC error message that refuses a request whose message is too_deep.
std::string TooDeepMessage();

// JSON-RPC 2.0 error codes (gateway-spec.md, "JSON-RPC errors").
inline constexpr int kJsonRpcMethodNotFound = -32601;
inline constexpr int kJsonRpcInvalidParams = -32602;
inline constexpr int kJsonRpcInternalError = -32603;

// request_json (a JSON-RPC request) with params._meta.<key> set to value_json, params and _meta
// made when absent; unchanged when it is not an object.
std::string WithParamsMeta(std::string_view request_json, std::string_view key,
                           std::string_view value_json);

// One input request of an input_required result (result.inputRequests): its key, method and
// params.
struct InputRequest {
  std::string key;
  std::string method;
  std::string params_json;
};
struct InputRequests {
  std::vector<InputRequest> requests;
  std::string error;  // why they cannot be asked; empty when they can
};
// The input requests of response, each checked for a session-era client: a method it can be
// asked (sampling/createMessage, elicitation/create, roots/list) whose capability (sampling,
// elicitation, roots) client_capabilities_json declares, at most 16 of them.
InputRequests InputRequestsOf(std::string_view response, std::string_view client_capabilities_json);

// Whether body is a JSON-RPC 2.0 response (result or error) whose id equals id_json.
bool IsResponseTo(std::string_view body, std::string_view id_json);
// result.protocolVersion of an initialize response, or "" when body has none.
std::string InitializeResultRevision(std::string_view body);

}  // namespace toolgate::edge
