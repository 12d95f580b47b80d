// McpEndpoint: the MCP Streamable HTTP endpoints of the edge (docs/mcp.md).
//
//   /mcp/functions/{function_id}[/{version}]  one MCP function: each JSON-RPC request is one
//                                             invocation of it through the ordinary invoke chain
//                                             (same checks, same billing), its response the
//                                             handler's JSON-RPC response
//   /mcp                                      the calling organization's workspace: its functions
//                                             (and the tools of its MCP functions) as tools
//
// Two eras of the protocol share each endpoint, told apart per request (mcp_stateless.h):
//   - 2024-11-05 to 2025-11-25: initialize issues an Mcp-Session-Id (mcp_session.h); every later
//     POST and DELETE must carry it (400 without, 404 when unknown, ended, expired, of another
//     endpoint or another key). MCP-Protocol-Version, when sent, must be a supported revision.
//     A handler that answers input_required has the edge ask the client itself (server-to-client
//     requests on the response stream) and runs again with the answers (Bridge).
//   - 2026-07-28: no session; every request's _meta names its revision and the client's
//     capabilities, and its headers mirror method and name. The edge refuses a wrong envelope
//     itself (JSON-RPC errors with HTTP 400), answers -32601 with 404, adds resultType to results
//     that lack it, and seals every requestState a handler hands out (McpSessionCodec::SealState)
//     and opens it on the retry, so handlers need no secret of their own.
// POST carries one JSON-RPC message. Requests are answered with application/json; notifications
// and responses get 202 and run nothing. A Host or Origin the system does not serve is refused
// before anything else (403, mcp_host_guard.h); an Accept that does not admit the revision's
// answers gets 406. GET (no server-initiated stream) and any other method get 405. Platform
// errors are problem+json with their HTTP status.
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
#include <vector>

#include "mcp_host_guard.h"
#include "mcp_listeners.h"
#include "mcp_prices.h"
#include "mcp_protocol.h"
#include "mcp_session.h"
#include "mcp_stateless.h"
#include "render.h"
#include "toolgate/v1/toolgate.pb.h"

