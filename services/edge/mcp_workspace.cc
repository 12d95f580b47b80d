#include "mcp_workspace.h"

#include <algorithm>
#include <cctype>
#include <unordered_set>

#include "toolgate/base/json.h"
#include "toolgate/base/json_writer.h"
#include "toolgate/base/strings.h"
#include "toolgate/core/env_keys.h"
#include "toolgate/core/json_schema.h"

namespace toolgate::edge {
namespace {

// Every member of obj except `skip`, in order, re-encoded.
void CopyMembersExcept(JsonWriter& w, simdjson::dom::object obj, std::string_view skip) {
  for (auto member : obj) {
    if (member.key == skip) continue;
    w.Key(member.key).Raw(ToJson(member.value));
  }
}

}  // namespace

std::string ToolNameBase(std::string_view function_name) {
  std::string out;
  for (char c : function_name) {
    unsigned char u = static_cast<unsigned char>(c);
    if (u < 0x80 && std::isalnum(u)) {
      out.push_back(static_cast<char>(std::tolower(u)));
    } else if (c == '-') {
      out.push_back('-');
    } else if (!out.empty() && out.back() != '_') {
      out.push_back('_');
    }
  }
  if (out.size() > kMaxBaseChars) out.resize(kMaxBaseChars);
  while (!out.empty() && out.back() == '_') out.pop_back();
  return out.empty() ? "tool" : out;
}

std::vector<std::string> AssignToolNames(const std::vector<v1::WorkspaceTool>& functions) {
  std::unordered_set<std::string> taken;
  std::vector<std::string> names;
  names.reserve(functions.size());
  for (const auto& f : functions) {
    const std::string base = ToolNameBase(f.name());
    std::string hex;
    for (char c : f.function_id()) {
      if (c != '-') hex.push_back(c);
    }
    std::string name = base;
    // Longer and longer prefixes of the id until the name is free; the whole id always is,
    // unless another function was literally named after it.
    for (size_t len = 8; taken.count(name) > 0 && len <= hex.size(); len += 4) {
      const size_t room = kMaxToolNameChars - 1 - len;
      name = base.substr(0, std::min(base.size(), room)) + "_" + hex.substr(0, len);
    }
    taken.insert(name);
    names.push_back(std::move(name));
  }
  return names;
}

McpInputSchema ToMcpInputSchema(std::string_view input_schema_json) {
  std::string_view text = TrimAsciiWhitespace(input_schema_json);
  auto doc = ParseJson(text);
  if (!doc.ok()) return {R"({"type":"object"})", false};
  simdjson::dom::object obj;
  if (doc->root.get_object().get(obj) == simdjson::SUCCESS) {
    simdjson::dom::element type;
    if (obj["type"].get(type) != simdjson::SUCCESS) {
      JsonWriter w;
      w.BeginObject().Field("type", "object");
      CopyMembersExcept(w, obj, "type");
      return {w.EndObject().Take(), false};
    }
    std::string_view type_name;
    if (type.get_string().get(type_name) == simdjson::SUCCESS && type_name == "object") {
      return {std::string(text), false};
    }
  }
  JsonWriter w;
  w.BeginObject().Field("type", "object");
  w.Key("properties").BeginObject().Key("event").Raw(text).EndObject();
  w.Key("required").BeginArray().String("event").EndArray();
  return {w.EndObject().Take(), true};
}

ArgumentsEvent EventFromArguments(std::string_view arguments_json, bool wrapped) {
  std::string_view text = TrimAsciiWhitespace(arguments_json);
  if (text.empty()) text = "{}";
  auto doc = ParseJson(text);
  simdjson::dom::object obj;
  if (!doc.ok() || doc->root.get_object().get(obj) != simdjson::SUCCESS) {
    return {{}, "Invalid params: arguments must be an object"};
  }
  if (!wrapped) return {std::string(text), {}};
  simdjson::dom::element event;
  if (obj["event"].get(event) != simdjson::SUCCESS || (!event.is_object() && !event.is_string())) {
    return {{}, "Invalid params: arguments.event must be an object or a string"};
  }
  return {ToJson(event), {}};
}

std::optional<ToolTarget> ResolveTool(const std::vector<v1::WorkspaceTool>& functions,
                                      const std::vector<std::string>& names,
                                      std::string_view name) {
  size_t separator = name.find(kToolSeparator);
  std::string_view function_name = name.substr(0, separator);
  for (size_t i = 0; i < functions.size() && i < names.size(); ++i) {
    if (names[i] != function_name) continue;
    if (separator == std::string_view::npos) {
      if (functions[i].mcp()) return std::nullopt;
      return ToolTarget{i, {}};
    }
    std::string_view tool = name.substr(separator + kToolSeparator.size());
    if (!functions[i].mcp() || tool.empty()) return std::nullopt;
    return ToolTarget{i, std::string(tool)};
  }
  return std::nullopt;
}

std::string FunctionToolJson(const v1::WorkspaceTool& function, std::string_view name) {
  JsonWriter w;
  w.BeginObject()
      .Field("name", name)
      .Field("title", function.name())
      .Field("description", function.description())
      .Key("inputSchema")
      .Raw(ToMcpInputSchema(function.input_schema_json()).json);
  if (!function.output_schema_json().empty()) {
    w.Key("outputSchema").Raw(function.output_schema_json());
  }
  if (!function.icon_url().empty()) {
    w.Key("icons").BeginArray().BeginObject().Field("src", function.icon_url()).EndObject();
    w.EndArray();
  }
  return w.EndObject().Take();
}

std::optional<ListPage> ListResultPage(std::string_view response_body, std::string_view member) {
  auto doc = ParseJson(response_body);
  simdjson::dom::object obj, result;
  simdjson::dom::element items;
  if (!doc.ok() || doc->root.get_object().get(obj) != simdjson::SUCCESS ||
      obj["result"].get_object().get(result) != simdjson::SUCCESS ||
      result[member].get(items) != simdjson::SUCCESS || !items.is_array()) {
    return std::nullopt;
  }
  ListPage page;
  page.items_json = ToJson(items);
  GetString(result, "nextCursor", &page.next_cursor);
  return page;
}

std::vector<std::string> PrefixedToolsJson(std::string_view tools_json, std::string_view prefix) {
  std::vector<std::string> out;
  auto doc = ParseJson(tools_json);
  simdjson::dom::array tools;
  if (!doc.ok() || doc->root.get_array().get(tools) != simdjson::SUCCESS) return out;
  for (auto item : tools) {
    simdjson::dom::object tool;
    std::string name;
    if (item.get_object().get(tool) != simdjson::SUCCESS ||
        GetString(tool, "name", &name) != Field::kOk || name.empty()) {
      continue;
    }
    std::string prefixed = std::string(prefix) + std::string(kToolSeparator) + name;
    if (prefixed.size() > kMaxToolNameChars) continue;
    JsonWriter w;
    w.BeginObject().Field("name", prefixed);
    CopyMembersExcept(w, tool, "name");
    out.push_back(w.EndObject().Take());
  }
  return out;
}

std::string ToolsListResult(const std::vector<std::string>& entries) {
  JsonWriter w;
  w.BeginObject().Key("tools").BeginArray();
  for (const auto& e : entries) w.Raw(e);
  return w.EndArray().EndObject().Take();
}

std::string ToolCallResult(int status_code, std::string_view body,
                           std::string_view output_schema_json) {
  auto doc = ParseJson(body);
  const bool object = doc.ok() && doc->root.is_object();
  if (!output_schema_json.empty() && status_code < 400) {
    // Compiled per call: published schemas compile (the registry checked them), and a
    // workspace call costs a handler run anyway.
    auto schema = core::JsonSchema::Compile(output_schema_json);
    std::string why;
    if (!object) {
      why = "the result is not a JSON object";
    } else if (schema.ok()) {
      auto errors = (*schema)->Validate(doc->root);
      if (!errors.empty())
        why = (errors[0].pointer.empty() ? "/" : errors[0].pointer) + " " + errors[0].message;
    }
    if (!why.empty()) {
      JsonWriter w;
      w.BeginObject().Key("content").BeginArray();
      w.BeginObject()
          .Field("type", "text")
          .Field("text", "The tool's result does not follow its output schema: " + why)
          .EndObject();
      return w.EndArray().Field("isError", true).EndObject().Take();
    }
  }
  JsonWriter w;
  w.BeginObject().Key("content").BeginArray();
  w.BeginObject().Field("type", "text").Field("text", body).EndObject();
  w.EndArray();
  if (object) w.Key("structuredContent").Raw(ToJson(doc->root));
  w.Field("isError", status_code >= 400);
  return w.EndObject().Take();
}

std::string ForwardedToolCall(std::string_view id_json, std::string_view params_json,
                              std::string_view tool_name) {
  return ForwardedRequest(id_json, "tools/call", params_json, "name", tool_name);
}

std::string ForwardedRequest(std::string_view id_json, std::string_view method,
                             std::string_view params_json, std::string_view member,
                             std::string_view value) {
  JsonWriter w;
  w.BeginObject().Field("jsonrpc", "2.0").Key("id").Raw(id_json).Field("method", method);
  w.Key("params").BeginObject().Field(member, value);
  auto doc = ParseJson(params_json);
  simdjson::dom::object params;
  if (doc.ok() && doc->root.get_object().get(params) == simdjson::SUCCESS) {
    CopyMembersExcept(w, params, member);
  }
  return w.EndObject().EndObject().Take();
}

std::vector<std::string> PrefixedResourcesJson(std::string_view array_json,
                                               std::string_view function_name,
                                               std::string_view uri_member) {
  std::vector<std::string> out;
  auto doc = ParseJson(array_json);
  simdjson::dom::array items;
  if (!doc.ok() || doc->root.get_array().get(items) != simdjson::SUCCESS) return out;
  for (auto item : items) {
    simdjson::dom::object entry;
    std::string uri;
    if (item.get_object().get(entry) != simdjson::SUCCESS ||
        GetString(entry, uri_member, &uri) != Field::kOk || uri.empty()) {
      continue;
    }
    JsonWriter w;
    w.BeginObject().Field(
        uri_member, std::string(kWorkspaceUriScheme) + std::string(function_name) + "/" + uri);
    CopyMembersExcept(w, entry, uri_member);
    out.push_back(w.EndObject().Take());
  }
  return out;
}

std::optional<WorkspaceUri> ParseWorkspaceUri(std::string_view uri) {
  if (!uri.starts_with(kWorkspaceUriScheme)) return std::nullopt;
  uri.remove_prefix(kWorkspaceUriScheme.size());
  size_t slash = uri.find('/');
  if (slash == std::string_view::npos || slash == 0 || slash + 1 == uri.size()) {
    return std::nullopt;
  }
  return WorkspaceUri{std::string(uri.substr(0, slash)), std::string(uri.substr(slash + 1))};
}

std::string EnvKeysFor(std::string_view header, const v1::WorkspaceTool& function) {
  auto pairs = core::ParseEnvKeys(header);
  if (!pairs.ok()) return std::string(header);
  const auto& declared = function.declared_keys();
  std::string out;
  for (const auto& p : *pairs) {
    if (std::find(declared.begin(), declared.end(), p.name) == declared.end()) continue;
    if (!out.empty()) out += ",";
    out += p.name + "=" + p.secret_id;
  }
  return out;
}

}  // namespace toolgate::edge
