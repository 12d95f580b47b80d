#include "mcp_endpoint.h"

#include <algorithm>
#include <cctype>
#include <mutex>

#include "browser_session.h"
#include "mcp_workspace.h"
#include "toolgate/base/crypto.h"
#include "toolgate/base/json_writer.h"
#include "toolgate/base/log.h"
#include "toolgate/base/strings.h"
#include "toolgate/base/time.h"
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

}  // namespace

struct McpEndpoint::Call {
  Call(McpHttpRequest r, Respond done) : request(std::move(r)), respond(std::move(done)) {}

  void Problem(const v1::Problem& problem) const {
    respond(RenderProblem(problem, request.request_id));
  }
  void Answer(std::string json) const { respond(JsonRpcAnswer(std::move(json))); }
  void Error(int code, std::string_view message) const {
    Answer(JsonRpcError(this->message.id_json, code, message));
  }

  McpHttpRequest request;
  Respond respond;
  std::string key_sha256;
  McpMessage message;
  std::string revision;  // the session's, or for initialize the one negotiated
};

McpEndpoint::McpEndpoint(McpBackend& backend, const McpSessionCodec& codec, EndedSessions& ended,
                         Options options)
    : backend_(backend), codec_(codec), ended_(ended), options_(std::move(options)) {
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

void McpEndpoint::Handle(McpHttpRequest request, Respond respond) {
  auto call = std::make_shared<Call>(std::move(request), std::move(respond));
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
  // Against DNS rebinding: a web page of another origin must not reach a local edge.
  if (!SameOrigin(r.origin, r.host)) {
    return call->Problem(core::MakeProblem(
        "forbidden",
        "Requests from web pages of another origin are refused; MCP clients send no "
        "Origin header, or this server's own."));
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
  call->key_sha256 = Sha256(r.api_key);
  if (r.method == "DELETE") return HandleDelete(std::move(call));
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
  auto session = codec_.Verify(*r.session_id, call.key_sha256, Now());
  if (!session || session->endpoint != EndpointName(r) || ended_.Contains(session->nonce)) {
    call.Problem(TransportProblem(
        404, "mcp_session_not_found", "MCP session not found",
        "The session ended, expired, or belongs to another endpoint or API key; initialize a new "
        "session."));
    return std::nullopt;
  }
  if (r.protocol_version && *r.protocol_version != session->revision) {
    call.Problem(TransportProblem(400, "unsupported_protocol_version",
                                  "Unsupported MCP protocol version",
                                  "MCP-Protocol-Version is " + *r.protocol_version +
                                      " but the session uses " + session->revision + "."));
    return std::nullopt;
  }
  return session;
}

void McpEndpoint::Authenticate(std::shared_ptr<Call> call,
                               std::function<void(const v1::Principal&)> next) {
  backend_.Authenticate(call->key_sha256, [call,
                                           next = std::move(next)](v1::AuthenticateReply reply) {
    if (reply.has_problem()) return call->Problem(reply.problem());
    const auto& scopes = reply.principal().scopes();
    if (std::find(scopes.begin(), scopes.end(), "invoke") == scopes.end()) {
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
    // Notifications and responses run nothing; the key must still be good.
    return Authenticate(call, [call](const v1::Principal&) { call->respond(NoContent(202)); });
  }
  if (!r.workspace) return FunctionRequest(std::move(call));
  Authenticate(call,
               [this, call](const v1::Principal& principal) { WorkspaceRequest(call, principal); });
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
  return job;
}

void McpEndpoint::FunctionRequest(std::shared_ptr<Call> call) {
  const McpHttpRequest& r = call->request;
  // The handler receives the message exactly as the client sent it.
  v1::InvokeJob job =
      NewJob(*call, r.function_id, r.version, std::string(TrimAsciiWhitespace(r.body)));
  if (r.env_keys) {
    job.set_env_keys_present(true);
    job.set_env_keys_header(*r.env_keys);
  }
  backend_.Invoke(std::move(job), [this, call](v1::InvokeReply reply) {
    // Rendering the envelope first keeps its headers (X-Api-Key-Expires-At) and its problems.
    HttpAnswer a = RenderInvokeReply(reply, call->request.request_id, Now());
    if (reply.has_problem()) return call->respond(std::move(a));
    const v1::InvokeSuccess& result = reply.result();
    const std::string& id = call->message.id_json;
    a.status = 200;
    a.content_type = "application/json";
    a.body = IsResponseTo(result.body(), id) ? result.body() : HandlerFailure(id, result);
    if (call->message.method == "initialize") {
      // The session's revision is the one the handler's initialize result names.
      std::string revision = InitializeResultRevision(a.body);
      if (!revision.empty()) {
        McpSession session = McpSessionCodec::NewSession(
            EndpointName(call->request), std::move(revision), Now(), options_.session_ttl_ms);
        a.headers.emplace_back("Mcp-Session-Id", codec_.Issue(session, call->key_sha256));
      }
    }
    call->respond(std::move(a));
  });
}

void McpEndpoint::WorkspaceRequest(std::shared_ptr<Call> call, const v1::Principal& principal) {
  const McpMessage& m = call->message;
  if (m.method == "initialize") {
    JsonWriter w;
    w.BeginObject().Field("protocolVersion", call->revision);
    w.Key("capabilities").BeginObject().Key("tools").BeginObject();
    w.Field("listChanged", false).EndObject().EndObject();
    w.Key("serverInfo")
        .BeginObject()
        .Field("name", "toolgate")
        .Field("version", options_.server_version)
        .EndObject();
    w.Field("instructions", "The tools of the Toolgate organization " + principal.org_name() +
                                ": the functions it owns or has added. Every call is billed "
                                "like an invocation.");
    HttpAnswer a = JsonRpcAnswer(JsonRpcResult(m.id_json, w.EndObject().str()));
    McpSession session =
        McpSessionCodec::NewSession("workspace", call->revision, Now(), options_.session_ttl_ms);
    a.headers.emplace_back("Mcp-Session-Id", codec_.Issue(session, call->key_sha256));
    return call->respond(std::move(a));
  }
  if (m.method == "ping") return call->Answer(JsonRpcResult(m.id_json, "{}"));
  if (m.method != "tools/list" && m.method != "tools/call") {
    return call->Error(kJsonRpcMethodNotFound, "Method not found: " + m.method);
  }
  const bool list = m.method == "tools/list";
  backend_.WorkspaceTools(principal.org_id(), [this, call, list](v1::WorkspaceToolsReply tools) {
    if (tools.has_problem()) return call->Problem(tools.problem());
    if (list) return WorkspaceList(call, std::move(tools));
    WorkspaceCall(call, std::move(tools));
  });
}

void McpEndpoint::WorkspaceList(std::shared_ptr<Call> call, v1::WorkspaceToolsReply reply) {
  // Each MCP function is asked for its tools (one invocation each, billed as usual); the answer
  // waits for all of them. A function that cannot list is left out rather than failing the list.
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
  std::vector<size_t> mcp;
  for (size_t i = 0; i < functions->size(); ++i) {
    if ((*functions)[i].mcp()) {
      mcp.push_back(i);
    } else {
      gathering->entries[i].push_back(FunctionToolJson((*functions)[i], names[i]));
    }
  }
  auto finish = [call, gathering] {
    std::vector<std::string> all;
    for (auto& slot : gathering->entries) {
      for (auto& e : slot) all.push_back(std::move(e));
    }
    call->Answer(JsonRpcResult(call->message.id_json, ToolsListResult(all)));
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
        .BeginObject()
        .EndObject()
        .EndObject();
    v1::InvokeJob job = NewJob(*call, f.function_id(), "", event.Take());
    SetEnvKeys(call->request, f, &job);
    backend_.Invoke(std::move(job), [call, gathering, functions, i, prefix = names[i],
                                     finish](v1::InvokeReply answer) {
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
      } else {
        tools = PrefixedToolsJson(answer.result().body(), prefix);
      }
      bool last;
      {
        std::lock_guard<std::mutex> lock(gathering->mu);
        gathering->entries[i] = std::move(tools);
        last = --gathering->pending == 0;
      }
      if (last) finish();
    });
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
    event = ForwardedToolCall(m.id_json, m.params_json, target->mcp_tool);
  } else {
    ArgumentsEvent args = EventFromArguments(ParamJson(m, "arguments"),
                                             ToMcpInputSchema(f.input_schema_json()).wrapped);
    if (!args.error.empty()) return call->Error(kJsonRpcInvalidParams, args.error);
    event = std::move(args.event_json);
  }
  v1::InvokeJob job = NewJob(*call, f.function_id(), "", std::move(event));
  SetEnvKeys(call->request, f, &job);
  backend_.Invoke(std::move(job), [this, call, forwarded](v1::InvokeReply answer) {
    HttpAnswer a = RenderInvokeReply(answer, call->request.request_id, Now());
    if (answer.has_problem() && IsToolError(answer.problem().code()) && !forwarded) {
      // The arguments broke the tool's input_schema, or a declared key has no secret mapped
      // (nothing ran, nothing was charged): a tool error the client reads and can act on, not
      // an HTTP 400.
      a.status = 200;
      a.content_type = "application/json";
      a.body = JsonRpcResult(
          call->message.id_json,
          ToolCallResult(400, core::RenderProblem(answer.problem(), call->request.request_id)));
      return call->respond(std::move(a));
    }
    if (answer.has_problem()) return call->respond(std::move(a));
    const v1::InvokeSuccess& result = answer.result();
    const std::string& id = call->message.id_json;
    a.status = 200;
    a.content_type = "application/json";
    if (forwarded) {
      a.body = IsResponseTo(result.body(), id) ? result.body() : HandlerFailure(id, result);
    } else {
      a.body = JsonRpcResult(id, ToolCallResult(result.status_code(), result.body()));
    }
    call->respond(std::move(a));
  });
}

}  // namespace toolgate::edge
