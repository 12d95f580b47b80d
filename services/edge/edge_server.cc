#include "edge_server.h"

#include <algorithm>
#include <mutex>
#include <optional>
#include <sstream>
#include <vector>

#include "browser_session.h"
#include "csrf_guard.h"
#include "invoke_body.h"
#include "mcp_protocol.h"
#include "mcp_stateless.h"
#include "oauth_resource.h"
#include "render.h"
#include "toolgate/base/crypto.h"
#include "toolgate/base/json.h"
#include "toolgate/base/json_writer.h"
#include "toolgate/base/log.h"
#include "toolgate/base/strings.h"
#include "toolgate/base/time.h"
#include "toolgate/core/http.h"
#include "toolgate/core/invoke_stage.h"
#include "toolgate/core/problem.h"
#include "toolgate/core/subjects.h"
#include "toolgate/trace/trace.h"
#include "upload_route.h"

namespace toolgate::edge {

using namespace Pistache;

namespace {

class Handler : public Http::Handler {
 public:
  HTTP_PROTOTYPE(Handler)
  explicit Handler(EdgeServer* server) : server_(server) {}
  void onRequest(const Http::Request& request, Http::ResponseWriter writer) override {
    server_->OnRequest(request, std::move(writer));
  }

 private:
  EdgeServer* server_;
};

// Pistache 0.0.5 writes only typed headers in responses (raw ones are silently dropped), so
// every header we send is one of these.
class NamedHeader : public Http::Header::Header {
 public:
  NamedHeader(std::string name, std::string value)
      : name_(std::move(name)), value_(std::move(value)) {}
  const char* name() const override { return name_.c_str(); }
  void write(std::ostream& os) const override { os << value_; }
  uint64_t hash() const override { return Http::Header::detail::hash(name_.c_str()); }

 private:
  std::string name_;
  std::string value_;
};

void AddHeader(Http::ResponseWriter& writer, std::string name, std::string value) {
  writer.headers().add(std::make_shared<NamedHeader>(std::move(name), std::move(value)));
}

// Pistache parses well-known headers (Authorization, Content-Type, ...) into typed objects and
// keeps the others raw; callers just want the text.
std::string HeaderValue(const Http::Request& request, const std::string& name) {
  if (auto raw = request.headers().tryGetRaw(name)) return raw->value();
  if (auto typed = request.headers().tryGet(name)) {
    std::ostringstream os;
    typed->write(os);
    return os.str();
  }
  return {};
}

bool HasHeader(const Http::Request& request, const std::string& name) {
  return request.headers().tryGetRaw(name).has_value() || request.headers().tryGet(name) != nullptr;
}

std::string PercentDecode(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '+') {
      out.push_back(' ');
    } else if (s[i] == '%' && i + 2 < s.size() + 0 && std::isxdigit(s[i + 1]) &&
               std::isxdigit(s[i + 2])) {
      out.push_back(static_cast<char>(std::stoi(std::string(s.substr(i + 1, 2)), nullptr, 16)));
      i += 2;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

// The service that owns a management path (below /api/v1), or empty.
std::string OwnerOf(const std::vector<std::string>& segments) {
  if (segments.empty()) return {};
  const std::string& head = segments[0];
  // An API key's spending limits are billing's (auth owns the key, billing its budgets).
  if (head == "api-keys" && segments.size() == 3 && segments[2] == "budget") return "billing";
  if (head == "auth" || head == "me" || head == "api-keys" || head == "oauth") return "auth";
  if (head == "secrets") return "secrets";
  if (head == "functions" || head == "workspace" || head == "marketplace" || head == "favorites") {
    return "registry";
  }
  if (head == "billing" || head == "executions" || head == "webhooks") return "billing";
  // The operators' routes: so far only grants of credit, which are ledger entries.
  if (head == "admin") return "billing";
  return {};
}

void Send(Http::ResponseWriter& writer, const HttpAnswer& answer, const std::string& request_id,
          const std::string& traceparent = {}) {
  AddHeader(writer, "X-Request-Id", request_id);
  if (!traceparent.empty()) AddHeader(writer, "traceparent", traceparent);
  if (!answer.content_type.empty()) AddHeader(writer, "Content-Type", answer.content_type);
  for (const auto& [name, value] : answer.headers) AddHeader(writer, name, value);
  writer.send(static_cast<Http::Code>(answer.status), answer.body, Http::Mime::MediaType());
}

void SendProblem(Http::ResponseWriter& writer, std::string_view code, std::string_view detail,
                 const std::string& request_id, const std::string& traceparent = {}) {
  Send(writer, RenderProblem(core::MakeProblem(code, detail), request_id), request_id, traceparent);
}

// What a failed bus round trip means to the client.
void SendBusFailure(Http::ResponseWriter& writer, const Status& status,
                    const std::string& request_id, const std::string& traceparent = {}) {
  log::Warn("bus request failed").Str("request_id", request_id).Str("error", status.ToString());
  Send(writer, RenderProblem(BusFailureProblem(status), request_id), request_id, traceparent);
}

// The client address in "<token> <address>" (X-Toolgate-Client, set by the front), or empty when
// the token is not ours: the request did not come through the front.
std::string FrontClient(std::string_view value, std::string_view token) {
  if (token.empty() || value.size() <= token.size() + 1 || !value.starts_with(token) ||
      value[token.size()] != ' ') {
    return {};
  }
  return std::string(value.substr(token.size() + 1));
}

// "/mcp", "/mcp/functions/{id}" or "/mcp/functions/{id}/{version}" (segments after /).
bool IsMcpTarget(const std::vector<std::string>& segments) {
  if (segments.empty() || segments[0] != "mcp") return false;
  return segments.size() == 1 ||
         (segments.size() >= 3 && segments.size() <= 4 && segments[1] == "functions");
}

// An MCP answer as an SSE event ("message"); a line break in the JSON (whitespace only: strings
// cannot hold one) starts another data line, which the reader joins back.
std::string SseEvent(std::string_view json) {
  std::string event = "event: message\n";
  while (!json.empty()) {
    size_t nl = json.find('\n');
    std::string_view line = json.substr(0, nl);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    event.append("data: ").append(line).append("\n");
    json = nl == std::string_view::npos ? std::string_view() : json.substr(nl + 1);
  }
  return event + "\n";
}

// The headers of an MCP event stream.
std::vector<std::pair<std::string, std::string>> StreamHeaders(const std::string& request_id,
                                                               const std::string& traceparent) {
  std::vector<std::pair<std::string, std::string>> headers = {
      {"Content-Type", "text/event-stream"},
      {"Cache-Control", "no-cache"},
      {"X-Accel-Buffering", "no"},  // proxies must not hold the events back
      {"X-Request-Id", request_id}};
  if (!traceparent.empty()) headers.emplace_back("traceparent", traceparent);
  return headers;
}

// The answer to an MCP POST that the front took: a response stream (chunked text/event-stream)
// from the first notification on, each event written as it comes, the answer the last one; a
// plain answer when there was none. Event() and Answer() may come from different threads; they
// never interleave.
class FrontMcpResponder {
 public:
  FrontMcpResponder(FrontRespond respond, FrontRespond part, bool keep_alive,
                    std::string request_id, std::string traceparent)
      : respond_(std::move(respond)),
        part_(std::move(part)),
        keep_alive_(keep_alive),
        request_id_(std::move(request_id)),
        traceparent_(std::move(traceparent)) {}

  void Event(const std::string& json) {
    std::lock_guard<std::mutex> lock(mu_);
    if (done_) return;
    std::string bytes;
    if (!streaming_) {
      streaming_ = true;
      bytes = ChunkedResponseHead(200, StreamHeaders(request_id_, traceparent_), keep_alive_);
    }
    part_(bytes + Chunk(SseEvent(json)));
  }

  void Answer(const HttpAnswer& a) {
    std::lock_guard<std::mutex> lock(mu_);
    if (done_) return;
    done_ = true;
    if (streaming_) {
      respond_(Chunk(a.body.empty() ? std::string() : SseEvent(a.body)) + std::string(kLastChunk));
      return;
    }
    std::vector<std::pair<std::string, std::string>> headers;
    if (!a.content_type.empty()) headers.emplace_back("Content-Type", a.content_type);
    if (!traceparent_.empty()) headers.emplace_back("traceparent", traceparent_);
    headers.emplace_back("X-Request-Id", request_id_);
    headers.insert(headers.end(), a.headers.begin(), a.headers.end());
    respond_(ResponseBytes(a.status, headers, a.body, keep_alive_));
  }

 private:
  std::mutex mu_;
  FrontRespond respond_;
  FrontRespond part_;
  const bool keep_alive_;
  const std::string request_id_;
  const std::string traceparent_;
  bool streaming_ = false;  // guarded by mu_
  bool done_ = false;       // guarded by mu_
};

// The same for an MCP request Pistache read (one the front could not take whole: chunked, or
// behind a pipelined request): Pistache cannot write a stream from another thread, so the
// notifications and the answer leave together, as one event stream, at the end.
class PistacheMcpResponder {
 public:
  PistacheMcpResponder(std::shared_ptr<Http::ResponseWriter> writer, std::string request_id,
                       std::string traceparent)
      : writer_(std::move(writer)),
        request_id_(std::move(request_id)),
        traceparent_(std::move(traceparent)) {}

  void Event(const std::string& json) {
    std::lock_guard<std::mutex> lock(mu_);
    events_ += SseEvent(json);
  }

  void Answer(HttpAnswer a) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!events_.empty()) {
      a.body = events_ + (a.body.empty() ? std::string() : SseEvent(a.body));
      a.content_type = "text/event-stream";
      a.headers.emplace_back("Cache-Control", "no-cache");
      events_.clear();
    }
    Send(*writer_, a, request_id_, traceparent_);
  }

