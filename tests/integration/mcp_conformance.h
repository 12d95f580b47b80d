// What every MCP tool handler must answer (gateway-spec.md, "Invoke an MCP tool" and "JSON-RPC
// errors"; issue 5): events, and the checks their JSON-RPC responses must pass. The templates of
// `toolgate new --mcp` pass them, run directly (cli/toolgate/templates_test.cc) and through
// POST …/invoke (mcp_test.cc). The tools are the templates': divide {a, b} and echo {text}.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "toolgate/base/json.h"
#include "toolgate/base/json_writer.h"

namespace toolgate::testing {

struct McpCase {
  std::string name;
  std::string event;  // the event's JSON text: an object, or a string holding a request
  std::function<void(simdjson::dom::object response)> check;
};

// Text that JSON, Python, JavaScript and Lua all have their own ways to mangle.
inline const std::string& McpEchoText() {
  static const std::string kText =
      "Gr\xC3\xBC\xC3\x9F"
      "e, \"quoted\" \\ slash / tab\tnew\nline \xE2\x9C\x93 \xF0\x9F\x98\x80";
  return kText;
}

namespace mcp_detail {

inline std::string Request(std::string_view id_json, std::string_view method,
                           std::string_view params_json = {}) {
  std::string out = R"({"jsonrpc":"2.0","id":)" + std::string(id_json) + R"(,"method":")" +
                    std::string(method) + "\"";
  if (!params_json.empty()) out += R"(,"params":)" + std::string(params_json);
  return out + "}";
}

inline std::string Call(std::string_view tool, std::string_view arguments_json) {
  return Request(
      "10", "tools/call",
      R"({"name":")" + std::string(tool) + R"(","arguments":)" + std::string(arguments_json) + "}");
}

// Compact JSON of a member of obj, or "<missing>".
inline std::string Member(simdjson::dom::object obj, std::string_view key) {
  simdjson::dom::element e;
  return obj[key].get(e) == simdjson::SUCCESS ? ToJson(e) : "<missing>";
}

template <typename T>
std::string Dump(T value) {
  return simdjson::minify(value);
}

inline std::string Str(simdjson::simdjson_result<simdjson::dom::element> e) {
  std::string_view s;
  return e.get_string().get(s) == simdjson::SUCCESS ? std::string(s) : "<not a string>";
}

inline simdjson::dom::object Result(simdjson::dom::object response) {
  simdjson::dom::object result;
  EXPECT_EQ(response["result"].get_object().get(result), simdjson::SUCCESS)
      << "no result object in " << Dump(response);
  return result;
}

inline void ExpectError(simdjson::dom::object response, int64_t code, std::string_view id_json) {
  simdjson::dom::object error;
  ASSERT_EQ(response["error"].get_object().get(error), simdjson::SUCCESS)
      << "no error object in " << Dump(response);
  int64_t actual = 0;
  EXPECT_EQ(error["code"].get_int64().get(actual), simdjson::SUCCESS);
  EXPECT_EQ(actual, code) << Dump(response);
  EXPECT_TRUE(error["message"].is_string()) << Dump(response);
  EXPECT_EQ(Member(response, "id"), id_json);
}

// content[0] is text; returns it.
inline std::string Text(simdjson::dom::object result) {
  simdjson::dom::array content;
  simdjson::dom::object first;
  EXPECT_EQ(result["content"].get_array().get(content), simdjson::SUCCESS);
  if (content.size() == 0 || content.at(0).get_object().get(first) != simdjson::SUCCESS) {
    ADD_FAILURE() << "no content in " << Dump(result);
    return "";
  }
  EXPECT_EQ(Str(first["type"]), "text");
  return Str(first["text"]);
}

inline bool IsError(simdjson::dom::object result) {
  bool value = false;
  return result["isError"].get_bool().get(value) == simdjson::SUCCESS && value;
}

}  // namespace mcp_detail

