// EdgeServer: the HTTP face of Toolgate (Pistache).
//
// Invocations become an InvokeJob that the edge decides itself (key, function, version, body and
// X-Env-Keys: InvokeDecider, from caches of auth's and the registry's answers) and sends to the
// first stage with work for it (tg.invoke.secrets when the version declares keys, else
// tg.invoke.billing); the answer of whichever stage ends the call arrives on the ReplyMux and is
// written to the waiting connection, so no HTTP thread ever blocks on the bus. Management requests
// are authenticated by the auth service and forwarded to the owning service (docs/architecture.md,
// "Management API"). Clients connect to the front (http_front.h), which relays each connection to
// Pistache on a loopback port once it has checked the request's size and read deadlines. MCP
// clients talk to /mcp and /mcp/functions/{id}[/{version}] (McpEndpoint, docs/mcp.md).
#pragma once

#include <pistache/endpoint.h>
#include <pistache/http.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "body_admission.h"
#include "decision_bus.h"
#include "decision_caches.h"
#include "http_front.h"
#include "invoke_decider.h"
#include "invoke_metrics.h"
#include "mcp_bus.h"
#include "mcp_endpoint.h"
#include "mcp_listing.h"
#include "mcp_session.h"
#include "render.h"
#include "reply_mux.h"
#include "static_files.h"
#include "toolgate/bus/bus.h"

namespace toolgate::edge {

struct EdgeOptions {
  std::string host = "127.0.0.1";
  int port = 8080;  // 0: any free port (see port())
  int threads = 2;
  size_t max_request_bytes = 6 * 1024 * 1024;
  // The body limit of publishing a version (upload_route.h), which may carry a bundle: the
  // registry's largest bundle in base64 or multipart, plus the fields around it. Bus messages
  // carry the body whole, so it stays under NATS's max_payload (64 MiB).
  size_t max_upload_bytes = 60 * 1024 * 1024;
  size_t max_body_bytes_in_flight = 256 * 1024 * 1024;            // HttpFront's
  size_t max_body_bytes_in_flight_per_client = 72 * 1024 * 1024;  // HttpFront's
  // The front (http_front.h): read deadlines and connection limits.
  int header_timeout_ms = 10000;
  int body_timeout_ms = 60000;
  int idle_timeout_ms = 60000;
  int max_connections = 4096;
  int max_connections_per_client = 128;
  std::vector<std::string> trusted_proxies;  // peers whose X-Forwarded-For is believed
  int chain_timeout_ms = 15000;              // until billing reports the job dispatched
  int settle_margin_ms = 60000;              // after the version's timeout_ms, for settlement
  int management_timeout_ms = 15000;
  int health_timeout_ms = 1000;
  std::string openapi_json;     // served at /api/v1/openapi.json
  std::string web_dir;          // the web app, served for non-API GETs
  std::string mcp_session_key;  // McpSessionCodec::kKeyBytes, shared by replicas
  int64_t mcp_session_ttl_ms = 24LL * 3600 * 1000;
  std::string version;  // Toolgate's, for the MCP serverInfo
  // Origins besides the request's own Host whose pages may use the session cookie
  // (csrf_guard.h), e.g. "https://app.example.com".
  std::vector<std::string> app_origins;
  // The names clients reach this system by ("mcp.example.com" or "mcp.example.com:443"): the
  // Host headers the MCP endpoints serve besides the loopback names (mcp_host_guard.h).
  std::vector<std::string> public_hosts;
  // The system's public URL ("https://mcp.example.com"): the origin of every MCP endpoint's
  // canonical resource URL and of the OAuth issuer (oauth_resource.h). Empty: "http://" + the
  // request's Host.
  std::string public_url;
  // What invocations are counted under (invoke_metrics.h).
  InvokeMetricsOptions metrics;
  // The bounds and TTLs of the key and version decision caches (decision_caches.h).
  DecisionCacheOptions decisions;
  int key_use_report_ms = 1000;  // how often the uses of keys go to auth
};

class EdgeServer {
 public:
  // bus must outlive the server.
  EdgeServer(bus::Bus& bus, EdgeOptions options);
  ~EdgeServer();

  // Binds and starts serving on background threads: Pistache on a loopback port, the front on
  // options.host:options.port.
  Status Start();
  // Stops accepting; in-flight requests get their answers if they arrive before destruction.
  void Shutdown();
  int port() const;

  // Exposed for the Pistache handler.
  void OnRequest(const Pistache::Http::Request& request, Pistache::Http::ResponseWriter writer);