 private:
  std::mutex mu_;
  std::shared_ptr<Http::ResponseWriter> writer_;
  const std::string request_id_;
  const std::string traceparent_;
  std::string events_;  // guarded by mu_
};

McpEndpoint::Options McpOptions(const EdgeOptions& edge) {
  McpEndpoint::Options options;
  options.max_request_bytes = edge.max_request_bytes;
  options.session_ttl_ms = edge.mcp_session_ttl_ms;
  options.server_version = edge.version;
  options.hosts.public_hosts = edge.public_hosts;
  options.hosts.listens_on_loopback = IsLoopbackListenAddress(edge.host);
  options.hosts.allowed_origins = edge.app_origins;
  return options;
}

// Header values an MCP request may or may not carry.
std::optional<std::string> OptionalHeader(const Http::Request& request, const std::string& name) {
  if (!HasHeader(request, name)) return std::nullopt;
  return HeaderValue(request, name);
}

// The answer's side of an invocation's server span; a server span fails only on a 5xx (the
// caller's mistakes are not the server's errors).
void AnnotateAnswer(trace::Span& span, int status) {
  span.SetAttribute("http.response.status_code", static_cast<int64_t>(status));
  if (status >= 500) span.SetError();
}

}  // namespace

EdgeServer::EdgeServer(bus::Bus& bus, EdgeOptions options)
    : bus_(bus),
      options_(std::move(options)),
      mux_(bus),
      decision_caches_(options_.decisions, [] { return MonotonicUs() / 1000; }),
      decision_source_(mux_, options_.management_timeout_ms),
      decider_(decision_caches_, decision_source_, key_uses_,
               InvokeDecider::Clocks{.wall_ms = [] { return NowMs(); },
                                     .connection_epoch = [this] { return bus_.reconnects(); }}),
      body_admission_(
          {.max_body_bytes = options_.max_request_bytes,
           .max_upload_bytes = std::max(options_.max_upload_bytes, options_.max_request_bytes)},
          decision_caches_, decision_source_, [] { return NowMs(); }),
      web_(options_.web_dir),
      invoke_metrics_(options_.metrics),
      mcp_codec_(options_.mcp_session_key.empty() ? RandomBytes(McpSessionCodec::kKeyBytes)
                                                  : options_.mcp_session_key),
      mcp_bus_(
          bus, mux_,
          [this](v1::InvokeJob job, std::function<void(v1::InvokeReply)> done, NoticeSink notices) {
            DispatchInvoke(std::move(job), std::move(done), std::move(notices));
          },
          [this](const std::string& key_sha256, InvokeDecider::CredentialDone done) {
            decider_.Credential(key_sha256, std::move(done));
          },
          mcp_ended_, mcp_log_levels_, options_.management_timeout_ms),
      mcp_(mcp_bus_, mcp_codec_, mcp_ended_, mcp_log_levels_, McpOptions(options_)),
      mcp_listings_(mcp_bus_) {}