inline std::vector<McpCase> McpConformanceCases() {
  using namespace mcp_detail;
  std::vector<McpCase> cases;
  for (std::string revision : {"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"}) {
    cases.push_back(
        {"initialize " + revision,
         Request("1", "initialize",
                 R"({"protocolVersion":")" + revision +
                     R"(","capabilities":{},"clientInfo":{"name":"conformance","version":"1"}})"),
         [revision](simdjson::dom::object r) {
           EXPECT_EQ(Member(r, "id"), "1");
           simdjson::dom::object result = Result(r);
           EXPECT_EQ(Str(result["protocolVersion"]), revision);
           EXPECT_TRUE(result["capabilities"]["tools"].is_object()) << Dump(result);
           EXPECT_FALSE(Str(result["serverInfo"]["name"]).empty());
           EXPECT_TRUE(result["serverInfo"]["version"].is_string()) << Dump(result);
         }});
  }
  cases.push_back({"initialize with an unknown revision answers the latest",
                   Request(R"("init")", "initialize", R"({"protocolVersion":"1999-01-01"})"),
                   [](simdjson::dom::object r) {
                     EXPECT_EQ(Member(r, "id"), R"("init")");
                     EXPECT_EQ(Str(Result(r)["protocolVersion"]), "2025-11-25");
                   }});
  cases.push_back({"ping", Request(R"("p-1")", "ping"), [](simdjson::dom::object r) {
                     EXPECT_EQ(Member(r, "id"), R"("p-1")");
                     EXPECT_EQ(Member(r, "result"), "{}");
                   }});
  cases.push_back({"tools/list", Request("2", "tools/list"), [](simdjson::dom::object r) {
                     simdjson::dom::array tools;
                     ASSERT_EQ(Result(r)["tools"].get_array().get(tools), simdjson::SUCCESS);
                     std::vector<std::string> names;
                     for (auto tool : tools) {
                       names.push_back(Str(tool["name"]));
                       EXPECT_TRUE(tool["description"].is_string());
                       simdjson::dom::object schema;
                       ASSERT_EQ(tool["inputSchema"].get_object().get(schema), simdjson::SUCCESS);
                       EXPECT_EQ(Str(schema["type"]), "object");
                       EXPECT_TRUE(schema["properties"].is_object()) << Dump(schema);
                       simdjson::dom::array required;
                       ASSERT_EQ(schema["required"].get_array().get(required), simdjson::SUCCESS);
                       for (simdjson::dom::element name : required) {
                         std::string_view property;
                         ASSERT_EQ(name.get_string().get(property), simdjson::SUCCESS);
                         EXPECT_TRUE(schema["properties"][property].is_object()) << property;
                       }
                     }
                     EXPECT_EQ(names, (std::vector<std::string>{"divide", "echo"}));
                   }});
  cases.push_back({"tools/call", Call("divide", R"({"a":7,"b":2})"), [](simdjson::dom::object r) {
                     simdjson::dom::object result = Result(r);
                     EXPECT_EQ(Text(result), "3.5");
                     EXPECT_FALSE(IsError(result));
                   }});
  cases.push_back({"tools/call with a tool error", Call("divide", R"({"a":1,"b":0})"),
                   [](simdjson::dom::object r) {
                     simdjson::dom::object result = Result(r);
                     EXPECT_FALSE(Text(result).empty());
                     EXPECT_TRUE(IsError(result));
                   }});
  const std::string echo = Call("echo", R"({"text":)" + JsonWriter::Quote(McpEchoText()) + "}");
  auto echoed = [](simdjson::dom::object r) {
    EXPECT_EQ(Member(r, "id"), "10");
    EXPECT_EQ(Text(Result(r)), McpEchoText());
  };
  cases.push_back({"tools/call receives the arguments unchanged", echo, echoed});
  cases.push_back({"the event as a JSON string", JsonWriter::Quote(echo), echoed});
  cases.push_back({"-32700 parse error", JsonWriter::Quote("{\"jsonrpc\": \"2.0\", \"id\": 1,"),
                   [](simdjson::dom::object r) { ExpectError(r, -32700, "null"); }});
  cases.push_back({"-32600 jsonrpc 1.0", R"({"jsonrpc":"1.0","id":3,"method":"ping"})",
                   [](simdjson::dom::object r) { ExpectError(r, -32600, "3"); }});
  cases.push_back({"-32600 no jsonrpc", R"({"id":"x","method":"ping"})",
                   [](simdjson::dom::object r) { ExpectError(r, -32600, R"("x")"); }});
  cases.push_back({"-32600 method not a string", R"({"jsonrpc":"2.0","id":4,"method":5})",
                   [](simdjson::dom::object r) { ExpectError(r, -32600, "4"); }});
  cases.push_back({"-32601 unknown method", Request("5", "resources/list"),
                   [](simdjson::dom::object r) { ExpectError(r, -32601, "5"); }});
  cases.push_back({"-32602 unknown tool", Call("nope", "{}"),
                   [](simdjson::dom::object r) { ExpectError(r, -32602, "10"); }});
  cases.push_back({"-32602 bad arguments", Call("divide", R"({"a":"seven","b":2})"),
                   [](simdjson::dom::object r) { ExpectError(r, -32602, "10"); }});
  cases.push_back({"-32602 no tool name", Request("6", "tools/call", R"({"arguments":{}})"),
                   [](simdjson::dom::object r) { ExpectError(r, -32602, "6"); }});
  return cases;
}

// Runs a case's check on a handler's answer (the JSON text of its response), with the common
// checks: a JSON object with "jsonrpc": "2.0".
inline void CheckMcpAnswer(const McpCase& c, std::string_view answer) {
  SCOPED_TRACE(c.name);
  auto doc = ParseJson(answer);
  ASSERT_TRUE(doc.ok()) << "not JSON: " << answer;
  simdjson::dom::object response;
  ASSERT_EQ(doc->root.get_object().get(response), simdjson::SUCCESS) << answer;
  EXPECT_EQ(mcp_detail::Str(response["jsonrpc"]), "2.0") << answer;
  c.check(response);
}

}  // namespace toolgate::testing