 private:
  using Writer = std::shared_ptr<Pistache::Http::ResponseWriter>;
  // What an invocation reads from its HTTP request, from Pistache or from the front.
  struct InvokeHttp {
    std::string traceparent;
    std::string authorization;
    std::string csrf;  // kCsrfHeader
    std::string origin;
    std::string host;
    std::string content_type;
    std::optional<std::string> env_keys;         // X-Env-Keys, when sent
    std::optional<std::string> session;          // the tg_session cookie, when sent
    std::optional<std::string> max_cost;         // X-Toolgate-Max-Cost, when sent
    std::optional<std::string> prefer;           // Prefer (RFC 7240), when sent
    std::optional<std::string> idempotency_key;  // Idempotency-Key, when sent
    std::optional<std::string> callback_url;     // X-Callback-Url, when sent
    std::string body;
  };
  // Writes an answer to the request: the HttpAnswer with X-Request-Id and traceparent.
  using Answer = std::function<void(const HttpAnswer& answer, const std::string& request_id,
                                    const std::string& traceparent)>;
  // The invoke route, /api/v1/functions/{id}[/{version}]/invoke, and its estimate,
  // .../estimate (the same decisions, answered with what the call would hold).
  struct InvokeRoute {
    std::string function_id;
    std::string version;  // "" for the latest
    bool estimate = false;
  };
  // nullopt for another path.
  static std::optional<InvokeRoute> InvokeTarget(const std::vector<std::string>& segments);
  void HandleInvoke(InvokeHttp request, Answer answer, const std::string& request_id,
                    const InvokeRoute& route);
  // The front's own requests (FrontRoute): the invoke route, without Pistache.
  void AnswerFromFront(FrontRequest request, FrontRespond respond, FrontRespond part);
  // client: the address the front reports (the auth service throttles sign-ins by it).
  void HandleManagement(const Pistache::Http::Request& request, Writer writer,
                        const std::string& request_id, const std::string& path,
                        const std::string& client);
  void HandleHealth(Writer writer, const std::string& request_id);
  // After the registry answered a management request: a version of an MCP function just
  // published gets its listing (mcp_listing.h), as its publisher, and the answer (with
  // "mcp_listing": "stored" or "unavailable") goes once it is done. False, having done nothing,
  // for any other request.
  bool ListAfterPublish(const v1::HttpRequest& http, const v1::HttpResponse& response,
                        const McpListingFiller::Publisher& publisher, Writer writer);
  void HandleMcp(const Pistache::Http::Request& request, Writer writer,
                 const std::string& request_id, const std::vector<std::string>& segments);
  // /.well-known/oauth-protected-resource[/mcp...] (answered here, oauth_resource.h), the
  // authorization server's metadata and /oauth/{authorize,token,register,revoke} (forwarded to
  // auth, docs/oauth.md).
  void HandleOAuth(const Pistache::Http::Request& request, Writer writer,
                   const std::string& request_id, const std::vector<std::string>& segments,
                   const std::string& client);
  // An MCP POST the front took whole: answered by the front, an event stream as it comes.
  void McpFromFront(FrontRequest request, FrontRespond respond, FrontRespond part,
                    const std::string& request_id, const std::vector<std::string>& segments);
  // Decides job, sends it to its first stage and reports its final reply (a refusal, or a bus
  // failure, as the reply's problem). Sets job.edge_reply. The handler's notices of a job with
  // stream_notices go to notices first, on the bus reader thread, in order.
  void DispatchInvoke(v1::InvokeJob job, std::function<void(v1::InvokeReply)> done,
                      NoticeSink notices = {});

  bus::Bus& bus_;
  EdgeOptions options_;
  ReplyMux mux_;
  core::UsageBatcher key_uses_;
  DecisionCaches decision_caches_;
  BusDecisionSource decision_source_;
  InvokeDecider decider_;
  BodyAdmission body_admission_;
  std::unique_ptr<KeyUseReporter> key_use_reporter_;
  StaticFiles web_;
  InvokeMetrics invoke_metrics_;
  McpSessionCodec mcp_codec_;
  EndedSessions mcp_ended_;
  SessionLogLevels mcp_log_levels_;
  McpBus mcp_bus_;
  McpEndpoint mcp_;
  McpListingFiller mcp_listings_;
  std::unique_ptr<Pistache::Http::Endpoint> endpoint_;
  std::string front_token_;  // the front's proof on X-Toolgate-Client
  std::unique_ptr<HttpFront> front_;
};

}  // namespace toolgate::edge