EdgeServer::~EdgeServer() {
  Shutdown();
}

Status EdgeServer::Start() {
  Status s = mux_.Start();
  if (!s.ok()) return s;
  s = mcp_bus_.Start();
  if (!s.ok()) return s;
  s = SubscribeInvalidations(bus_, decision_caches_);
  if (!s.ok()) return s;
  // The same events tell the workspace's MCP listeners that their lists changed.
  s = bus_.Subscribe(core::kFunctionChangedSubject, "", [this](bus::Message&& m) {
    v1::FunctionChanged e;
    if (e.ParseFromString(m.data)) mcp_.FunctionChanged(e.function_id());
  });
  if (!s.ok()) return s;
  s = bus_.Subscribe(core::kWorkspaceChangedSubject, "", [this](bus::Message&& m) {
    v1::WorkspaceChanged e;
    if (e.ParseFromString(m.data)) mcp_.WorkspaceChanged(e.org_id());
  });
  if (!s.ok()) return s;
  key_use_reporter_ = std::make_unique<KeyUseReporter>(bus_, key_uses_, options_.key_use_report_ms);
  try {
    // Only the front connects here; clients reach Pistache through it.
    Address addr("127.0.0.1", Port(0));
    endpoint_ = std::make_unique<Http::Endpoint>(addr);
    auto opts =
        Http::Endpoint::options()
            .threads(options_.threads)
            .flags(Tcp::Options::ReuseAddr)
            // Pistache buffers whole requests; room above our limit lets us answer a
            // too-large body with our own 413 problem instead of Pistache's plain text.
            .maxRequestSize(std::max(options_.max_request_bytes * 2, options_.max_upload_bytes) +
                            64 * 1024)
            .maxResponseSize(64 * 1024 * 1024);
    endpoint_->init(opts);
    endpoint_->setHandler(Http::make_handler<Handler>(this));
    endpoint_->serveThreaded();
  } catch (const std::exception& e) {
    return Status::Unavailable(std::string("cannot listen: ") + e.what());
  }
  front_token_ = HexEncode(RandomBytes(16));
  FrontOptions front;
  front.host = options_.host;
  front.port = options_.port;
  front.backend_port = static_cast<uint16_t>(endpoint_->getPort());
  front.max_body_bytes = options_.max_request_bytes;
  front.max_upload_bytes = options_.max_upload_bytes;
  front.header_timeout_ms = options_.header_timeout_ms;
  front.body_timeout_ms = options_.body_timeout_ms;
  front.idle_timeout_ms = options_.idle_timeout_ms;
  front.max_connections = options_.max_connections;
  front.max_connections_per_client = options_.max_connections_per_client;
  front.trusted_proxies = options_.trusted_proxies;
  front.max_body_bytes_in_flight = options_.max_body_bytes_in_flight;
  front.max_body_bytes_in_flight_per_client = options_.max_body_bytes_in_flight_per_client;
  // Who the caller is and what it may send are decided from the head, before the body is read.
  front.gate = [this](const RequestHead& head, std::function<void(BodyVerdict)> later) {
    auto target = head.method == "POST"
                      ? InvokeTarget(core::SplitPath(head.target.substr(0, head.target.find('?'))))
                      : std::nullopt;
    if (!target) return body_admission_.Decide(head, std::move(later));
    // An invocation refused here is an answered invocation: counted like the chain's refusals.
    auto count = [this, start_us = MonotonicUs(), target = *target](const BodyVerdict& verdict) {
      if (!verdict.refusal || target.estimate) return;
      v1::InvokeReply reply;
      *reply.mutable_problem() = *verdict.refusal;
      invoke_metrics_.Record(target.function_id, target.version, reply, verdict.refusal->status(),
                             static_cast<double>(MonotonicUs() - start_us) / 1e6);
    };
    auto now = body_admission_.Decide(head, [count, later = std::move(later)](BodyVerdict verdict) {
      count(verdict);
      later(std::move(verdict));
    });
    if (now) count(*now);
    return now;
  };
  front.token = front_token_;
  // Invocations are answered by the front itself: no loopback hop to Pistache and back, and
  // the answer leaves from the front's thread instead of crossing to a Pistache reactor.
  // So are MCP POSTs, whose answers may be event streams: the front writes each event as it
  // comes, from any thread.
  front.route.takes = [](std::string_view method, std::string_view target) {
    if (method != "POST") return false;
    auto segments = core::SplitPath(target.substr(0, target.find('?')));
    return InvokeTarget(segments).has_value() || IsMcpTarget(segments);
  };
  front.route.answer = [this](FrontRequest request, FrontRespond respond, FrontRespond part) {
    AnswerFromFront(std::move(request), std::move(respond), std::move(part));
  };
  // The jobs one pass of the front decides leave together: one message per first stage.
  front.route.pass_begins = [this] { bus_.HoldCoalesced(); };
  front.route.pass_ends = [this] { bus_.SendCoalesced(); };
  front_ = std::make_unique<HttpFront>(std::move(front));
  return front_->Start();
}

void EdgeServer::Shutdown() {
  if (front_) {
    front_->Stop();
    front_.reset();
  }
  if (endpoint_) {
    endpoint_->shutdown();
    endpoint_.reset();
  }
}

int EdgeServer::port() const {
  return front_ ? front_->port() : 0;
}