namespace toolgate::edge {

// What the endpoint needs from the rest of Toolgate. Each call completes its callback exactly
// once, on any thread; a bus failure arrives as the reply's problem (503, 504). Thread-safe.
// What a running handler reports (context.progress, context.log), as the executor sent it.
using NoticeSink = std::function<void(const v1::HandlerNotice&)>;

class McpBackend {
 public:
  virtual ~McpBackend() = default;
  // Sends job along the invoke chain (the backend sets its reply subject) and reports the final
  // InvokeReply: the handler's result or the platform's problem. When job.stream_notices is set,
  // notices (never empty then) gets each notice of the handler before done runs.
  virtual void Invoke(v1::InvokeJob job, std::function<void(v1::InvokeReply)> done,
                      NoticeSink notices) = 0;
  // tg.auth.authenticate for an API key.
  virtual void Authenticate(std::string api_key_sha256,
                            std::function<void(v1::AuthenticateReply)> done) = 0;
  // tg.registry.workspace_tools for an organization.
  virtual void WorkspaceTools(std::string org_id,
                              std::function<void(v1::WorkspaceToolsReply)> done) = 0;
  // Tells every edge replica (this one included) that a session ended.
  virtual void EndSession(const v1::McpSessionEnded& ended) = 0;
  // Tells every edge replica (this one included) the log level a session asked for.
  virtual void SetSessionLogLevel(const v1::McpSessionLogLevel& level) = 0;
  // Where a client's answer to a request the edge sent it on a handler's behalf (2025-11-25:
  // sampling/createMessage, elicitation/create, roots/list) is to be delivered, whichever edge
  // replica receives it: a subject only this replica reads. done gets the answer's body, or
  // nullopt after timeout_ms.
  virtual std::string ExpectClientAnswer(int timeout_ms,
                                         std::function<void(std::optional<std::string>)> done) = 0;
  // Delivers a client's answer to the replica waiting on subject.
  virtual void DeliverClientAnswer(const std::string& subject, std::string body) = 0;
  // Runs fn once after ms (on the bus's timer thread).
  virtual void After(int ms, std::function<void()> fn) = 0;
  // tg.registry.mcp_listing: keeps an MCP version's listing with the version.
  virtual void StoreListing(const v1::McpListingSet& listing,
                            std::function<void(v1::McpListingSetReply)> done) = 0;
  // tg.billing.compute_medians: what recent calls of each version cost in compute, and what its
  // whole timeout would (mcp_prices.h); one ComputeMedian per version, in order, unless the
  // reply has a problem.
  virtual void ComputeMedians(std::vector<v1::VersionRef> versions,
                              std::function<void(v1::ComputeMediansReply)> done) = 0;
};

// One HTTP request to an MCP endpoint, as the edge read it.
struct McpHttpRequest {
  std::string method;      // "POST", "GET", "DELETE", ...
  bool workspace = false;  // /mcp; otherwise /mcp/functions/{function_id}[/{version}]
  std::string function_id;
  std::string version;  // empty: the latest published version
  std::string api_key;  // from Authorization, without a "Bearer " prefix; empty when absent
  // The system's public URL ("https://mcp.example.com"): where the endpoint's protected
  // resource metadata is, for the WWW-Authenticate of a 401 or 403 (oauth_resource.h).
  std::string public_base;
  std::string origin;  // empty when absent
  std::string host;    // the Host header
  std::optional<std::string> accept;
  std::optional<std::string> content_type;
  std::optional<std::string> session_id;        // Mcp-Session-Id
  std::optional<std::string> protocol_version;  // MCP-Protocol-Version
  std::optional<std::string> mcp_method;        // Mcp-Method
  std::optional<std::string> mcp_name;          // Mcp-Name
  std::optional<std::string> env_keys;          // X-Env-Keys
  std::optional<std::string> max_cost;          // X-Toolgate-Max-Cost: each call's ceiling
  std::string body;
  std::string request_id;
  std::string traceparent;
};

class McpEndpoint {
 public:
  struct Options {
    size_t max_request_bytes = 6 * 1024 * 1024;
    int64_t session_ttl_ms = 24LL * 3600 * 1000;
    int64_t request_state_ttl_ms = 3600LL * 1000;  // how long a sealed requestState opens
    // How long a session's client has to answer a request sent on a handler's behalf (an
    // elicitation may wait for a person).
    int client_answer_timeout_ms = 5 * 60 * 1000;
    std::string server_version;   // serverInfo.version of the workspace server
    McpHostGuard::Options hosts;  // which Host and Origin headers are served
    // subscriptions/listen on the workspace: how long a stream lasts before it ends gracefully
    // (the client listens again), and how many are open per organization and in all.
    int listen_lifetime_ms = 30 * 60 * 1000;
    size_t max_listeners_per_org = 32;
    size_t max_listeners = 10000;
    std::function<int64_t()> now_ms;  // Unix milliseconds; defaults to the system clock
  };
  using Respond = std::function<void(HttpAnswer)>;
  // One JSON-RPC notification for the response stream (notifications/progress,
  // notifications/message), sent before the answer.
  using StreamEvent = std::function<void(std::string json)>;

  // Every argument must outlive the endpoint.
  McpEndpoint(McpBackend& backend, const McpSessionCodec& codec, EndedSessions& ended,
              SessionLogLevels& log_levels, Options options);

  // A function or an organization's workspace changed (the registry's events): the workspace's
  // listeners that it concerns hear of it.
  void FunctionChanged(const std::string& function_id) { listeners_.FunctionChanged(function_id); }
  void WorkspaceChanged(const std::string& org_id) { listeners_.WorkspaceChanged(org_id); }

  // Answers request through respond, exactly once (possibly before returning). When stream is
  // given, the handler's progress and log notices that the client asked for (a progressToken,
  // a log level) go to it as notifications first, in order, from any thread but never at the
  // same time; the responder then sends the answer as the stream's last event (a problem
  // arrives as a JSON-RPC error: the status line has gone). Without stream, none are asked for.
  // live: whether stream's events reach the client as they are sent (false: they are held until
  // the answer, so the edge asks the client nothing on a handler's behalf through it).
  void Handle(McpHttpRequest request, Respond respond, StreamEvent stream = {}, bool live = true);

 private:
  struct Call;  // one POST in progress
  void HandleDelete(std::shared_ptr<Call> call);
  void HandlePost(std::shared_ptr<Call> call);
  // A request of a stateless revision (2026-07-28).
  void HandleStateless(std::shared_ptr<Call> call);
  // The session of a non-initialize POST or a DELETE; answers and returns nullopt when missing
  // or unknown.
  std::optional<McpSession> CheckSession(Call& call);
  // After the request's checks: an OAuth token is decided first (its grant binds the session,
  // which outlives each token), then DELETE or POST.
  void Admit(std::shared_ptr<Call> call);
  // Authenticates the key and checks its invoke scope: calls next with the principal, or answers
  // the problem instead.
  void Authenticate(std::shared_ptr<Call> call, std::function<void(const v1::Principal&)> next);

