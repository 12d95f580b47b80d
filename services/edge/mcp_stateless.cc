#include "mcp_stateless.h"

#include <algorithm>

#include "toolgate/base/crypto.h"
#include "toolgate/base/json.h"
#include "toolgate/base/json_writer.h"

namespace toolgate::edge {
namespace {

constexpr std::string_view kBase64Open = "=?base64?";
constexpr std::string_view kBase64Close = "?=";

McpRefusal Refuse(const McpMessage& m, int code, std::string_view message,
                  std::string_view data_json = {}) {
  return {400, JsonRpcError(m.id_json, code, message, data_json)};
}

// The value of an Mcp-Name header as the body would hold it: the base64 form decoded.
std::optional<std::string> DecodeHeaderValue(std::string_view value) {
  if (value.size() >= kBase64Open.size() + kBase64Close.size() && value.starts_with(kBase64Open) &&
      value.ends_with(kBase64Close)) {
    std::string out;
    value =
        value.substr(kBase64Open.size(), value.size() - kBase64Open.size() - kBase64Close.size());
    if (!Base64Decode(value, &out)) return std::nullopt;
    return out;
  }
  return std::string(value);
}

// The body member Mcp-Name mirrors for method, or "" when it mirrors none.
std::string_view NameSource(std::string_view method) {
  if (method == "tools/call" || method == "prompts/get") return "name";
  if (method == "resources/read") return "uri";
  return {};
}

std::optional<simdjson::dom::object> ObjectMember(simdjson::dom::object obj, std::string_view key) {
  simdjson::dom::object out;
  if (obj[key].get_object().get(out) != simdjson::SUCCESS) return std::nullopt;
  return out;
}

}  // namespace

bool IsStatelessMcpRevision(std::string_view revision) {
  return std::find(kStatelessMcpRevisions.begin(), kStatelessMcpRevisions.end(), revision) !=
         kStatelessMcpRevisions.end();
}

RequestMeta ReadRequestMeta(const McpMessage& message) {
  RequestMeta meta;
  if (message.params_json.empty()) return meta;
  auto doc = ParseJson(message.params_json);
  simdjson::dom::object params;
  if (!doc.ok() || doc->root.get_object().get(params) != simdjson::SUCCESS) return meta;
  auto m = ObjectMember(params, "_meta");
  if (!m) return meta;
  std::string version;
  if (GetString(*m, kMetaProtocolVersion, &version) == Field::kOk) meta.protocol_version = version;
  meta.has_client_capabilities = ObjectMember(*m, kMetaClientCapabilities).has_value();
  GetString(*m, "traceparent", &meta.traceparent);
  return meta;
}

std::string MetaTraceparent(std::string_view body) {
  if (body.find("\"traceparent\"") == std::string_view::npos) return {};
  auto parsed = ParseMcpMessage(body);
  const auto* message = std::get_if<McpMessage>(&parsed);
  return message ? ReadRequestMeta(*message).traceparent : std::string();
}

bool IsStatelessRequest(const RequestMeta& meta,
                        const std::optional<std::string>& protocol_version_header,
                        bool has_session_header) {
  if (meta.protocol_version) return true;
  if (has_session_header || !protocol_version_header) return false;
  return !IsSupportedMcpRevision(*protocol_version_header);
}

std::optional<McpRefusal> CheckStatelessRequest(const McpMessage& m, const RequestMeta& meta,
                                                const MirroredHeaders& headers) {
  if (!meta.protocol_version || !meta.has_client_capabilities) {
    return Refuse(m, kJsonRpcInvalidParams,
                  "Invalid params: every request of this protocol revision carries params._meta "
                  "with \"" +
                      std::string(kMetaProtocolVersion) + "\" and \"" +
                      std::string(kMetaClientCapabilities) + "\"");
  }
  const std::string& version = *meta.protocol_version;
  if (!headers.protocol_version) {
    return Refuse(m, kJsonRpcHeaderMismatch,
                  "Header mismatch: the MCP-Protocol-Version header is required");
  }
  if (*headers.protocol_version != version) {
    return Refuse(m, kJsonRpcHeaderMismatch,
                  "Header mismatch: MCP-Protocol-Version header value '" +
                      *headers.protocol_version + "' does not match body value '" + version + "'");
  }
  if (!IsStatelessMcpRevision(version)) {
    JsonWriter data;
    data.BeginObject().Key("supported").Raw(SupportedRevisionsJson());
    data.Field("requested", version).EndObject();
    return Refuse(m, kJsonRpcUnsupportedProtocolVersion, "Unsupported protocol version: " + version,
                  data.str());
  }
  if (!headers.method) {
    return Refuse(m, kJsonRpcHeaderMismatch, "Header mismatch: the Mcp-Method header is required");
  }
  if (*headers.method != m.method) {
    return Refuse(m, kJsonRpcHeaderMismatch,
                  "Header mismatch: Mcp-Method header value '" + *headers.method +
                      "' does not match body value '" + m.method + "'");
  }
  std::string_view source = NameSource(m.method);
  if (source.empty()) return std::nullopt;
  std::string body_name = ParamString(m, source);
  if (body_name.empty() && !headers.name) return std::nullopt;  // the handler refuses the params
  if (!headers.name) {
    return Refuse(m, kJsonRpcHeaderMismatch,
                  "Header mismatch: the Mcp-Name header is required for " + m.method);
  }
  auto decoded = DecodeHeaderValue(*headers.name);
  if (!decoded) {
    return Refuse(m, kJsonRpcHeaderMismatch,
                  "Header mismatch: the Mcp-Name header is not valid base64 inside =?base64?...?=");
  }
  if (*decoded != body_name) {
    return Refuse(
        m, kJsonRpcHeaderMismatch,
        "Header mismatch: Mcp-Name header value does not match params." + std::string(source));
  }
  return std::nullopt;
}

int StatelessHttpStatus(std::string_view response_body) {
  auto doc = ParseJson(response_body);
  simdjson::dom::object obj, error;
  int64_t code = 0;
  if (!doc.ok() || doc->root.get_object().get(obj) != simdjson::SUCCESS ||
      obj["error"].get_object().get(error) != simdjson::SUCCESS ||
      GetInt(error, "code", &code) != Field::kOk) {
    return 200;
  }
  switch (code) {
    case kJsonRpcMethodNotFound:
      return 404;
    case -32700:
    case -32600:
    case kJsonRpcHeaderMismatch:
    case kJsonRpcMissingClientCapability:
    case kJsonRpcUnsupportedProtocolVersion:
      return 400;
    default:
      return 200;
  }
}

std::string SupportedRevisionsJson() {
  JsonWriter w;
  w.BeginArray();
  for (auto it = kStatelessMcpRevisions.rbegin(); it != kStatelessMcpRevisions.rend(); ++it) {
    w.String(*it);
  }
  for (auto it = kMcpRevisions.rbegin(); it != kMcpRevisions.rend(); ++it) w.String(*it);
  return w.EndArray().Take();
}

std::string WithResultType(std::string body) {
  auto doc = ParseJson(body);
  simdjson::dom::object obj, result;
  simdjson::dom::element unused;
  if (!doc.ok() || doc->root.get_object().get(obj) != simdjson::SUCCESS ||
      obj["result"].get_object().get(result) != simdjson::SUCCESS ||
      result["resultType"].get(unused) == simdjson::SUCCESS) {
    return body;
  }
  return WithNestedMember(body, "result", "resultType", "\"complete\"");
}

std::optional<std::string> NestedString(std::string_view json, std::string_view outer,
                                        std::string_view member) {
  auto doc = ParseJson(json);
  simdjson::dom::object obj;
  if (!doc.ok() || doc->root.get_object().get(obj) != simdjson::SUCCESS) return std::nullopt;
  auto inner = ObjectMember(obj, outer);
  std::string out;
  if (!inner || GetString(*inner, member, &out) != Field::kOk) return std::nullopt;
  return out;
}

std::string WithNestedMember(std::string_view json, std::string_view outer, std::string_view member,
                             std::string_view value_json) {
  auto doc = ParseJson(json);
  simdjson::dom::object obj;
  if (!doc.ok() || doc->root.get_object().get(obj) != simdjson::SUCCESS) return std::string(json);
  simdjson::dom::element inner;
  if (obj[outer].get(inner) != simdjson::SUCCESS || !inner.is_object()) return std::string(json);
  return WithMember(json, outer, WithMember(ToJson(inner), member, value_json));
}

}  // namespace toolgate::edge