void EdgeServer::OnRequest(const Http::Request& request, Http::ResponseWriter writer) {
  std::string request_id = HexEncode(RandomBytes(12));
  auto shared = std::make_shared<Http::ResponseWriter>(std::move(writer));
  const std::string& path = request.resource();
  auto segments = core::SplitPath(path);
  Http::Method method = request.method();
  std::string client = FrontClient(HeaderValue(request, "X-Toolgate-Client"), front_token_);
  if (client.empty()) {
    return SendProblem(*shared, "forbidden", "Connect to the edge's public address.", request_id);
  }

  if (path == "/healthz" && method == Http::Method::Get) return HandleHealth(shared, request_id);
  if (!segments.empty() && segments[0] == "mcp") {
    return HandleMcp(request, shared, request_id, segments);
  }
  if (!segments.empty() && (segments[0] == ".well-known" || segments[0] == "oauth")) {
    return HandleOAuth(request, shared, request_id, segments, client);
  }
  if (segments.size() < 2 || segments[0] != "api" || segments[1] != "v1") {
    if (method == Http::Method::Get || method == Http::Method::Head) {
      if (auto file = web_.Find(path)) {
        HttpAnswer a;
        a.content_type = file->content_type;
        a.body = file->body;
        // The pages load nothing from elsewhere but images over https (an OAuth client's logo on
        // the consent page, shown without a referrer), and are never framed by another site.
        a.headers.emplace_back("Content-Security-Policy",
                               "default-src 'self'; img-src 'self' data: https:; "
                               "frame-ancestors 'none'; base-uri 'none'; form-action 'self'");
        a.headers.emplace_back("X-Content-Type-Options", "nosniff");
        a.headers.emplace_back("Cache-Control", "no-cache");
        return Send(*shared, a, request_id);
      }
    }
    return SendProblem(*shared, "not_found", "No such route; the API lives under /api/v1.",
                       request_id);
  }
  if (segments.size() == 3 && segments[2] == "openapi.json" && method == Http::Method::Get) {
    HttpAnswer a;
    a.body = options_.openapi_json;
    return Send(*shared, a, request_id);
  }
  if (auto target = InvokeTarget(segments)) {
    if (method != Http::Method::Post) {
      return SendProblem(*shared, "method_not_allowed",
                         target->estimate ? "Estimate with POST." : "Invoke with POST.",
                         request_id);
    }
    InvokeHttp in;
    in.traceparent = HeaderValue(request, "traceparent");
    in.authorization = HeaderValue(request, "Authorization");
    in.csrf = HeaderValue(request, kCsrfHeader);
    in.origin = HeaderValue(request, "Origin");
    in.host = HeaderValue(request, "Host");
    in.content_type = HeaderValue(request, "Content-Type");
    if (HasHeader(request, "X-Env-Keys")) in.env_keys = HeaderValue(request, "X-Env-Keys");
    if (HasHeader(request, "X-Toolgate-Max-Cost")) {
      in.max_cost = HeaderValue(request, "X-Toolgate-Max-Cost");
    }
    if (HasHeader(request, "Prefer")) in.prefer = HeaderValue(request, "Prefer");
    if (HasHeader(request, "Idempotency-Key")) {
      in.idempotency_key = HeaderValue(request, "Idempotency-Key");
    }
    if (HasHeader(request, "X-Callback-Url")) {
      in.callback_url = HeaderValue(request, "X-Callback-Url");
    }
    if (request.cookies().has("tg_session")) in.session = request.cookies().get("tg_session").value;
    in.body = request.body();
    return HandleInvoke(
        std::move(in),
        [shared](const HttpAnswer& a, const std::string& id, const std::string& traceparent) {
          Send(*shared, a, id, traceparent);
        },
        request_id, *target);
  }
  HandleManagement(request, shared, request_id, path.substr(std::string("/api/v1").size()), client);
}

std::optional<EdgeServer::InvokeRoute> EdgeServer::InvokeTarget(
    const std::vector<std::string>& segments) {
  if (segments.size() < 5 || segments.size() > 6 || segments[0] != "api" || segments[1] != "v1" ||
      segments[2] != "functions" ||
      (segments.back() != "invoke" && segments.back() != "estimate")) {
    return std::nullopt;
  }
  return InvokeRoute{segments[3], segments.size() == 6 ? segments[4] : std::string(),
                     segments.back() == "estimate"};
}

void EdgeServer::AnswerFromFront(FrontRequest request, FrontRespond respond, FrontRespond part) {
  const std::string request_id = HexEncode(RandomBytes(12));
  const RequestHead& head = request.head;
  const std::string path = head.target.substr(0, head.target.find('?'));
  if (auto segments = core::SplitPath(path); IsMcpTarget(segments)) {
    return McpFromFront(std::move(request), std::move(respond), std::move(part), request_id,
                        segments);
  }
  auto target = InvokeTarget(core::SplitPath(path));
  const bool keep_alive = head.KeepAlive();
  auto answer = [respond = std::move(respond), keep_alive](
                    const HttpAnswer& a, const std::string& id, const std::string& traceparent) {
    std::vector<std::pair<std::string, std::string>> headers;
    headers.reserve(a.headers.size() + 3);
    if (!a.content_type.empty()) headers.emplace_back("Content-Type", a.content_type);
    if (!traceparent.empty()) headers.emplace_back("traceparent", traceparent);
    headers.emplace_back("X-Request-Id", id);
    headers.insert(headers.end(), a.headers.begin(), a.headers.end());
    respond(ResponseBytes(a.status, headers, a.body, keep_alive));
  };
  if (!target || head.method != "POST") {  // the route takes only these
    return answer(RenderProblem(core::MakeProblem("not_found", "No such route."), request_id),
                  request_id, {});
  }
  InvokeHttp in;
  in.traceparent = head.Value("traceparent");
  in.authorization = head.Value("authorization");
  static const std::string csrf_header = AsciiLower(kCsrfHeader);  // heads keep names lower-cased
  in.csrf = head.Value(csrf_header);
  in.origin = head.Value("origin");
  in.host = head.Value("host");
  in.content_type = head.Value("content-type");
  if (const std::string* keys = head.Find("x-env-keys")) in.env_keys = *keys;
  if (const std::string* max_cost = head.Find("x-toolgate-max-cost")) in.max_cost = *max_cost;
  if (const std::string* prefer = head.Find("prefer")) in.prefer = *prefer;
  if (const std::string* key = head.Find("idempotency-key")) in.idempotency_key = *key;
  if (const std::string* url = head.Find("x-callback-url")) in.callback_url = *url;
  in.session = head.Cookie("tg_session");
  in.body = std::move(request.body);
  HandleInvoke(std::move(in), std::move(answer), request_id, *target);
}