  void FunctionRequest(std::shared_ptr<Call> call);
  // A function's own tools/list: each tool priced (mcp_prices.h) from the listing call's
  // summary and billing's median for the version, then answer is sent.
  void PriceListedTools(std::shared_ptr<Call> call, HttpAnswer answer, const v1::Summary& summary);
  void WorkspaceRequest(std::shared_ptr<Call> call, const v1::Principal& principal);
  void WorkspaceInitialize(std::shared_ptr<Call> call, const v1::Principal& principal);
  void WorkspaceDiscover(std::shared_ptr<Call> call, const v1::Principal& principal);
  // subscriptions/listen: the acknowledgment, then list changes until the lifetime is up.
  void WorkspaceListen(std::shared_ptr<Call> call, v1::WorkspaceToolsReply tools,
                       const std::string& org_id);
  // tools/list: billing's figures for each function's price (mcp_prices.h), then the list.
  void WorkspacePrices(std::shared_ptr<Call> call, v1::WorkspaceToolsReply tools);
  // prices: one per function of tools, in order.
  void WorkspaceList(std::shared_ptr<Call> call, v1::WorkspaceToolsReply tools,
                     std::vector<ToolPrice> prices);
  void WorkspaceCall(std::shared_ptr<Call> call, v1::WorkspaceToolsReply tools);
  // resources/list, resources/templates/list, prompts/list: from the MCP functions' listings.
  void WorkspaceCatalog(std::shared_ptr<Call> call, v1::WorkspaceToolsReply tools);
  // resources/read, prompts/get: forwarded to the MCP function the URI or name belongs to.
  void WorkspaceForward(std::shared_ptr<Call> call, v1::WorkspaceToolsReply tools);

  v1::InvokeJob NewJob(const Call& call, std::string function_id, std::string version,
                       std::string event_json) const;
  // Where the job's notices go: the client's response stream, filtered by what it asked for;
  // empty (and job.stream_notices false) when it asked for none.
  NoticeSink NoticesFor(const std::shared_ptr<Call>& call, v1::InvokeJob* job) const;
  // Session era: event with the session's client capabilities in its _meta, so that the handler
  // knows what it may ask the client for; any other request unchanged.
  std::string ForHandler(const Call& call, std::string event) const;
  // Whether a session's handler answered with input requests, which the edge then asks the
  // client itself (2025-11-25 has no multi round-trip results): Bridge sends each as a
  // server-to-client request on the response stream, and once every answer is in (the client
  // POSTs them; any replica may receive one, DeliverClientAnswer) RunWithAnswers runs the
  // handler again with inputResponses and its requestState, at most kMaxBridgeRounds times.
  static constexpr int kMaxBridgeRounds = 8;
  bool NeedsBridge(const Call& call, std::string_view response) const;
  void Bridge(std::shared_ptr<Call> call, std::string response, int round);
  void RunWithAnswers(std::shared_ptr<Call> call,
                      const std::vector<std::pair<std::string, std::string>>& answers,
                      const std::optional<std::string>& state, int round);
  void DeliverClientAnswer(const Call& call);
  // The answer to a forwarded request once its handler ran: the problem, the handler's
  // response, or (input_required on a session) Bridge's round `round`.
  void AnswerRun(std::shared_ptr<Call> call, const v1::InvokeReply& reply, int round);
  // Remembers a session's logging/setLevel on every replica.
  void RecordLogLevel(const Call& call, const McpSession& session);
  std::string EndpointName(const McpHttpRequest& request) const;
  // Turns *a, the rendered envelope of a handler's run, into the JSON-RPC answer to the call:
  // the handler's response, or -32603 carrying what it returned; for a stateless request with
  // resultType added, its requestState sealed and the status the transport gives it.
  void HandlerAnswer(const Call& call, const v1::InvokeSuccess& result, HttpAnswer* a) const;
  // For a stateless request: result JSON-RPC response with resultType, and requestState sealed.
  std::string StatelessResponse(const Call& call, std::string response) const;
  int64_t Now() const;

  McpBackend& backend_;
  const McpSessionCodec& codec_;
  EndedSessions& ended_;
  SessionLogLevels& log_levels_;
  Options options_;
  McpHostGuard hosts_;
  WorkspaceListeners listeners_;
};

}  // namespace toolgate::edge
