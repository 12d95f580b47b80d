#include "mcp_protocol.h"

#include <algorithm>
#include <cctype>

#include "toolgate/base/json.h"
#include "toolgate/base/json_writer.h"
#include "toolgate/base/strings.h"
#include "toolgate/core/event_depth.h"
#include "toolgate/core/problem.h"

namespace toolgate::edge {
namespace {

// The q value of a media range's parameters ("q=0.5; level=1"); 1 when absent. Only whether it
// is zero matters here, so any number other than zero reads as acceptable.
bool QualityIsZero(std::string_view params) {
  while (!params.empty()) {
    size_t semi = params.find(';');
    std::string_view param = TrimBlanks(params.substr(0, semi));
    params = semi == std::string_view::npos ? std::string_view() : params.substr(semi + 1);
    if (param.size() < 2 || (param[0] != 'q' && param[0] != 'Q') || param[1] != '=') continue;
    std::string_view value = param.substr(2);
    return !value.empty() && value.find_first_not_of("0.") == std::string_view::npos;
  }
  return false;
}

v1::Problem BadMessage(std::string_view detail) {
  return core::MakeProblem("bad_request", detail);
}

std::string NestsTooDeeply() {
  return "nests deeper than " + std::to_string(core::kMaxEventDepth) +
         " levels of arrays and objects, the most an invocation's event may; send flatter "
         "arguments.";
}

// Whether e nests more than `limit` levels of arrays and objects. Looks no deeper than the limit,
// so the recursion stays within limit + 1 frames.
bool NestsDeeperThan(simdjson::dom::element e, size_t limit) {
  simdjson::dom::array array;
  simdjson::dom::object object;
  if (e.get_array().get(array) == simdjson::SUCCESS) {
    if (limit == 0) return true;
    for (simdjson::dom::element child : array) {
      if (NestsDeeperThan(child, limit - 1)) return true;
    }
  } else if (e.get_object().get(object) == simdjson::SUCCESS) {
    if (limit == 0) return true;
    for (simdjson::dom::key_value_pair field : object) {
      if (NestsDeeperThan(field.value, limit - 1)) return true;
    }
  }
  return false;
}

}  // namespace

bool IsSupportedMcpRevision(std::string_view revision) {
  return std::find(kMcpRevisions.begin(), kMcpRevisions.end(), revision) != kMcpRevisions.end();
}

std::string_view NegotiateMcpRevision(std::string_view asked) {
  for (std::string_view r : kMcpRevisions) {
    if (r == asked) return r;
  }
  return kLatestMcpRevision;
}

bool AcceptsMediaType(std::string_view accept, std::string_view media_type) {
  if (TrimBlanks(accept).empty()) return true;
  const std::string wanted = AsciiLower(media_type);
  const std::string wanted_type = wanted.substr(0, wanted.find('/'));
  int best = 0;  // specificity of the best match so far: 3 exact, 2 type/*, 1 */*
  bool accepted = false;
  while (!accept.empty()) {
    size_t comma = accept.find(',');
    std::string_view item = accept.substr(0, comma);
    accept = comma == std::string_view::npos ? std::string_view() : accept.substr(comma + 1);
    size_t semi = item.find(';');
    std::string range = AsciiLower(TrimBlanks(item.substr(0, semi)));
    std::string_view params =
        semi == std::string_view::npos ? std::string_view() : item.substr(semi + 1);
    int specificity = 0;
    if (range == wanted) {
      specificity = 3;
    } else if (range == wanted_type + "/*") {
      specificity = 2;
    } else if (range == "*/*") {
      specificity = 1;
    }
    if (specificity > best) {
      best = specificity;
      accepted = !QualityIsZero(params);
    }
  }
  return accepted;
}

bool AcceptsMcpAnswers(std::string_view accept, std::string_view revision) {
  if (!AcceptsMediaType(accept, "application/json")) return false;
  return revision < "2025-03-26" || AcceptsMediaType(accept, "text/event-stream");
}

bool IsJsonContentType(std::string_view content_type) {
  return AsciiLower(TrimBlanks(content_type.substr(0, content_type.find(';')))) ==
         "application/json";
}

std::variant<McpMessage, v1::Problem> ParseMcpMessage(std::string_view body) {
  auto doc = ParseJson(body);
  // ParseJson's message is simdjson's own.
  if (!doc.ok() && doc.status().message() == simdjson::error_message(simdjson::DEPTH_ERROR)) {
    return core::MakeProblem("invalid_event", "The message " + NestsTooDeeply());
  }
  if (!doc.ok()) {
    return core::MakeProblem("invalid_json",
                             "The body is not valid JSON; send one JSON-RPC 2.0 "
                             "message.");
  }
  if (doc->root.is_array()) {
    return BadMessage("Send one JSON-RPC message per POST; batches are not supported.");
  }
  simdjson::dom::object obj;
  if (doc->root.get_object().get(obj) != simdjson::SUCCESS) {
    return BadMessage("The body must be one JSON-RPC 2.0 message: a JSON object.");
  }
  std::string jsonrpc;
  if (GetString(obj, "jsonrpc", &jsonrpc) != Field::kOk || jsonrpc != "2.0") {
    return BadMessage("\"jsonrpc\" must be \"2.0\".");
  }
  McpMessage m;
  m.too_deep = NestsDeeperThan(doc->root, core::kMaxEventDepth);
  simdjson::dom::element id;
  const bool has_id = obj["id"].get(id) == simdjson::SUCCESS;
  if (has_id && !id.is_string() && !id.is_int64() && !id.is_uint64() && !id.is_double()) {
    return BadMessage("\"id\" must be a string or a number.");
  }
  if (has_id) m.id_json = ToJson(id);
  simdjson::dom::element params;
  if (obj["params"].get(params) == simdjson::SUCCESS) m.params_json = ToJson(params);

  switch (GetString(obj, "method", &m.method)) {
    case Field::kOk:
      m.kind = has_id ? McpMessage::Kind::kRequest : McpMessage::Kind::kNotification;
      return m;
    case Field::kWrongType:
      return BadMessage("\"method\" must be a string.");
    case Field::kAbsent:
      break;
  }
  simdjson::dom::element unused;
  if (has_id && (obj["result"].get(unused) == simdjson::SUCCESS ||
                 obj["error"].get(unused) == simdjson::SUCCESS)) {
    m.kind = McpMessage::Kind::kResponse;
    return m;
  }
  return BadMessage("The body is neither a JSON-RPC request, a notification nor a response.");
}

std::string ParamString(const McpMessage& message, std::string_view key) {
  if (message.params_json.empty()) return {};
  auto doc = ParseJson(message.params_json);
  simdjson::dom::object obj;
  std::string out;
  if (doc.ok() && doc->root.get_object().get(obj) == simdjson::SUCCESS) {
    GetString(obj, key, &out);
  }
  return out;
}

std::string ParamJson(const McpMessage& message, std::string_view key) {
  if (message.params_json.empty()) return {};
  auto doc = ParseJson(message.params_json);
  simdjson::dom::object obj;
  std::string out;
  if (doc.ok() && doc->root.get_object().get(obj) == simdjson::SUCCESS) GetRaw(obj, key, &out);
  return out;
}

std::string TooDeepMessage() {
  return "Invalid params: the message " + NestsTooDeeply();
}

std::string JsonRpcResult(std::string_view id_json, std::string_view result_json) {
  JsonWriter w;
  w.BeginObject().Field("jsonrpc", "2.0").Key("id").Raw(id_json).Key("result").Raw(result_json);
  return w.EndObject().Take();
}

std::string JsonRpcError(std::string_view id_json, int code, std::string_view message,
                         std::string_view data_json) {
  JsonWriter w;
  w.BeginObject().Field("jsonrpc", "2.0").Key("id").Raw(id_json.empty() ? "null" : id_json);
  w.Key("error").BeginObject().Field("code", code).Field("message", message);
  if (!data_json.empty()) w.Key("data").Raw(data_json);
  return w.EndObject().EndObject().Take();
}

std::string WithParamsMeta(std::string_view request_json, std::string_view key,
                           std::string_view value_json) {
  auto doc = ParseJson(request_json);
  simdjson::dom::object obj;
  if (!doc.ok() || doc->root.get_object().get(obj) != simdjson::SUCCESS) {
    return std::string(request_json);
  }
  std::string params = "{}", meta = "{}";
  simdjson::dom::element e;
  if (obj["params"].get(e) == simdjson::SUCCESS && e.is_object()) {
    params = ToJson(e);
    simdjson::dom::element m;
    if (e["_meta"].get(m) == simdjson::SUCCESS && m.is_object()) meta = ToJson(m);
  }
  return WithMember(request_json, "params",
                    WithMember(params, "_meta", WithMember(meta, key, value_json)));
}

InputRequests InputRequestsOf(std::string_view response,
                              std::string_view client_capabilities_json) {
  constexpr size_t kMaxInputRequests = 16;
  InputRequests out;
  auto doc = ParseJson(response);
  simdjson::dom::element requests;
  simdjson::dom::object inputs;
  if (!doc.ok() || doc->root["result"]["inputRequests"].get(requests) != simdjson::SUCCESS ||
      requests.get_object().get(inputs) != simdjson::SUCCESS || inputs.size() == 0) {
    out.error = "The tool asked for input without saying what (result.inputRequests).";
    return out;
  }
  if (inputs.size() > kMaxInputRequests) {
    out.error = "The tool asked for more than 16 inputs at once.";
    return out;
  }
  auto caps_doc = ParseJson(client_capabilities_json.empty() ? "{}" : client_capabilities_json);
  for (simdjson::dom::key_value_pair field : inputs) {
    InputRequest r;
    r.key = std::string(field.key);
    simdjson::dom::object request;
    simdjson::dom::element params;
    if (field.value.get_object().get(request) != simdjson::SUCCESS ||
        GetString(request, "method", &r.method) != Field::kOk) {
      out.error = "Input request \"" + r.key + "\" names no method.";
      return out;
    }
    r.params_json = request["params"].get(params) == simdjson::SUCCESS ? ToJson(params) : "{}";
    const std::string_view capability = r.method == "sampling/createMessage" ? "sampling"
                                        : r.method == "elicitation/create"   ? "elicitation"
                                        : r.method == "roots/list"           ? "roots"
                                                                             : "";
    simdjson::dom::element declared;
    if (capability.empty()) {
      out.error = "The tool asked the client for " + r.method + ", which cannot be asked.";
      return out;
    }
    if (!caps_doc.ok() || caps_doc->root[capability].get(declared) != simdjson::SUCCESS) {
      out.error = "The tool needs the client's " + std::string(capability) +
                  " capability, which this session's client did not declare.";
      return out;
    }
    out.requests.push_back(std::move(r));
  }
  return out;
}

bool IsResponseTo(std::string_view body, std::string_view id_json) {
  auto doc = ParseJson(body);
  simdjson::dom::object obj;
  if (!doc.ok() || doc->root.get_object().get(obj) != simdjson::SUCCESS) return false;
  std::string jsonrpc;
  simdjson::dom::element id, unused;
  if (GetString(obj, "jsonrpc", &jsonrpc) != Field::kOk || jsonrpc != "2.0") return false;
  if (obj["id"].get(id) != simdjson::SUCCESS || ToJson(id) != id_json) return false;
  const bool has_result = obj["result"].get(unused) == simdjson::SUCCESS;
  const bool has_error = obj["error"].get(unused) == simdjson::SUCCESS;
  return has_result != has_error;
}

std::string InitializeResultRevision(std::string_view body) {
  auto doc = ParseJson(body);
  simdjson::dom::object obj, result;
  std::string revision;
  if (doc.ok() && doc->root.get_object().get(obj) == simdjson::SUCCESS &&
      obj["result"].get_object().get(result) == simdjson::SUCCESS) {
    GetString(result, "protocolVersion", &revision);
  }
  return revision;
}

}  // namespace toolgate::edge