void EdgeServer::HandleInvoke(InvokeHttp request, Answer answer, const std::string& request_id,
                              const InvokeRoute& route) {
  const std::string& function_id = route.function_id;
  const std::string& version = route.version;
  const int64_t start_us = MonotonicUs();
  auto span = std::make_shared<trace::Span>(trace::ContinueOrStart(request.traceparent),
                                            route.estimate ? "edge.estimate" : "edge.invoke",
                                            trace::SpanKind::kServer);
  const std::string route_name =
      std::string(version.empty() ? "/api/v1/functions/{id}/"
                                  : "/api/v1/functions/{id}/{version}/") +
      (route.estimate ? "estimate" : "invoke");
  span->SetAttribute("http.request.method", std::string("POST"))
      .SetAttribute("http.route", route_name)
      .SetAttribute("faas.trigger", std::string("http"))
      .SetAttribute("faas.invoked_name", function_id);
  std::string traceparent = span->traceparent();
  const std::string& body = request.body;
  // An invocation's answer is counted (an estimate's is no invocation) and rendered as the
  // invoke envelope, an estimate's as what the call would hold.
  const bool estimate = route.estimate;
  const bool respond_async = !estimate && request.prefer && PrefersRespondAsync(*request.prefer);
  auto finish = [this, estimate, respond_async, function_id, version, start_us](
                    const v1::InvokeReply& reply, const std::string& request_id) {
    if (estimate) return RenderEstimateReply(reply, request_id, NowMs());
    HttpAnswer rendered = RenderInvokeReply(reply, request_id, NowMs());
    // RFC 7240: the preference was honoured (the call was queued, or is a queued one's repeat).
    if (respond_async && reply.has_accepted()) {
      rendered.headers.emplace_back("Preference-Applied", "respond-async");
    }
    invoke_metrics_.Record(function_id, version, reply, rendered.status,
                           static_cast<double>(MonotonicUs() - start_us) / 1e6);
    return rendered;
  };
  // Refused before the chain, and counted like any other answer to an invocation.
  auto refuse = [&](std::string_view code, std::string_view detail) {
    v1::InvokeReply reply;
    *reply.mutable_problem() = core::MakeProblem(code, detail);
    HttpAnswer rendered = finish(reply, request_id);
    AnnotateAnswer(*span, rendered.status);
    answer(rendered, request_id, traceparent);
  };
  if (body.size() > options_.max_request_bytes) {
    return refuse("payload_too_large", "The request body is over " +
                                           std::to_string(options_.max_request_bytes) + " bytes.");
  }
  std::string key = ApiKeyFrom(request.authorization);
  std::string session;
  if (key.empty() && SessionRequested(request.csrf) && request.session) {
    if (!SameOrigin(request.origin, request.host)) {
      return refuse("forbidden",
                    "A browser session may invoke only from the Toolgate web app; scripts "
                    "send an API key in the Authorization header.");
    }
    if (!IsJsonContentType(request.content_type)) {
      return refuse("csrf_rejected", CsrfRejection(CsrfVerdict::kNotJson));
    }
    session = *request.session;
  }
  if (key.empty() && session.empty()) {
    return refuse("missing_api_key", "Send your API key in the Authorization header.");
  }
  int64_t max_cost = 0;
  if (request.max_cost && !ParseMaxCost(*request.max_cost, &max_cost)) {
    return refuse("bad_request", MaxCostRefusal());
  }
  std::string idempotency_key;
  if (!estimate && request.idempotency_key &&
      !ParseIdempotencyKey(*request.idempotency_key, &idempotency_key)) {
    return refuse("invalid_idempotency_key", IdempotencyKeyRefusal());
  }
  if (request.callback_url && !estimate) {
    // Billing judges where it may go (webhook::UrlRefusal under the operator's egress rules).
    if (!respond_async) {
      return refuse("invalid_callback_url",
                    "X-Callback-Url needs Prefer: respond-async: a synchronous call's answer is "
                    "its response.");
    }
    if (request.callback_url->empty() || request.callback_url->size() > kMaxCallbackUrlLength) {
      return refuse("invalid_callback_url", "X-Callback-Url must be a URL of 1 to " +
                                                std::to_string(kMaxCallbackUrlLength) +
                                                " characters.");
    }
  }
  InvokeBody parsed = ParseInvokeBody(body);

  v1::InvokeJob job;
  job.set_request_id(request_id);
  job.set_execution_id(NewUuid());
  if (!key.empty()) {
    job.set_api_key_sha256(Sha256(key));
  } else {
    job.set_session_token_sha256(Sha256(session));
  }
  job.set_function_id(function_id);
  job.set_version(version);
  job.set_body_check(parsed.check);
  job.set_event_json(std::move(parsed.event_json));
  if (request.env_keys) {
    job.set_env_keys_present(true);
    job.set_env_keys_header(*request.env_keys);
  }
  job.set_traceparent(traceparent);
  job.set_max_cost_micro_usd(max_cost);
  job.set_estimate_only(estimate);
  job.set_respond_async(respond_async);
  if (respond_async && request.callback_url) job.set_callback_url(*request.callback_url);
  if (!idempotency_key.empty()) {
    job.set_request_sha256(InvokeRequestDigest(
        function_id, version, request.env_keys ? &*request.env_keys : nullptr, body));
    job.set_idempotency_key(std::move(idempotency_key));
  }
  span->SetAttribute("faas.invocation_id", job.execution_id());
  DispatchInvoke(std::move(job), [answer = std::move(answer), span, request_id, traceparent,
                                  finish = std::move(finish)](v1::InvokeReply reply) {
    HttpAnswer rendered = finish(reply, request_id);
    AnnotateAnswer(*span, rendered.status);
    answer(rendered, request_id, traceparent);
  });
}

