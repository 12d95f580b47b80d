// McpEndpoint: the MCP Streamable HTTP endpoints of the edge (docs/mcp.md).
//
//   /mcp/functions/{function_id}[/{version}]  one MCP function: each JSON-RPC request is one
//                                             invocation of it through the ordinary invoke chain
//                                             (same checks, same billing), its response the
//                                             handler's JSON-RPC response
//   /mcp                                      the calling organization's workspace: its functions
//                                             (and the tools of its MCP functions) as tools
//
// POST carries one JSON-RPC message. Requests are answered with application/json; notifications
// and responses get 202 and run nothing. initialize issues an Mcp-Session-Id (mcp_session.h);
// every later POST and DELETE must carry it (400 without, 404 when unknown, ended, expired, of
// another endpoint or another key). MCP-Protocol-Version, when sent, must be a supported revision
// and the session's (400). An Origin other than the edge's own is refused (403); an Accept that
// does not admit the revision's answers gets 406. GET (no server-initiated stream) and any other
// method get 405. Platform errors are problem+json with their HTTP status.
//
// The endpoint owns no I/O: everything it asks of the system goes through McpBackend, and its
// answer through a callback, so tests drive it with a fake backend. Thread-safe; callbacks may run
// on any thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "mcp_protocol.h"
#include "mcp_session.h"
#include "render.h"
#include "toolgate/v1/toolgate.pb.h"

namespace toolgate::edge {

// What the endpoint needs from the rest of Toolgate. Each call completes its callback exactly
// once, on any thread; a bus failure arrives as the reply's problem (503, 504). Thread-safe.
class McpBackend {
 public:
  virtual ~McpBackend() = default;
  // Sends job along the invoke chain (the backend sets its reply subject) and reports the final
  // InvokeReply: the handler's result or the platform's problem.
  virtual void Invoke(v1::InvokeJob job, std::function<void(v1::InvokeReply)> done) = 0;
  // tg.auth.authenticate for an API key.
  virtual void Authenticate(std::string api_key_sha256,
                            std::function<void(v1::AuthenticateReply)> done) = 0;
  // tg.registry.workspace_tools for an organization.
  virtual void WorkspaceTools(std::string org_id,
                              std::function<void(v1::WorkspaceToolsReply)> done) = 0;
  // Tells every edge replica (this one included) that a session ended.
  virtual void EndSession(const v1::McpSessionEnded& ended) = 0;
};

// One HTTP request to an MCP endpoint, as the edge read it.
struct McpHttpRequest {
  std::string method;      // "POST", "GET", "DELETE", ...
  bool workspace = false;  // /mcp; otherwise /mcp/functions/{function_id}[/{version}]
  std::string function_id;
  std::string version;  // empty: the latest published version
  std::string api_key;  // from Authorization, without a "Bearer " prefix; empty when absent
  std::string origin;   // empty when absent
  std::string host;     // the Host header
  std::optional<std::string> accept;
  std::optional<std::string> content_type;
  std::optional<std::string> session_id;        // Mcp-Session-Id
  std::optional<std::string> protocol_version;  // MCP-Protocol-Version
  std::optional<std::string> env_keys;          // X-Env-Keys
  std::string body;
  std::string request_id;
  std::string traceparent;
};

class McpEndpoint {
 public:
  struct Options {
    size_t max_request_bytes = 6 * 1024 * 1024;
    int64_t session_ttl_ms = 24LL * 3600 * 1000;
    std::string server_version;       // serverInfo.version of the workspace server
    std::function<int64_t()> now_ms;  // Unix milliseconds; defaults to the system clock
  };
  using Respond = std::function<void(HttpAnswer)>;

  // Every argument must outlive the endpoint.
  McpEndpoint(McpBackend& backend, const McpSessionCodec& codec, EndedSessions& ended,
              Options options);

  // Answers request through respond, exactly once (possibly before returning).
  void Handle(McpHttpRequest request, Respond respond);

 private:
  struct Call;  // one POST in progress
  void HandleDelete(std::shared_ptr<Call> call);
  void HandlePost(std::shared_ptr<Call> call);
  // The session of a non-initialize POST or a DELETE; answers and returns nullopt when missing
  // or unknown.
  std::optional<McpSession> CheckSession(Call& call);
  // Authenticates the key and checks its invoke scope: calls next with the principal, or answers
  // the problem instead.
  void Authenticate(std::shared_ptr<Call> call, std::function<void(const v1::Principal&)> next);

  void FunctionRequest(std::shared_ptr<Call> call);
  void WorkspaceRequest(std::shared_ptr<Call> call, const v1::Principal& principal);
  void WorkspaceList(std::shared_ptr<Call> call, v1::WorkspaceToolsReply tools);
  void WorkspaceCall(std::shared_ptr<Call> call, v1::WorkspaceToolsReply tools);

  v1::InvokeJob NewJob(const Call& call, std::string function_id, std::string version,
                       std::string event_json) const;
  std::string EndpointName(const McpHttpRequest& request) const;
  int64_t Now() const;

  McpBackend& backend_;
  const McpSessionCodec& codec_;
  EndedSessions& ended_;
  Options options_;
};

}  // namespace toolgate::edge
