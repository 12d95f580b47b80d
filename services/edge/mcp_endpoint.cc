#include "mcp_endpoint.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <mutex>

#include "browser_session.h"
#include "invoke_body.h"
#include "mcp_notices.h"
#include "mcp_prices.h"
#include "mcp_workspace.h"
#include "oauth_resource.h"
#include "toolgate/base/crypto.h"
#include "toolgate/base/json.h"
#include "toolgate/base/json_writer.h"
#include "toolgate/base/log.h"
#include "toolgate/base/strings.h"
#include "toolgate/base/time.h"
#include "toolgate/core/key_decision.h"
#include "toolgate/core/problem.h"

namespace toolgate::edge {
namespace {

// The transport's own errors, which the shared problem catalogue does not list.
v1::Problem TransportProblem(int status, std::string_view code, std::string_view title,
                             std::string_view detail) {
  v1::Problem p;
  p.set_status(status);
  p.set_code(std::string(code));
  p.set_title(std::string(title));
  p.set_detail(std::string(detail));
  return p;
}

std::string RevisionList() {
  std::string out;
  for (std::string_view r : kMcpRevisions) out += (out.empty() ? "" : ", ") + std::string(r);
  return out;
}

HttpAnswer JsonRpcAnswer(std::string body) {
  HttpAnswer a;
  a.body = std::move(body);
  return a;
}

HttpAnswer NoContent(int status) {
  HttpAnswer a;
  a.status = status;
  a.content_type.clear();
  return a;
}

// The JSON-RPC answer to a request whose handler ran but did not answer it in JSON-RPC (an
// exception, a timeout of its own, a plain body): an internal error that carries what it
// returned, so the tool's author can see why.
std::string HandlerFailure(std::string_view id_json, const v1::InvokeSuccess& result) {
  JsonWriter data;
  data.BeginObject()
      .Field("statusCode", result.status_code())
      .Field("body", result.body())
      .Field("execution_id", result.summary().execution_id())
      .EndObject();
  return JsonRpcError(id_json, kJsonRpcInternalError,
                      "The tool's handler did not answer with a JSON-RPC response (statusCode " +
                          std::to_string(result.status_code()) + ")",
                      data.str());
}

// The workspace client's X-Env-Keys, narrowed to what function declares.
void SetEnvKeys(const McpHttpRequest& request, const v1::WorkspaceTool& function,
                v1::InvokeJob* job) {
  // The call's own X-Env-Keys, else the mapping the organization stored for this function
  // (PUT /workspace/tools/{id}/env-keys), so an MCP client needs no header of its own.
  if (!request.env_keys && function.env_keys().empty()) return;
  std::string keys =
      EnvKeysFor(request.env_keys ? *request.env_keys : function.env_keys(), function);
  if (keys.empty()) return;
  job->set_env_keys_present(true);
  job->set_env_keys_header(std::move(keys));
}

// Refusals of a workspace tools/call that the client can act on: answered as MCP tool errors.
bool IsToolError(std::string_view code) {
  return code == "invalid_event" || code == "missing_env_key" || code == "undeclared_env_key" ||
         code == "invalid_env_keys" || code == "unknown_secret";
}

std::string WorkspaceInstructions(const v1::Principal& principal) {
  return "The tools of the Toolgate organization " + principal.org_name() +
         ": the functions it owns or has added. Every call is billed like an invocation.";
}

// What the workspace server offers: the tools of every function, and the resources and prompts
// of its MCP functions.
// In the session era list changes would need a server-initiated stream, which is not offered; in
// 2026-07-28 they come on a subscriptions/listen stream.
constexpr std::string_view kWorkspaceCapabilities =
    R"({"tools":{"listChanged":false},"resources":{"listChanged":false},)"
    R"("prompts":{"listChanged":false},"logging":{}})";
constexpr std::string_view kStatelessWorkspaceCapabilities =
    R"({"tools":{"listChanged":true},"resources":{"listChanged":true},)"
    R"("prompts":{"listChanged":true},"logging":{}})";

// The methods the workspace serves from the functions it lists.
bool IsWorkspaceListing(std::string_view method) {
  return method == "resources/list" || method == "resources/templates/list" ||
         method == "prompts/list";
}

// How long a client may keep a workspace tools/list (CacheableResult): the list changes only
// when the organization adds, removes or publishes a function.
constexpr int64_t kWorkspaceListTtlMs = 60 * 1000;

// Whether a handler's answer can be an input_required result at all: a substring test that
// spares every other answer a parse.
bool MayAskForInput(std::string_view response) {
  return response.find("\"input_required\"") != std::string_view::npos;
}

}  // namespace

struct McpEndpoint::Call {
  Call(McpHttpRequest r, Respond done, StreamEvent events)
      : request(std::move(r)), respond_to_client(std::move(done)), stream(std::move(events)) {}

  // The answer; once notifications went out on the stream, a problem becomes the JSON-RPC error
  // that ends it (the status line has been sent).
  void respond(HttpAnswer a) const {
    if (streamed.load() && a.content_type == "application/problem+json") {
      a.body = JsonRpcError(message.id_json, kJsonRpcInternalError,
                            "The call failed after it began; data holds the problem", a.body);
      a.content_type = "application/json";
      a.status = 200;
    }
    respond_to_client(std::move(a));
  }

  // A 401 or an OAuth token's 403 carries WWW-Authenticate, so an OAuth client finds the
  // authorization server from it (RFC 9728 §5.1, RFC 6750 §3).
  void Problem(const v1::Problem& problem) const {
    HttpAnswer a = RenderProblem(problem, request.request_id);
    if (problem.status() == 401 ||
        (problem.code() == "insufficient_scope" && core::IsOAuthAccessToken(request.api_key))) {
      a.headers.emplace_back(
          "WWW-Authenticate",
          BearerChallenge(request.public_base, EndpointPathOf(request), problem.code()));
    }
    respond(std::move(a));
  }
  // A JSON-RPC response of the edge's own (in a, which may carry headers already); a stateless
  // one with resultType and its status.
  void Answer(std::string json, HttpAnswer a = {}) const {
    a.status = 200;
    a.content_type = "application/json";
    a.body = std::move(json);
    if (stateless) {
      a.body = WithResultType(std::move(a.body));
      a.status = StatelessHttpStatus(a.body);
    }
    respond(std::move(a));
  }
  void Error(int code, std::string_view message) const {
    Answer(JsonRpcError(this->message.id_json, code, message));
  }