void EdgeServer::DispatchInvoke(v1::InvokeJob job, std::function<void(v1::InvokeReply)> done,
                                NoticeSink notices) {
  // The edge's own hop: the decision it took in place of auth and the registry.
  auto span =
      std::make_shared<trace::Span>(trace::ContinueOrStart(job.traceparent()), "edge.decide");
  core::AnnotateStageSpan(*span, job);
  decider_.Decide(std::move(job), [this, span, done = std::move(done),
                                   notices = std::move(notices)](v1::InvokeJob job,
                                                                 InvokeVerdict verdict) mutable {
    if (verdict.reply) return done(std::move(*verdict.reply));
    const int margin_ms = options_.settle_margin_ms;
    // Interim replies: the executor holds the job (wait for the version's timeout from now on),
    // or a notice of the running handler (passed on; the job is running, so likewise).
    auto dispatched = [margin_ms, notices = std::move(notices)](const bus::Message& m) {
      v1::InvokeReply reply;
      if (!reply.ParseFromString(m.data)) return 0;
      if (reply.has_dispatched()) return reply.dispatched().timeout_ms() + margin_ms;
      if (!reply.has_notice()) return 0;
      if (notices) notices(reply.notice());
      return reply.notice().timeout_ms() + margin_ms;
    };
    const int64_t key_expires_at_ms = job.principal().key_expires_at_ms();
    std::string reply = mux_.Expect(
        options_.chain_timeout_ms,
        [done = std::move(done), request_id = job.request_id(),
         key_expires_at_ms](Result<bus::Message> answer) {
          v1::InvokeReply reply;
          if (!answer.ok()) {
            log::Warn("bus request failed")
                .Str("request_id", request_id)
                .Str("error", answer.status().ToString());
            *reply.mutable_problem() = BusFailureProblem(answer.status());
            reply.set_key_expires_at_ms(key_expires_at_ms);
          } else if (!reply.ParseFromString(answer->data)) {
            *reply.mutable_problem() = BusFailureProblem(Status::Internal("malformed InvokeReply"));
            reply.set_key_expires_at_ms(key_expires_at_ms);
          }
          done(std::move(reply));
        },
        dispatched);
    job.set_edge_reply(reply);
    const std::string traceparent = span->traceparent();
    job.set_traceparent(traceparent);
    core::RecordHop(job, *span);
    // Coalesced: jobs decided on other threads while one is written, or in the same pass of the
    // front, go with it in one message. One that cannot be sent is answered at once.
    bus::Outgoing out{verdict.next_subject, job.SerializeAsString(), reply, traceparent};
    out.unsent = [this, reply](const Status& s) { mux_.Cancel(reply, s); };
    Status s = bus_.PublishCoalesced(verdict.next_subject, std::move(out));
    if (!s.ok()) mux_.Cancel(reply, s);
  });
}

void EdgeServer::McpFromFront(FrontRequest request, FrontRespond respond, FrontRespond part,
                              const std::string& request_id,
                              const std::vector<std::string>& segments) {
  const RequestHead& head = request.head;
  auto optional = [&head](const char* name) -> std::optional<std::string> {
    if (const std::string* value = head.Find(name)) return *value;
    return std::nullopt;
  };
  std::string parent = head.Value("traceparent");
  if (parent.empty()) parent = MetaTraceparent(request.body);
  auto span = std::make_shared<trace::Span>(trace::ContinueOrStart(parent), "edge.mcp");
  McpHttpRequest r;
  r.method = head.method;
  r.workspace = segments.size() == 1;
  if (!r.workspace) {
    r.function_id = segments[2];
    if (segments.size() == 4) r.version = segments[3];
  }
  r.api_key = ApiKeyFrom(head.Value("authorization"));
  r.origin = head.Value("origin");
  r.host = head.Value("host");
  r.public_base = PublicBase(options_.public_url, r.host);
  r.accept = optional("accept");
  r.content_type = optional("content-type");
  r.session_id = optional("mcp-session-id");
  r.protocol_version = optional("mcp-protocol-version");
  r.mcp_method = optional("mcp-method");
  r.mcp_name = optional("mcp-name");
  r.env_keys = optional("x-env-keys");
  r.max_cost = optional("x-toolgate-max-cost");
  r.body = std::move(request.body);
  r.request_id = request_id;
  r.traceparent = span->traceparent();
  auto responder = std::make_shared<FrontMcpResponder>(
      std::move(respond), std::move(part), head.KeepAlive(), request_id, span->traceparent());
  mcp_.Handle(
      std::move(r), [responder, span](HttpAnswer answer) { responder->Answer(answer); },
      [responder](std::string json) { responder->Event(json); });
}

void EdgeServer::HandleMcp(const Http::Request& request, Writer writer,
                           const std::string& request_id,
                           const std::vector<std::string>& segments) {
  // /mcp, /mcp/functions/{function_id} or /mcp/functions/{function_id}/{version}
  const bool workspace = segments.size() == 1;
  if (!workspace && (segments.size() < 3 || segments.size() > 4 || segments[1] != "functions")) {
    return SendProblem(*writer, "not_found",
                       "The MCP endpoints are /mcp and /mcp/functions/{function_id}[/{version}].",
                       request_id);
  }
  // The trace of the traceparent header, else of the request's _meta (2026-07-28 clients).
  std::string parent = HeaderValue(request, "traceparent");
  if (parent.empty()) parent = MetaTraceparent(request.body());
  auto span = std::make_shared<trace::Span>(trace::ContinueOrStart(parent), "edge.mcp");
  McpHttpRequest r;
  r.method = Http::methodString(request.method());
  r.workspace = workspace;
  if (!workspace) {
    r.function_id = segments[2];
    if (segments.size() == 4) r.version = segments[3];
  }
  r.api_key = ApiKeyFrom(HeaderValue(request, "Authorization"));
  r.origin = HeaderValue(request, "Origin");
  r.host = HeaderValue(request, "Host");
  r.public_base = PublicBase(options_.public_url, r.host);
  r.accept = OptionalHeader(request, "Accept");
  r.content_type = OptionalHeader(request, "Content-Type");
  r.session_id = OptionalHeader(request, "Mcp-Session-Id");
  r.protocol_version = OptionalHeader(request, "MCP-Protocol-Version");
  r.mcp_method = OptionalHeader(request, "Mcp-Method");
  r.mcp_name = OptionalHeader(request, "Mcp-Name");
  r.env_keys = OptionalHeader(request, "X-Env-Keys");
  r.max_cost = OptionalHeader(request, "X-Toolgate-Max-Cost");
  r.body = request.body();
  r.request_id = request_id;
  r.traceparent = span->traceparent();
  auto responder = std::make_shared<PistacheMcpResponder>(writer, request_id, span->traceparent());
  mcp_.Handle(
      std::move(r), [responder, span](HttpAnswer answer) { responder->Answer(std::move(answer)); },
      [responder](std::string json) { responder->Event(json); }, /*live=*/false);
}

