// Helpers of the MCP integration suites (mcp_test.cc, oauth_test.cc): the CLI, publishing a
// template, and a client of one MCP endpoint speaking Streamable HTTP by hand. They use the
// running SharedSystem (g_system) and fail the current test on transport errors.
#pragma once

#include <gtest/gtest.h>
#include <strings.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "system.h"
#include "toolgate/base/json.h"

namespace toolgate::testing {

inline constexpr const char* kBoth = "application/json, text/event-stream";

// Runs the `toolgate` CLI; returns its stdout, failing the test when it exits non-zero.
inline std::string Cli(const std::string& args) {
  std::string command = std::string(TOOLGATE_BIN_DIR) + "/toolgate " + args + " 2>&1";
  FILE* out = popen(command.c_str(), "r");
  if (out == nullptr) {
    ADD_FAILURE() << "cannot run " << command;
    return {};
  }
  std::string text;
  char buffer[4096];
  for (size_t n; (n = fread(buffer, 1, sizeof buffer, out)) > 0;) text.append(buffer, n);
  int rc = pclose(out);
  EXPECT_EQ(rc, 0) << command << "\n" << text;
  return text;
}

// `toolgate new` + `toolgate publish` of a template; returns the function id.
inline std::string PublishTemplate(const std::string& key, const std::string& name,
                                   const std::string& runtime, bool mcp) {
  std::filesystem::path dir = std::filesystem::path(g_system->data_dir()) / "tools" / name;
  Cli("new " + dir.string() + " --runtime " + runtime + (mcp ? " --mcp" : ""));
  std::string out =
      Cli("publish " + dir.string() + " --json --url " + g_system->url() + " --api-key " + key);
  size_t brace = out.find('{');
  return brace == std::string::npos ? "" : StringField(out.substr(brace), "function_id");
}

inline std::string Code(const http::HttpResponse& r) {
  return StringField(r.body, "code");
}

// A JSON-RPC member of an MCP answer, compact.
inline std::string Member(const std::string& body, const std::string& pointer) {
  auto doc = Json(body);
  simdjson::dom::element e;
  if (doc.root.at_pointer(pointer).get(e) != simdjson::SUCCESS) return "<missing>";
  return ToJson(e);
}

// A client of one MCP endpoint, speaking Streamable HTTP by hand.
class McpHttp {
 public:
  McpHttp(std::string path, std::string key) : path_(std::move(path)), key_(std::move(key)) {}

  http::HttpResponse Post(const std::string& body, http::HeaderList headers = {}) {
    http::HeaderList all = {{"Authorization", key_}, {"Accept", kBoth}};
    if (!session_.empty()) all.emplace_back("Mcp-Session-Id", session_);
    if (!revision_.empty()) all.emplace_back("MCP-Protocol-Version", revision_);
    for (auto& h : headers) {
      std::erase_if(
          all, [&h](const auto& a) { return strcasecmp(a.first.c_str(), h.first.c_str()) == 0; });
      all.push_back(std::move(h));
    }
    std::erase_if(all, [](const auto& a) { return a.second.empty(); });
    return Send("POST", body, all);
  }

  http::HttpResponse Send(const std::string& method, const std::string& body,
                          const http::HeaderList& headers) {
    auto r = g_system->Client()->Send(method, path_, body, headers);
    if (!r.ok()) {
      ADD_FAILURE() << method << " " << path_ << ": " << r.status().ToString();
      return {};
    }
    return *r;
  }

  // initialize + notifications/initialized, as a client does.
  http::HttpResponse Initialize(const std::string& revision = "2025-06-18") {
    session_.clear();
    revision_.clear();
    auto r = Post(R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":")" +
                  revision + R"(","capabilities":{},"clientInfo":{"name":"it","version":"1"}}})");
    session_ = r.Header("mcp-session-id");
    // Later requests name the revision the server chose.
    auto doc = Json(r.body);
    std::string_view chosen;
    if (doc.root.at_pointer("/result/protocolVersion").get_string().get(chosen) ==
        simdjson::SUCCESS) {
      revision_ = std::string(chosen);
    }
    if (r.status == 200 && !session_.empty()) {
      auto n = Post(R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
      EXPECT_EQ(n.status, 202) << n.body;
    }
    return r;
  }

  http::HttpResponse Request(const std::string& id, const std::string& method,
                             const std::string& params = "{}") {
    return Post(R"({"jsonrpc":"2.0","id":)" + id + R"(,"method":")" + method + R"(","params":)" +
                params + "}");
  }
  http::HttpResponse CallTool(const std::string& name, const std::string& arguments) {
    return Request("7", "tools/call",
                   R"({"name":")" + name + R"(","arguments":)" + arguments + "}");
  }

  std::string session_;
  std::string revision_;

 private:
  std::string path_;
  std::string key_;
};

}  // namespace toolgate::testing