  McpHttpRequest request;
  Respond respond_to_client;
  StreamEvent stream;                     // empty: the client cannot be sent notifications
  std::atomic<bool> streamed{false};      // a notification went out
  NoticeRequest notices;                  // what the client asked to be told while the call runs
  bool live_stream = false;               // stream's events reach the client as they are sent
  std::optional<McpSession> session;      // a session-era request's, once checked
  std::optional<v1::InvokeJob> last_job;  // the handler's last run, to run again with input
  std::string key_sha256;
  // What sessions, bridge ids and sealed request states are bound to: the key's hash, or for an
  // OAuth token its grant (the client refreshes tokens within one session).
  std::string binding;
  std::vector<std::string> token_scopes;  // an OAuth token's; empty for an API key
  int64_t max_cost_micro_usd = 0;         // X-Toolgate-Max-Cost; 0: none
  McpMessage message;
  std::string revision;  // the session's, or for initialize the one negotiated
  bool stateless = false;
  RequestMeta meta;          // of a stateless request
  std::string handler_body;  // what the handler receives: the body, its requestState opened
};

McpEndpoint::McpEndpoint(McpBackend& backend, const McpSessionCodec& codec, EndedSessions& ended,
                         SessionLogLevels& log_levels, Options options)
    : backend_(backend),
      codec_(codec),
      ended_(ended),
      log_levels_(log_levels),
      options_(std::move(options)),
      hosts_(options_.hosts),
      listeners_(options_.max_listeners_per_org, options_.max_listeners) {
  if (!options_.now_ms) options_.now_ms = [] { return NowMs(); };
}

int64_t McpEndpoint::Now() const {
  return options_.now_ms();
}

std::string McpEndpoint::EndpointName(const McpHttpRequest& request) const {
  if (request.workspace) return "workspace";
  std::string id = request.function_id;
  for (char& c : id) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return "functions/" + id + (request.version.empty() ? "" : "/" + request.version);
}

void McpEndpoint::Handle(McpHttpRequest request, Respond respond, StreamEvent stream, bool live) {
  auto call = std::make_shared<Call>(std::move(request), std::move(respond), std::move(stream));
  call->live_stream = live && static_cast<bool>(call->stream);
  const McpHttpRequest& r = call->request;
  if (r.method != "POST" && r.method != "DELETE") {
    HttpAnswer a = RenderProblem(
        core::MakeProblem("method_not_allowed",
                          "An MCP endpoint takes POST (one JSON-RPC message) and DELETE (end the "
                          "session); it offers no server-initiated event stream."),
        r.request_id);
    a.headers.emplace_back("Allow", "POST, DELETE");
    return call->respond(std::move(a));
  }
  // Against DNS rebinding: a web page of another site must not reach a local edge.
  if (auto refusal = hosts_.Check(r.host, r.origin)) {
    return call->Problem(core::MakeProblem("forbidden", *refusal));
  }
  if (r.body.size() > options_.max_request_bytes) {
    return call->Problem(core::MakeProblem(
        "payload_too_large",
        "The request body is over " + std::to_string(options_.max_request_bytes) + " bytes."));
  }
  if (r.api_key.empty()) {
    return call->Problem(
        core::MakeProblem("missing_api_key",
                          "Send your API key in the Authorization header (\"<key>\" or "
                          "\"Bearer <key>\")."));
  }
  if (r.max_cost && !ParseMaxCost(*r.max_cost, &call->max_cost_micro_usd)) {
    return call->Problem(core::MakeProblem("bad_request", MaxCostRefusal()));
  }
  call->key_sha256 = Sha256(r.api_key);
  call->binding = call->key_sha256;
  if (!core::IsOAuthAccessToken(r.api_key)) return Admit(std::move(call));
  backend_.Authenticate(call->key_sha256, [this, call](v1::AuthenticateReply reply) {
    if (reply.has_problem()) return call->Problem(reply.problem());
    const v1::Principal& p = reply.principal();
    const std::string at = EndpointPathOf(call->request);
    if (p.grant_id().empty() || !core::ResourceCovers(p.resource_path(), at)) {
      return call->Problem(core::MakeProblem(
          "invalid_token",
          "This access token was issued for " +
              (p.resource_path().empty() ? std::string("another endpoint") : p.resource_path()) +
              ", not " + at + "; authorize this endpoint to get a token for it."));
    }
    call->binding = Sha256("oauth-grant:" + p.grant_id());
    call->token_scopes.assign(p.scopes().begin(), p.scopes().end());
    Admit(call);
  });
}

void McpEndpoint::Admit(std::shared_ptr<Call> call) {
  if (call->request.method == "DELETE") return HandleDelete(std::move(call));
  HandlePost(std::move(call));
}

std::optional<McpSession> McpEndpoint::CheckSession(Call& call) {
  const McpHttpRequest& r = call.request;
  if (!r.session_id || r.session_id->empty()) {
    call.Problem(TransportProblem(
        400, "mcp_session_required", "Mcp-Session-Id required",
        "Send the Mcp-Session-Id header that the initialize response carried, or initialize a "
        "session first."));
    return std::nullopt;
  }
  auto session = codec_.Verify(*r.session_id, call.binding, Now());
  if (!session || session->endpoint != EndpointName(r) || ended_.Contains(session->nonce)) {
    call.Problem(TransportProblem(
        404, "mcp_session_not_found", "MCP session not found",
        "The session ended, expired, or belongs to another endpoint or API key; initialize a new "
        "session."));
    return std::nullopt;
  }
  // The header need only name a supported revision (HandlePost checked that): the 2025-11-25
  // transport asks no more, and clients differ in what they send once a session is open.
  return session;
}

void McpEndpoint::Authenticate(std::shared_ptr<Call> call,
                               std::function<void(const v1::Principal&)> next) {
  backend_.Authenticate(call->key_sha256, [call,
                                           next = std::move(next)](v1::AuthenticateReply reply) {
    if (reply.has_problem()) return call->Problem(reply.problem());
    const auto& scopes = reply.principal().scopes();
    // An OAuth token's binding and scopes were checked as the request arrived (Handle).
    if (reply.principal().grant_id().empty() &&
        std::find(scopes.begin(), scopes.end(), "invoke") == scopes.end()) {
      return call->Problem(core::MakeProblem(
          "insufficient_scope", "This API key lacks the invoke scope; create one that has it."));
    }
    next(reply.principal());
  });
}

void McpEndpoint::HandleDelete(std::shared_ptr<Call> call) {
  auto session = CheckSession(*call);
  if (!session) return;
  Authenticate(call, [this, call, session = *session](const v1::Principal&) {
    ended_.Add(session.nonce, session.expires_at_ms, Now());
    v1::McpSessionEnded ended;
    ended.set_session_nonce(session.nonce);
    ended.set_expires_at_ms(session.expires_at_ms);
    backend_.EndSession(ended);
    call->respond(NoContent(204));
  });
}

void McpEndpoint::HandlePost(std::shared_ptr<Call> call) {
  const McpHttpRequest& r = call->request;
  if (r.content_type && !IsJsonContentType(*r.content_type)) {
    return call->Problem(TransportProblem(415, "unsupported_media_type", "Unsupported media type",
                                          "Send the JSON-RPC message as application/json."));
  }
  auto parsed = ParseMcpMessage(r.body);
  if (auto* problem = std::get_if<v1::Problem>(&parsed)) return call->Problem(*problem);
  call->message = std::move(std::get<McpMessage>(parsed));
  const McpMessage& m = call->message;
  if (!call->token_scopes.empty() && m.kind == McpMessage::Kind::kRequest) {
    const std::string_view needed = core::McpScopeFor(m.method);
    if (!core::HasScope(call->token_scopes, needed)) {
      return call->Problem(core::MakeProblem("insufficient_scope",
                                             "This access token lacks the " + std::string(needed) +
                                                 " scope that " + m.method +
                                                 " needs; authorize again with it."));
    }
  }
  call->meta = ReadRequestMeta(m);
  if (IsStatelessRequest(call->meta, r.protocol_version, r.session_id.has_value())) {
    call->stateless = true;
    return HandleStateless(std::move(call));
  }

  if (r.protocol_version && !IsSupportedMcpRevision(*r.protocol_version)) {
    return call->Problem(
        TransportProblem(400, "unsupported_protocol_version", "Unsupported MCP protocol version",
                         "MCP-Protocol-Version must be one of " + RevisionList() + "."));
  }
  const bool initialize = m.kind == McpMessage::Kind::kRequest && m.method == "initialize";
  if (initialize) {
    call->revision = std::string(NegotiateMcpRevision(ParamString(m, "protocolVersion")));
  } else {
    auto session = CheckSession(*call);
    if (!session) return;
    call->revision = session->revision;
    call->session = *session;
    if (m.kind == McpMessage::Kind::kRequest) {
      if (m.method == "logging/setLevel") RecordLogLevel(*call, *session);
      call->notices.progress_token_json = MetaMember(m, "progressToken");
      if (auto level = log_levels_.Get(session->nonce, Now())) {
        call->notices.min_log_rank = LogLevelRank(*level);
      }
    }
  }
  if (!AcceptsMcpAnswers(r.accept.value_or(""), call->revision)) {
    return call->Problem(TransportProblem(
        406, "not_acceptable", "Not acceptable",
        "Accept must list application/json and text/event-stream (application/json alone for "
        "protocol revision 2024-11-05); answers are application/json."));
  }
  if (m.kind == McpMessage::Kind::kRequest && m.too_deep) {
    // The message, or its arguments, would become an event deeper than an invocation accepts:
    // refused here as an invoke body would be, before anything is held or charged.
    return call->Error(kJsonRpcInvalidParams, TooDeepMessage());
  }
  if (m.kind != McpMessage::Kind::kRequest) {
    // Notifications and responses run nothing; the key must still be good. A response to a
    // request the edge sent on a handler's behalf goes to the replica that waits for it.
    return Authenticate(call, [this, call](const v1::Principal&) {
      if (call->message.kind == McpMessage::Kind::kResponse) DeliverClientAnswer(*call);
      call->respond(NoContent(202));
    });
  }
  if (!r.workspace) return FunctionRequest(std::move(call));
  Authenticate(call,
               [this, call](const v1::Principal& principal) { WorkspaceRequest(call, principal); });
}

void McpEndpoint::HandleStateless(std::shared_ptr<Call> call) {
  const McpHttpRequest& r = call->request;
  const McpMessage& m = call->message;
  call->revision = call->meta.protocol_version.value_or(std::string(kStatelessMcpRevisions.back()));
  if (m.kind != McpMessage::Kind::kRequest) {
    // Nothing of this revision is sent as a notification over HTTP; accepted and ignored.
    return Authenticate(call, [call](const v1::Principal&) { call->respond(NoContent(202)); });
  }
  if (!AcceptsMcpAnswers(r.accept.value_or(""), kStatelessMcpRevisions.back())) {
    return call->Problem(
        TransportProblem(406, "not_acceptable", "Not acceptable",
                         "Accept must list application/json and text/event-stream; answers are "
                         "application/json."));
  }
  auto refuse = [&call](McpRefusal refusal) {
    HttpAnswer a = JsonRpcAnswer(std::move(refusal.body));
    a.status = refusal.http_status;
    call->respond(std::move(a));
  };
  if (m.too_deep) {
    return refuse({400, JsonRpcError(m.id_json, kJsonRpcInvalidParams, TooDeepMessage())});
  }
  if (auto refusal =
          CheckStatelessRequest(m, call->meta, {r.protocol_version, r.mcp_method, r.mcp_name})) {
    return refuse(std::move(*refusal));
  }
  call->notices.progress_token_json = MetaMember(m, "progressToken");
  if (std::string level = MetaMember(m, kMetaLogLevel); !level.empty()) {
    auto parsed = ParseJson(level);
    std::string_view name;
    if (parsed.ok() && parsed->root.get_string().get(name) == simdjson::SUCCESS) {
      call->notices.min_log_rank = LogLevelRank(name);
    }
    if (!call->notices.min_log_rank) {
      return refuse({400, JsonRpcError(m.id_json, kJsonRpcInvalidParams,
                                       "Invalid params: _meta." + std::string(kMetaLogLevel) +
                                           " must be one of debug, info, notice, warning, error, "
                                           "critical, alert, emergency")});
    }
  }
  call->handler_body = std::string(TrimAsciiWhitespace(r.body));
  if (!ParamJson(m, "requestState").empty()) {
    // A retry of a multi round-trip request: its state must be one this endpoint sealed for
    // this key, and the handler gets back exactly what it handed out.
    auto sealed = NestedString(call->handler_body, "params", "requestState");
    auto state =
        sealed ? codec_.OpenState(*sealed, EndpointName(r), call->binding, Now()) : std::nullopt;
    if (!state) {
      return refuse({400, JsonRpcError(m.id_json, kJsonRpcInvalidParams,
                                       "Invalid params: requestState was not issued by this "
                                       "server for this endpoint and key, was altered, or has "
                                       "expired; send the request again without it")});
    }
    call->handler_body =
        WithNestedMember(call->handler_body, "params", "requestState", JsonWriter::Quote(*state));
    // What is forwarded from the params (a workspace tools/call) carries the opened state too.
    auto opened = ParseMcpMessage(call->handler_body);
    if (auto* message = std::get_if<McpMessage>(&opened)) {
      call->message.params_json = std::move(message->params_json);
    }
  }
  if (!r.workspace) return FunctionRequest(std::move(call));
  Authenticate(call,
               [this, call](const v1::Principal& principal) { WorkspaceRequest(call, principal); });
}

std::string McpEndpoint::StatelessResponse(const Call& call, std::string response) const {
  response = WithResultType(std::move(response));
  // Most answers are complete: no second parse for them.
  if (!MayAskForInput(response) ||
      NestedString(response, "result", "resultType") != "input_required") {
    return response;
  }
  auto state = NestedString(response, "result", "requestState");
  if (!state) return response;
  std::string sealed = codec_.SealState(EndpointName(call.request), *state,
                                        Now() + options_.request_state_ttl_ms, call.binding);
  return WithNestedMember(response, "result", "requestState", JsonWriter::Quote(sealed));
}

void McpEndpoint::HandlerAnswer(const Call& call, const v1::InvokeSuccess& result,
                                HttpAnswer* a) const {
  const std::string& id = call.message.id_json;
  a->status = 200;
  a->content_type = "application/json";
  a->body = IsResponseTo(result.body(), id) ? result.body() : HandlerFailure(id, result);
  // What the call cost and what is left: the caller reads it with the result.
  if (call.message.method == "tools/call") a->body = WithCallCost(a->body, result.summary());
  if (call.stateless) {
    a->body = StatelessResponse(call, std::move(a->body));
    a->status = StatelessHttpStatus(a->body);
  }
}

NoticeSink McpEndpoint::NoticesFor(const std::shared_ptr<Call>& call, v1::InvokeJob* job) const {
  if (!call->stream || !call->notices.Any()) return {};
  job->set_stream_notices(true);
  return [call](const v1::HandlerNotice& notice) {
    std::string json = NotificationFor(notice, call->notices);
    if (json.empty()) return;
    call->streamed.store(true);
    call->stream(std::move(json));
  };
}

void McpEndpoint::RecordLogLevel(const Call& call, const McpSession& session) {
  std::string level = ParamString(call.message, "level");
  if (!LogLevelRank(level)) return;  // the handler answers the bad params
  log_levels_.Set(session.nonce, level, session.expires_at_ms);
  v1::McpSessionLogLevel broadcast;
  broadcast.set_session_nonce(session.nonce);
  broadcast.set_level(level);
  broadcast.set_expires_at_ms(session.expires_at_ms);
  backend_.SetSessionLogLevel(broadcast);
}

v1::InvokeJob McpEndpoint::NewJob(const Call& call, std::string function_id, std::string version,
                                  std::string event_json) const {
  v1::InvokeJob job;
  job.set_request_id(call.request.request_id);
  job.set_execution_id(NewUuid());
  job.set_api_key_sha256(call.key_sha256);
  job.set_function_id(std::move(function_id));
  job.set_version(std::move(version));
  job.set_body_check(v1::BODY_OK);
  job.set_event_json(std::move(event_json));
  job.set_traceparent(call.request.traceparent);
  // Where the call came in: an OAuth token is accepted only at the endpoint it is bound to.
  job.set_audience(EndpointPathOf(call.request));
  job.set_max_cost_micro_usd(call.max_cost_micro_usd);
  return job;
}

void McpEndpoint::FunctionRequest(std::shared_ptr<Call> call) {
  const McpHttpRequest& r = call->request;
  // The handler receives the message exactly as the client sent it (a stateless request's
  // requestState opened; a session's client capabilities in _meta).
  v1::InvokeJob job =
      NewJob(*call, r.function_id, r.version,
             call->stateless ? call->handler_body
                             : ForHandler(*call, std::string(TrimAsciiWhitespace(r.body))));
  if (r.env_keys) {
    job.set_env_keys_present(true);
    job.set_env_keys_header(*r.env_keys);
  }
  NoticeSink notices = NoticesFor(call, &job);
  call->last_job = job;
  backend_.Invoke(
      std::move(job),
      [this, call](v1::InvokeReply reply) {
        // Rendering the envelope first keeps its headers (X-Api-Key-Expires-At) and its problems.
        HttpAnswer a = RenderInvokeReply(reply, call->request.request_id, Now());
        if (reply.has_problem()) return call->respond(std::move(a));
        HandlerAnswer(*call, reply.result(), &a);
        if (NeedsBridge(*call, a.body)) return Bridge(call, std::move(a.body), 1);
        // Billing's figure of the version's whole timeout (0: none given) prices its tools.
        if (call->message.method == "tools/list" &&
            reply.result().summary().max_compute_micro_usd() > 0) {
          return PriceListedTools(call, std::move(a), reply.result().summary());
        }
        if (!call->stateless && call->message.method == "initialize") {
          // The session's revision is the one the handler's initialize result names.
          std::string revision = InitializeResultRevision(a.body);
          if (!revision.empty()) {
            McpSession session = McpSessionCodec::NewSession(
                EndpointName(call->request), std::move(revision), Now(), options_.session_ttl_ms,
                ParamJson(call->message, "capabilities"));
            a.headers.emplace_back("Mcp-Session-Id", codec_.Issue(session, call->binding));
          }
        }
        call->respond(std::move(a));
      },
      std::move(notices));
}

void McpEndpoint::PriceListedTools(std::shared_ptr<Call> call, HttpAnswer answer,
                                   const v1::Summary& summary) {
  v1::VersionRef ref;
  ref.set_function_id(call->request.function_id);
  ref.set_version(summary.version());
  auto held = std::make_shared<HttpAnswer>(std::move(answer));
  backend_.ComputeMedians({ref}, [call, held, summary](v1::ComputeMediansReply m) {
    // Without billing's median the tools are still priced, with their fee and maximum.
    const bool known = !m.has_problem() && m.medians_size() == 1;
    held->body = WithListedToolPrices(held->body,
                                      PriceOfListingCall(summary, known ? &m.medians(0) : nullptr));
    call->respond(std::move(*held));
  });
}

std::string McpEndpoint::ForHandler(const Call& call, std::string event) const {
  // A client that declared nothing can be asked for nothing: its requests go on unchanged.
  if (call.stateless || !call.session || call.session->client_capabilities_json.empty() ||
      call.session->client_capabilities_json == "{}") {
    return event;
  }
  return WithParamsMeta(event, kMetaClientCapabilities, call.session->client_capabilities_json);
}

bool McpEndpoint::NeedsBridge(const Call& call, std::string_view response) const {
  return !call.stateless && call.session.has_value() && MayAskForInput(response) &&
         NestedString(response, "result", "resultType") == "input_required";
}

void McpEndpoint::Bridge(std::shared_ptr<Call> call, std::string response, int round) {
  const std::string& id = call->message.id_json;
  auto fail = [&call, &id](const std::string& why) {
    call->Answer(JsonRpcError(id, kJsonRpcInternalError, why));
  };
  if (!call->live_stream || !call->last_job) {
    return fail("The tool asked the client for input, which needs a response stream.");
  }
  if (round > kMaxBridgeRounds) {
    return fail("The tool asked the client for input more than " +
                std::to_string(kMaxBridgeRounds) + " times in one call.");
  }
  auto requests = InputRequestsOf(response, call->session->client_capabilities_json);
  if (!requests.error.empty()) return fail(requests.error);
  // Every answer, by input key, until the last arrives; then the handler runs again with them.
  struct Gathering {
    std::mutex mu;
    std::vector<std::pair<std::string, std::string>> answers;  // guarded by mu
    size_t pending = 0;                                        // guarded by mu
    std::string failure;                                       // guarded by mu
  };
  auto gathering = std::make_shared<Gathering>();
  gathering->pending = requests.requests.size();
  std::optional<std::string> state = NestedString(response, "result", "requestState");
  for (const InputRequest& input : requests.requests) {
    std::string subject = backend_.ExpectClientAnswer(
        options_.client_answer_timeout_ms,
        [this, call, gathering, key = input.key, state, round](std::optional<std::string> body) {
          std::string result, failure;
          auto doc = body ? ParseJson(*body) : Result<ParsedJson>(Status::Timeout(""));
          simdjson::dom::element e;
          if (!body) {
            failure = "The client did not answer the tool's request for input in time.";
          } else if (!doc.ok() || doc->root["result"].get(e) != simdjson::SUCCESS) {
            failure = "The client refused the tool's request for input.";
          } else {
            result = ToJson(e);
          }
          bool last;
          {
            std::lock_guard<std::mutex> lock(gathering->mu);
            if (failure.empty()) gathering->answers.emplace_back(key, std::move(result));
            if (gathering->failure.empty()) gathering->failure = std::move(failure);
            last = --gathering->pending == 0;
          }
          if (!last) return;
          if (!gathering->failure.empty()) {
            return call->Answer(
                JsonRpcError(call->message.id_json, kJsonRpcInternalError, gathering->failure));
          }
          RunWithAnswers(call, gathering->answers, state, round);
        });
    JsonWriter request;
    request.BeginObject()
        .Field("jsonrpc", "2.0")
        .Field("id",
               codec_.IssueBridgeId(call->session->nonce, {subject, input.key}, call->binding))
        .Field("method", input.method)
        .Key("params")
        .Raw(input.params_json)
        .EndObject();
    call->streamed.store(true);
    call->stream(request.Take());
  }
}

void McpEndpoint::RunWithAnswers(std::shared_ptr<Call> call,
                                 const std::vector<std::pair<std::string, std::string>>& answers,
                                 const std::optional<std::string>& state, int round) {
  JsonWriter responses;
  responses.BeginObject();
  for (const auto& [key, result] : answers) responses.Key(key).Raw(result);
  responses.EndObject();
  v1::InvokeJob job = *call->last_job;
  job.set_execution_id(NewUuid());
  std::string event =
      WithNestedMember(job.event_json(), "params", "inputResponses", responses.str());
  if (state) event = WithNestedMember(event, "params", "requestState", JsonWriter::Quote(*state));
  job.set_event_json(std::move(event));
  NoticeSink notices = NoticesFor(call, &job);
  call->last_job = job;
  backend_.Invoke(
      std::move(job),
      [this, call, round](v1::InvokeReply reply) { AnswerRun(call, reply, round + 1); },
      std::move(notices));
}

void McpEndpoint::AnswerRun(std::shared_ptr<Call> call, const v1::InvokeReply& reply, int round) {
  // Rendering the envelope first keeps its headers (X-Api-Key-Expires-At) and its problems.
  HttpAnswer a = RenderInvokeReply(reply, call->request.request_id, Now());
  if (reply.has_problem()) return call->respond(std::move(a));
  HandlerAnswer(*call, reply.result(), &a);
  if (NeedsBridge(*call, a.body)) return Bridge(call, std::move(a.body), round);
  call->respond(std::move(a));
}

void McpEndpoint::DeliverClientAnswer(const Call& call) {
  auto doc = ParseJson(call.message.id_json);
  std::string_view id;
  if (!call.session || !doc.ok() || doc->root.get_string().get(id) != simdjson::SUCCESS) return;
  auto target = codec_.VerifyBridgeId(id, call.session->nonce, call.binding);
  if (target) backend_.DeliverClientAnswer(target->subject, call.request.body);
}

void McpEndpoint::WorkspaceInitialize(std::shared_ptr<Call> call, const v1::Principal& principal) {
  const McpMessage& m = call->message;
  JsonWriter w;
  w.BeginObject().Field("protocolVersion", call->revision);
  w.Key("capabilities").Raw(kWorkspaceCapabilities);
  w.Key("serverInfo")
      .BeginObject()
      .Field("name", "toolgate")
      .Field("version", options_.server_version)
      .EndObject();
  w.Field("instructions", WorkspaceInstructions(principal));
  HttpAnswer a = JsonRpcAnswer(JsonRpcResult(m.id_json, w.EndObject().str()));
  McpSession session =
      McpSessionCodec::NewSession("workspace", call->revision, Now(), options_.session_ttl_ms,
                                  ParamJson(call->message, "capabilities"));
  a.headers.emplace_back("Mcp-Session-Id", codec_.Issue(session, call->binding));
  call->respond(std::move(a));
}

void McpEndpoint::WorkspaceDiscover(std::shared_ptr<Call> call, const v1::Principal& principal) {
  JsonWriter w;
  w.BeginObject().Key("supportedVersions").Raw(SupportedRevisionsJson());
  w.Key("capabilities").Raw(kStatelessWorkspaceCapabilities);
  w.Field("instructions", WorkspaceInstructions(principal));
  w.Key("_meta").BeginObject().Key(kMetaServerInfo).BeginObject();
  w.Field("name", "toolgate").Field("version", options_.server_version).EndObject().EndObject();
  call->Answer(JsonRpcResult(call->message.id_json, w.EndObject().str()));
}

void McpEndpoint::WorkspaceRequest(std::shared_ptr<Call> call, const v1::Principal& principal) {
  const McpMessage& m = call->message;
  // initialize and ping belong to the session era; server/discover replaces them.
  if (!call->stateless && m.method == "initialize") return WorkspaceInitialize(call, principal);
  if (!call->stateless && (m.method == "ping" || m.method == "logging/setLevel")) {
    // setLevel: HandlePost recorded the session's level; its functions' logs follow it.
    return call->Answer(JsonRpcResult(m.id_json, "{}"));
  }
  if (call->stateless && m.method == "server/discover") {
    return WorkspaceDiscover(call, principal);
  }
  const bool forward = m.method == "resources/read" || m.method == "prompts/get";
  const bool listen = call->stateless && m.method == "subscriptions/listen";
  if (m.method != "tools/list" && m.method != "tools/call" && !IsWorkspaceListing(m.method) &&
      !forward && !listen) {
    return call->Error(kJsonRpcMethodNotFound, "Method not found: " + m.method);
  }
  if (listen) {
    return backend_.WorkspaceTools(
        principal.org_id(), [this, call, org = principal.org_id()](v1::WorkspaceToolsReply tools) {
          if (tools.has_problem()) return call->Problem(tools.problem());
          WorkspaceListen(call, std::move(tools), org);
        });
  }
  backend_.WorkspaceTools(principal.org_id(), [this, call, forward](v1::WorkspaceToolsReply tools) {
    if (tools.has_problem()) return call->Problem(tools.problem());
    const std::string& method = call->message.method;
    if (method == "tools/list") return WorkspacePrices(call, std::move(tools));
    if (method == "tools/call") return WorkspaceCall(call, std::move(tools));
    if (forward) return WorkspaceForward(call, std::move(tools));
    WorkspaceCatalog(call, std::move(tools));
  });
}

void McpEndpoint::WorkspacePrices(std::shared_ptr<Call> call, v1::WorkspaceToolsReply reply) {
  std::vector<v1::VersionRef> versions;
  versions.reserve(static_cast<size_t>(reply.tools_size()));
  for (const v1::WorkspaceTool& f : reply.tools()) {
    v1::VersionRef& ref = versions.emplace_back();
    ref.set_function_id(f.function_id());
    ref.set_version(f.version());
    ref.set_compute_type(f.compute_type());
    ref.set_timeout_ms(f.timeout_ms());
    ref.set_memory_mb(f.memory_mb());
  }
  auto tools = std::make_shared<v1::WorkspaceToolsReply>(std::move(reply));
  backend_.ComputeMedians(std::move(versions), [this, call, tools](v1::ComputeMediansReply m) {
    // Without billing's figures the tools are still listed, with their fees alone.
    std::vector<ToolPrice> prices;
    prices.reserve(static_cast<size_t>(tools->tools_size()));
    const bool known = !m.has_problem() && m.medians_size() == tools->tools_size();
    if (!known) {
      log::Warn("tools/list without expected compute")
          .Str("request_id", call->request.request_id)
          .Str("problem", m.problem().code());
    }
    for (int i = 0; i < tools->tools_size(); ++i) {
      prices.push_back(PriceOf(tools->tools(i), known ? &m.medians(i) : nullptr));
    }
    WorkspaceList(call, std::move(*tools), std::move(prices));
  });
}

void McpEndpoint::WorkspaceList(std::shared_ptr<Call> call, v1::WorkspaceToolsReply reply,
                                std::vector<ToolPrice> prices) {
  // An MCP function's tools come from the listing its publisher's run stored (mcp_listing.h);
  // one without is asked for them (one invocation each, billed as usual), and the answer waits
  // for all of those. A function that cannot list is left out rather than failing the list.
  struct Gathering {
    std::mutex mu;
    std::vector<std::vector<std::string>> entries;  // guarded by mu; one slot per function
    size_t pending = 0;                             // guarded by mu
  };
  auto functions = std::make_shared<std::vector<v1::WorkspaceTool>>(reply.mutable_tools()->begin(),
                                                                    reply.mutable_tools()->end());
  const std::vector<std::string> names = AssignToolNames(*functions);
  auto gathering = std::make_shared<Gathering>();
  gathering->entries.resize(functions->size());
  std::vector<size_t> mcp;  // MCP functions without a listing: asked live
  for (size_t i = 0; i < functions->size(); ++i) {
    const v1::WorkspaceTool& f = (*functions)[i];
    if (!f.mcp()) {
      gathering->entries[i].push_back(FunctionToolJson(f, names[i]));
    } else if (f.has_listing()) {
      // Listed when it was published: nothing runs, nothing is charged.
      gathering->entries[i] = PrefixedToolsJson(f.listing().tools_json(), names[i]);
    } else {
      mcp.push_back(i);
    }
  }
  auto finish = [call, gathering, prices = std::move(prices)] {
    std::vector<std::string> all;
    for (size_t i = 0; i < gathering->entries.size(); ++i) {
      // Every tool of a function costs what a call of the function does.
      for (auto& e : gathering->entries[i]) {
        all.push_back(i < prices.size() ? WithToolPrice(e, prices[i]) : std::move(e));
      }
    }
    std::string response = JsonRpcResult(call->message.id_json, ToolsListResult(all));
    if (call->stateless) {
      // The list is the organization's own: cacheable by this caller only.
      response = WithNestedMember(response, "result", "ttlMs", std::to_string(kWorkspaceListTtlMs));
      response = WithNestedMember(response, "result", "cacheScope", "\"private\"");
    }
    call->Answer(std::move(response));
  };
  if (mcp.empty()) return finish();
  gathering->pending = mcp.size();
  for (size_t i : mcp) {
    const v1::WorkspaceTool& f = (*functions)[i];
    JsonWriter event;
    event.BeginObject()
        .Field("jsonrpc", "2.0")
        .Key("id")
        .Raw(call->message.id_json)
        .Field("method", "tools/list")
        .Key("params")
        .BeginObject();
    // A stateless client's _meta (revision, capabilities) goes on to the function.
    if (std::string meta = ParamJson(call->message, "_meta"); call->stateless && !meta.empty()) {
      event.Key("_meta").Raw(meta);
    }
    event.EndObject().EndObject();
    v1::InvokeJob job = NewJob(*call, f.function_id(), "", event.Take());
    SetEnvKeys(call->request, f, &job);
    backend_.Invoke(
        std::move(job),
        [call, gathering, functions, i, prefix = names[i], finish](v1::InvokeReply answer) {
          std::vector<std::string> tools;
          const std::string& function_id = (*functions)[i].function_id();
          if (answer.has_problem()) {
            log::Warn("workspace tools/list left out a function")
                .Str("request_id", call->request.request_id)
                .Str("function_id", function_id)
                .Str("problem", answer.problem().code());
          } else if (!IsResponseTo(answer.result().body(), call->message.id_json)) {
            log::Warn("workspace tools/list left out a function")
                .Str("request_id", call->request.request_id)
                .Str("function_id", function_id)
                .Int("status_code", answer.result().status_code());
          } else if (auto page = ListResultPage(answer.result().body(), "tools")) {
            tools = PrefixedToolsJson(page->items_json, prefix);
          }
          bool last;
          {
            std::lock_guard<std::mutex> lock(gathering->mu);
            gathering->entries[i] = std::move(tools);
            last = --gathering->pending == 0;
          }
          if (last) finish();
        },
        NoticeSink());
  }
}

void McpEndpoint::WorkspaceCall(std::shared_ptr<Call> call, v1::WorkspaceToolsReply reply) {
  const McpMessage& m = call->message;
  std::string name = ParamString(m, "name");
  if (name.empty()) return call->Error(kJsonRpcInvalidParams, "Invalid params: name is required");
  std::vector<v1::WorkspaceTool> functions(reply.mutable_tools()->begin(),
                                           reply.mutable_tools()->end());
  auto target = ResolveTool(functions, AssignToolNames(functions), name);
  if (!target) return call->Error(kJsonRpcInvalidParams, "Unknown tool: " + name);
  const v1::WorkspaceTool& f = functions[target->function];
  const bool forwarded = !target->mcp_tool.empty();
  std::string event;
  if (forwarded) {
    event = ForHandler(*call, ForwardedToolCall(m.id_json, m.params_json, target->mcp_tool));
  } else {
    ArgumentsEvent args = EventFromArguments(ParamJson(m, "arguments"),
                                             ToMcpInputSchema(f.input_schema_json()).wrapped);
    if (!args.error.empty()) return call->Error(kJsonRpcInvalidParams, args.error);
    event = std::move(args.event_json);
  }
  v1::InvokeJob job = NewJob(*call, f.function_id(), "", std::move(event));
  SetEnvKeys(call->request, f, &job);
  NoticeSink notices = NoticesFor(call, &job);
  call->last_job = job;
  backend_.Invoke(
      std::move(job),
      [this, call, forwarded, output_schema = f.output_schema_json()](v1::InvokeReply answer) {
        HttpAnswer a = RenderInvokeReply(answer, call->request.request_id, Now());
        if (answer.has_problem() && IsToolError(answer.problem().code()) && !forwarded) {
          // The arguments broke the tool's input_schema, or a declared key has no secret mapped
          // (nothing ran, nothing was charged): a tool error the client reads and can act on, not
          // an HTTP 400.
          return call->Answer(
              JsonRpcResult(call->message.id_json,
                            ToolCallResult(400, core::RenderProblem(answer.problem(),
                                                                    call->request.request_id))),
              std::move(a));
        }
        if (answer.has_problem()) return call->respond(std::move(a));
        const v1::InvokeSuccess& result = answer.result();
        if (forwarded) {
          HandlerAnswer(*call, result, &a);
          if (NeedsBridge(*call, a.body)) return Bridge(call, std::move(a.body), 1);
          return call->respond(std::move(a));
        }
        call->Answer(WithCallCost(JsonRpcResult(call->message.id_json,
                                                ToolCallResult(result.status_code(), result.body(),
                                                               output_schema)),
                                  result.summary()),
                     std::move(a));
      },
      std::move(notices));
}

void McpEndpoint::WorkspaceListen(std::shared_ptr<Call> call, v1::WorkspaceToolsReply tools,
                                  const std::string& org_id) {
  const McpMessage& m = call->message;
  if (!call->live_stream) {
    return call->Error(kJsonRpcInternalError,
                       "subscriptions/listen needs a response stream; send it as one whole "
                       "request (a Content-Length body)");
  }
  WorkspaceListeners::Listener listener;
  listener.org_id = org_id;
  listener.subscription_id_json = m.id_json;
  std::string filter = ParamJson(m, "notifications");
  auto doc = ParseJson(filter.empty() ? "{}" : filter);
  simdjson::dom::object wanted;
  if (doc.ok() && doc->root.get_object().get(wanted) == simdjson::SUCCESS) {
    GetBool(wanted, "toolsListChanged", &listener.tools);
    GetBool(wanted, "promptsListChanged", &listener.prompts);
    GetBool(wanted, "resourcesListChanged", &listener.resources);
  }
  for (const v1::WorkspaceTool& f : tools.tools()) listener.function_ids.insert(f.function_id());
  // The acknowledgment names what is honoured: the three list changes, not resource updates.
  JsonWriter ack;
  ack.BeginObject()
      .Field("jsonrpc", "2.0")
      .Field("method", "notifications/subscriptions/acknowledged")
      .Key("params")
      .BeginObject()
      .Key("_meta")
      .BeginObject()
      .Key("io.modelcontextprotocol/subscriptionId")
      .Raw(m.id_json)
      .EndObject()
      .Key("notifications")
      .BeginObject();
  if (listener.tools) ack.Field("toolsListChanged", true);
  if (listener.prompts) ack.Field("promptsListChanged", true);
  if (listener.resources) ack.Field("resourcesListChanged", true);
  ack.EndObject().EndObject().EndObject();
  call->streamed.store(true);
  call->stream(ack.Take());
  listener.send = [call](std::string json) { call->stream(std::move(json)); };
  listener.end = [call] {
    JsonWriter done;
    done.BeginObject().Field("resultType", "complete").Key("_meta").BeginObject();
    done.Key("io.modelcontextprotocol/subscriptionId").Raw(call->message.id_json);
    call->Answer(JsonRpcResult(call->message.id_json, done.EndObject().EndObject().str()));
  };
  const uint64_t id = listeners_.Add(std::move(listener));
  backend_.After(options_.listen_lifetime_ms, [this, id] { listeners_.End(id); });
}

void McpEndpoint::WorkspaceCatalog(std::shared_ptr<Call> call, v1::WorkspaceToolsReply reply) {
  const std::string& method = call->message.method;
  std::vector<v1::WorkspaceTool> functions(reply.mutable_tools()->begin(),
                                           reply.mutable_tools()->end());
  const std::vector<std::string> names = AssignToolNames(functions);
  const std::string_view member = method == "resources/list"             ? "resources"
                                  : method == "resources/templates/list" ? "resourceTemplates"
                                                                         : "prompts";
  JsonWriter w;
  w.BeginObject().Key(member).BeginArray();
  for (size_t i = 0; i < functions.size(); ++i) {
    const v1::WorkspaceTool& f = functions[i];
    if (!f.mcp() || !f.has_listing()) continue;  // only listed MCP functions have any
    std::vector<std::string> entries =
        method == "resources/list"
            ? PrefixedResourcesJson(f.listing().resources_json(), names[i], "uri")
        : method == "resources/templates/list"
            ? PrefixedResourcesJson(f.listing().resource_templates_json(), names[i], "uriTemplate")
            : PrefixedToolsJson(f.listing().prompts_json(), names[i]);
    for (const std::string& e : entries) w.Raw(e);
  }
  w.EndArray();
  if (call->stateless) w.Field("ttlMs", kWorkspaceListTtlMs).Field("cacheScope", "private");
  call->Answer(JsonRpcResult(call->message.id_json, w.EndObject().str()));
}

void McpEndpoint::WorkspaceForward(std::shared_ptr<Call> call, v1::WorkspaceToolsReply reply) {
  const McpMessage& m = call->message;
  std::vector<v1::WorkspaceTool> functions(reply.mutable_tools()->begin(),
                                           reply.mutable_tools()->end());
  const std::vector<std::string> names = AssignToolNames(functions);
  std::optional<size_t> target;
  std::string member, value;
  if (m.method == "resources/read") {
    member = "uri";
    auto uri = ParseWorkspaceUri(ParamString(m, "uri"));
    for (size_t i = 0; uri && i < functions.size(); ++i) {
      if (functions[i].mcp() && names[i] == uri->function_name) target = i;
    }
    if (uri) value = uri->uri;
  } else {
    member = "name";
    if (auto t = ResolveTool(functions, names, ParamString(m, "name")); t && !t->mcp_tool.empty()) {
      target = t->function;
      value = t->mcp_tool;
    }
  }
  if (!target) {
    return call->Error(kJsonRpcInvalidParams,
                       std::string("Invalid params: no function of this workspace has ") +
                           (member == "uri" ? "the resource " : "the prompt ") +
                           ParamString(m, member));
  }
  const v1::WorkspaceTool& f = functions[*target];
  v1::InvokeJob job = NewJob(
      *call, f.function_id(), "",
      ForHandler(*call, ForwardedRequest(m.id_json, m.method, m.params_json, member, value)));
  SetEnvKeys(call->request, f, &job);
  NoticeSink notices = NoticesFor(call, &job);
  call->last_job = job;
  backend_.Invoke(
      std::move(job), [this, call](v1::InvokeReply answer) { AnswerRun(call, answer, 1); },
      std::move(notices));
}

}  // namespace toolgate::edge