void EdgeServer::HandleOAuth(const Http::Request& request, Writer writer,
                             const std::string& request_id,
                             const std::vector<std::string>& segments, const std::string& client) {
  const std::string& path = request.resource();
  const Http::Method method = request.method();
  const std::string base = PublicBase(options_.public_url, HeaderValue(request, "Host"));
  // Discovery, registration, the token and revocation endpoints are called from browser-based
  // clients too (RFC 8414 §3, RFC 9728 §3): any origin may read them. None takes a cookie, so
  // CORS gives a page nothing a script elsewhere could not get. /oauth/authorize is a browser
  // navigation and gets no CORS.
  const bool cross_origin = !(segments.size() == 2 && segments[1] == "authorize");
  auto with_cors = [cross_origin](HttpAnswer a) {
    if (cross_origin) {
      a.headers.emplace_back("Access-Control-Allow-Origin", "*");
      a.headers.emplace_back("Access-Control-Expose-Headers", "WWW-Authenticate");
    }
    return a;
  };
  if (method == Http::Method::Options && cross_origin) {
    HttpAnswer a;
    a.status = 204;
    a.content_type.clear();
    a.headers.emplace_back("Access-Control-Allow-Methods", "GET, POST, OPTIONS");
    a.headers.emplace_back("Access-Control-Allow-Headers",
                           "Authorization, Content-Type, MCP-Protocol-Version");
    a.headers.emplace_back("Access-Control-Max-Age", "86400");
    return Send(*writer, with_cors(std::move(a)), request_id);
  }
  std::string auth_path;
  if (segments[0] == ".well-known") {
    if (method != Http::Method::Get && method != Http::Method::Head) {
      return SendProblem(*writer, "method_not_allowed", "Metadata is read with GET.", request_id);
    }
    if (auto endpoint = EndpointOfMetadataPath(path)) {
      HttpAnswer a;
      a.body = ProtectedResourceMetadata(base, *endpoint);
      a.headers.emplace_back("Cache-Control", "max-age=3600");
      return Send(*writer, with_cors(std::move(a)), request_id);
    }
    if (path == "/.well-known/oauth-authorization-server" ||
        path == "/.well-known/openid-configuration") {
      auth_path = "/oauth/metadata";
    }
  } else if (segments.size() == 2 && (segments[1] == "authorize" || segments[1] == "token" ||
                                      segments[1] == "register" || segments[1] == "revoke")) {
    auth_path = path;
  }
  if (auth_path.empty()) {
    return SendProblem(*writer, "not_found", "No such route.", request_id);
  }
  constexpr size_t kMaxOAuthBody = 64 * 1024;
  if (request.body().size() > kMaxOAuthBody) {
    return SendProblem(*writer, "payload_too_large", "The request body is too large.", request_id);
  }
  auto http = std::make_shared<v1::HttpRequest>();
  http->set_method(Http::methodString(method));
  http->set_path(auth_path);
  http->set_request_id(request_id);
  http->set_body(request.body());
  for (auto it = request.query().parameters_begin(); it != request.query().parameters_end(); ++it) {
    (*http->mutable_query())[PercentDecode(it->first)] = PercentDecode(it->second);
  }
  for (const char* name : {"Content-Type", "Origin", "Accept", "Host"}) {
    if (HasHeader(request, name)) {
      std::string lower = name;
      for (char& c : lower) c = static_cast<char>(std::tolower(c));
      (*http->mutable_headers())[lower] = HeaderValue(request, name);
    }
  }
  // The token and revocation endpoints authenticate confidential clients with Basic credentials.
  if (auth_path == "/oauth/token" || auth_path == "/oauth/revoke") {
    if (HasHeader(request, "Authorization")) {
      (*http->mutable_headers())["authorization"] = HeaderValue(request, "Authorization");
    }
  }
  (*http->mutable_headers())[std::string(core::kClientAddressHeader)] = client;
  // The issuer and resource origin auth answers with: the edge's public URL, or its Host.
  (*http->mutable_headers())[std::string(core::kPublicBaseHeader)] = base;
  mux_.Request(
      core::HttpSubject("auth"), http->SerializeAsString(), "", options_.management_timeout_ms,
      [writer, request_id, with_cors](Result<bus::Message> answer) {
        if (!answer.ok()) return SendBusFailure(*writer, answer.status(), request_id);
        v1::HttpResponse response;
        if (!response.ParseFromString(answer->data)) {
          return SendProblem(*writer, "internal_error", "Malformed answer on the bus.", request_id);
        }
        Send(*writer, with_cors(RenderHttpResponse(response, request_id)), request_id);
      });
}

bool EdgeServer::ListAfterPublish(const v1::HttpRequest& http, const v1::HttpResponse& response,
                                  const McpListingFiller::Publisher& publisher, Writer writer) {
  // POST /functions/{id}/versions answered 201 with {"version", "mcp": true, ...}.
  auto segments = core::SplitPath(http.path());
  if (http.method() != "POST" || response.status() != 201 || segments.size() != 3 ||
      segments[0] != "functions" || segments[2] != "versions") {
    return false;
  }
  auto doc = ParseJson(response.body());
  simdjson::dom::object obj;
  std::string version;
  bool mcp = false;
  if (!doc.ok() || doc->root.get_object().get(obj) != simdjson::SUCCESS ||
      GetString(obj, "version", &version) != Field::kOk ||
      GetBool(obj, "mcp", &mcp) != Field::kOk || !mcp) {
    return false;
  }
  // The publisher learns whether its version lists without running (and its runs are on its
  // ledger before the answer, like any call's).
  mcp_listings_.Fill(segments[1], version, publisher, http.request_id(), "",
                     [writer, answer = v1::HttpResponse(response),
                      request_id = http.request_id()](bool stored) mutable {
                       answer.set_body(WithMember(answer.body(), "mcp_listing",
                                                  stored ? R"("stored")" : R"("unavailable")"));
                       Send(*writer, RenderHttpResponse(answer, request_id), request_id);
                     });
  return true;
}

void EdgeServer::HandleManagement(const Http::Request& request, Writer writer,
                                  const std::string& request_id, const std::string& path,
                                  const std::string& client) {
  auto segments = core::SplitPath(path);
  std::string owner = OwnerOf(segments);
  if (owner.empty()) {
    return SendProblem(*writer, "not_found", "No such route; see /api/v1/openapi.json.",
                       request_id);
  }
  const std::string method = Http::methodString(request.method());
  const size_t body_limit = IsUploadRoute(method, "/api/v1" + path)
                                ? std::max(options_.max_upload_bytes, options_.max_request_bytes)
                                : options_.max_request_bytes;
  if (request.body().size() > body_limit) {
    return SendProblem(*writer, "payload_too_large", "The request body is too large.", request_id);
  }
  std::string key = ApiKeyFrom(HeaderValue(request, "Authorization"));
  std::string session;
  if (request.cookies().has("tg_session")) session = request.cookies().get("tg_session").value;
  const std::string csrf_header = HeaderValue(request, kCsrfHeader);
  const std::string origin = HeaderValue(request, "Origin");
  const std::string host = HeaderValue(request, "Host");
  const std::string content_type = HeaderValue(request, "Content-Type");
  CsrfRequest csrf{.method = method,
                   .path = path,
                   .has_api_key = !key.empty(),
                   .has_session_cookie = !session.empty(),
                   .csrf_header = csrf_header,
                   .origin = origin,
                   .host = host,
                   .content_type = content_type,
                   .has_body = !request.body().empty()};
  if (CsrfVerdict verdict = CheckCsrf(csrf, options_.app_origins); verdict != CsrfVerdict::kAllow) {
    log::Warn("cross-site request refused")
        .Str("request_id", request_id)
        .Str("method", method)
        .Str("path", path)
        .Str("origin", origin);
    return SendProblem(*writer, "csrf_rejected", CsrfRejection(verdict), request_id);
  }
  auto http = std::make_shared<v1::HttpRequest>();
  http->set_method(method);
  http->set_path(path);
  http->set_request_id(request_id);
  http->set_body(request.body());
  for (auto it = request.query().parameters_begin(); it != request.query().parameters_end(); ++it) {
    (*http->mutable_query())[PercentDecode(it->first)] = PercentDecode(it->second);
  }
  for (const char* name : {"Idempotency-Key", "Content-Type", "Origin", "Accept", "Host"}) {
    if (HasHeader(request, name)) {
      std::string lower = name;
      for (char& c : lower) c = static_cast<char>(std::tolower(c));
      (*http->mutable_headers())[lower] = HeaderValue(request, name);
    }
  }
  // A payment provider's webhook: billing verifies the signature over the raw body forwarded
  // above, byte for byte.
  if (path == "/billing/webhooks/stripe" && HasHeader(request, "Stripe-Signature")) {
    (*http->mutable_headers())["stripe-signature"] = HeaderValue(request, "Stripe-Signature");
  }

  (*http->mutable_headers())[std::string(core::kClientAddressHeader)] = client;
  // Where billing sends payers back from a checkout page: the edge's public URL, or its Host.
  if (owner == "billing") {
    (*http->mutable_headers())[std::string(core::kPublicBaseHeader)] =
        PublicBase(options_.public_url, host);
  }

  v1::AuthenticateRequest auth;
  if (!key.empty()) {
    auth.set_api_key_sha256(Sha256(key));
  } else if (!session.empty()) {
    auth.set_session_token_sha256(Sha256(session));
  }
  if (path == "/auth/logout") http->set_session_token(session);
  bool key_given = !key.empty();
  const int timeout = options_.management_timeout_ms;

  McpListingFiller::Publisher publisher{auth.api_key_sha256(), auth.session_token_sha256()};
  auto forward = [this, writer, request_id, owner, http, timeout, publisher]() {
    mux_.Request(
        core::HttpSubject(owner), http->SerializeAsString(), "", timeout,
        [this, writer, request_id, owner, http, publisher](Result<bus::Message> answer) {
          if (!answer.ok()) return SendBusFailure(*writer, answer.status(), request_id);
          v1::HttpResponse response;
          if (!response.ParseFromString(answer->data)) {
            return SendProblem(*writer, "internal_error", "Malformed answer on the bus.",
                               request_id);
          }
          if (response.status() < 400) {
            decision_caches_.ForgetChangedBy(owner, http->method(), core::SplitPath(http->path()),
                                             http->principal().org_id());
          }
          if (owner == "registry" && ListAfterPublish(*http, response, publisher, writer)) {
            return;  // answered once the listing is done
          }
          Send(*writer, RenderHttpResponse(response, request_id), request_id);
        });
  };
  if (key.empty() && session.empty()) return forward();

  mux_.Request(core::kAuthenticateSubject, auth.SerializeAsString(), "", timeout,
               [writer, request_id, http, forward, key_given](Result<bus::Message> answer) {
                 if (!answer.ok()) return SendBusFailure(*writer, answer.status(), request_id);
                 v1::AuthenticateReply reply;
                 if (!reply.ParseFromString(answer->data)) {
                   return SendProblem(*writer, "internal_error", "Malformed answer on the bus.",
                                      request_id);
                 }
                 if (reply.has_problem()) {
                   // A bad key is an error; a stale session cookie just means "signed out", so
                   // that signup and login keep working with an old cookie in the browser.
                   if (key_given) {
                     return Send(*writer, RenderProblem(reply.problem(), request_id), request_id);
                   }
                 } else {
                   http->set_authenticated(true);
                   *http->mutable_principal() = reply.principal();
                 }
                 forward();
               });
}

void EdgeServer::HandleHealth(Writer writer, const std::string& request_id) {
  static const std::vector<std::string> kServices = {"auth", "registry", "secrets", "billing",
                                                     "executor"};
  struct Round {
    std::mutex mu;
    size_t remaining = kServices.size();
    std::vector<std::string> missing;
  };
  auto round = std::make_shared<Round>();
  for (const auto& name : kServices) {
    mux_.Request(core::HealthSubject(name), "", "", options_.health_timeout_ms,
                 [round, writer, request_id, name](Result<bus::Message> answer) {
                   std::lock_guard<std::mutex> lock(round->mu);
                   if (!answer.ok()) round->missing.push_back(name);
                   if (--round->remaining > 0) return;
                   JsonWriter w;
                   w.BeginObject().Field("status", round->missing.empty() ? "ok" : "unavailable");
                   w.Key("missing").BeginArray();
                   for (const auto& m : round->missing) w.String(m);
                   w.EndArray().EndObject();
                   HttpAnswer a;
                   a.status = round->missing.empty() ? 200 : 503;
                   a.body = w.Take();
                   Send(*writer, a, request_id);
                 });
  }
}

}  // namespace toolgate::edge
