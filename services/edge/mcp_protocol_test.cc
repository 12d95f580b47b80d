#include "mcp_protocol.h"

#include <gtest/gtest.h>

#include "toolgate/core/event_depth.h"

namespace toolgate::edge {
namespace {

TEST(McpRevisionTest, NegotiatesTheAskedRevisionOrTheLatest) {
  for (std::string_view r : kMcpRevisions) EXPECT_EQ(NegotiateMcpRevision(r), r);
  EXPECT_EQ(NegotiateMcpRevision("2026-07-28"), "2025-11-25");
  EXPECT_EQ(NegotiateMcpRevision(""), "2025-11-25");
  EXPECT_FALSE(IsSupportedMcpRevision("2024-10-07"));
}

TEST(AcceptTest, MediaRanges) {
  EXPECT_TRUE(AcceptsMediaType("application/json", "application/json"));
  EXPECT_TRUE(AcceptsMediaType("Application/JSON; charset=utf-8", "application/json"));
  EXPECT_TRUE(AcceptsMediaType("text/html, application/*;q=0.5", "application/json"));
  EXPECT_TRUE(AcceptsMediaType("*/*", "text/event-stream"));
  EXPECT_TRUE(AcceptsMediaType("", "application/json"));  // absent: anything
  EXPECT_FALSE(AcceptsMediaType("text/html", "application/json"));
  EXPECT_FALSE(AcceptsMediaType("application/json;q=0", "application/json"));
  // The most specific range decides.
  EXPECT_FALSE(AcceptsMediaType("*/*, application/json; q=0.0", "application/json"));
  EXPECT_TRUE(AcceptsMediaType("application/*;q=0, application/json", "application/json"));
}

TEST(AcceptTest, StreamableHttpClientsMustListBoth) {
  const char* both = "application/json, text/event-stream";
  for (std::string_view r : kMcpRevisions) EXPECT_TRUE(AcceptsMcpAnswers(both, r)) << r;
  EXPECT_TRUE(AcceptsMcpAnswers("application/json", "2024-11-05"));
  EXPECT_FALSE(AcceptsMcpAnswers("application/json", "2025-03-26"));
  EXPECT_FALSE(AcceptsMcpAnswers("application/json", "2025-11-25"));
  EXPECT_FALSE(AcceptsMcpAnswers("text/event-stream", "2025-06-18"));
}

TEST(ContentTypeTest, JsonOnly) {
  EXPECT_TRUE(IsJsonContentType("application/json"));
  EXPECT_TRUE(IsJsonContentType("application/JSON; charset=utf-8"));
  EXPECT_FALSE(IsJsonContentType("text/plain"));
  EXPECT_FALSE(IsJsonContentType("application/x-www-form-urlencoded"));
}

McpMessage Message(std::string_view body) {
  auto parsed = ParseMcpMessage(body);
  EXPECT_TRUE(std::holds_alternative<McpMessage>(parsed)) << body;
  return std::holds_alternative<McpMessage>(parsed) ? std::get<McpMessage>(parsed) : McpMessage{};
}

std::string ProblemCode(std::string_view body) {
  auto parsed = ParseMcpMessage(body);
  EXPECT_TRUE(std::holds_alternative<v1::Problem>(parsed)) << body;
  if (!std::holds_alternative<v1::Problem>(parsed)) return "";
  EXPECT_EQ(std::get<v1::Problem>(parsed).status(), 400);
  return std::get<v1::Problem>(parsed).code();
}

TEST(McpMessageTest, Kinds) {
  McpMessage request =
      Message(R"({"jsonrpc":"2.0","id":"a-1","method":"initialize","params":{"x":[1, 2]}})");
  EXPECT_EQ(request.kind, McpMessage::Kind::kRequest);
  EXPECT_EQ(request.method, "initialize");
  EXPECT_EQ(request.id_json, R"("a-1")");
  EXPECT_EQ(request.params_json, R"({"x":[1,2]})");

  McpMessage numbered = Message(R"({"jsonrpc":"2.0","id":7,"method":"ping"})");
  EXPECT_EQ(numbered.id_json, "7");
  EXPECT_EQ(numbered.params_json, "");

  EXPECT_EQ(Message(R"({"jsonrpc":"2.0","method":"notifications/initialized"})").kind,
            McpMessage::Kind::kNotification);
  EXPECT_EQ(Message(R"({"jsonrpc":"2.0","id":3,"result":{}})").kind, McpMessage::Kind::kResponse);
  EXPECT_EQ(Message(R"({"jsonrpc":"2.0","id":3,"error":{"code":1,"message":"x"}})").kind,
            McpMessage::Kind::kResponse);
}

TEST(McpMessageTest, WhatIsNotOneJsonRpcMessage) {
  EXPECT_EQ(ProblemCode("{not json"), "invalid_json");
  EXPECT_EQ(ProblemCode(R"([{"jsonrpc":"2.0","id":1,"method":"ping"}])"), "bad_request");
  EXPECT_EQ(ProblemCode(R"("ping")"), "bad_request");
  EXPECT_EQ(ProblemCode(R"({"jsonrpc":"1.0","id":1,"method":"ping"})"), "bad_request");
  EXPECT_EQ(ProblemCode(R"({"id":1,"method":"ping"})"), "bad_request");
  EXPECT_EQ(ProblemCode(R"({"jsonrpc":"2.0","id":1,"method":5})"), "bad_request");
  EXPECT_EQ(ProblemCode(R"({"jsonrpc":"2.0","id":{},"method":"ping"})"), "bad_request");
  EXPECT_EQ(ProblemCode(R"({"jsonrpc":"2.0","id":1})"), "bad_request");
}

// A tools/call whose arguments nest `levels` levels; the message itself nests levels + 2.
std::string CallWithArgumentsDepth(size_t levels) {
  std::string open, close;
  for (size_t level = 1; level < levels; ++level) {
    open += "{\"a\":";
    close += "}";
  }
  return R"({"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":)" +
         open + "{}" + close + "}}";
}

TEST(McpMessageTest, DepthIsMeasuredAgainstTheEventLimit) {
  // The message is level 1 and params level 2: arguments may nest kMaxEventDepth - 2 levels.
  McpMessage at_limit = Message(CallWithArgumentsDepth(core::kMaxEventDepth - 2));
  EXPECT_FALSE(at_limit.too_deep);
  McpMessage deeper = Message(CallWithArgumentsDepth(core::kMaxEventDepth - 1));
  EXPECT_TRUE(deeper.too_deep);
  EXPECT_EQ(deeper.id_json, "7");  // so that the refusal can answer the request
  EXPECT_EQ(deeper.kind, McpMessage::Kind::kRequest);
  EXPECT_EQ(Message(CallWithArgumentsDepth(900)).id_json, "7");
}

TEST(McpMessageTest, MessageTooDeepForTheParserIsRefusedForItsDepth) {
  auto parsed = ParseMcpMessage(CallWithArgumentsDepth(5000));
  ASSERT_TRUE(std::holds_alternative<v1::Problem>(parsed));
  const v1::Problem& p = std::get<v1::Problem>(parsed);
  EXPECT_EQ(p.status(), 400);
  EXPECT_EQ(p.code(), "invalid_event");
  EXPECT_NE(p.detail().find("deeper than 64 levels"), std::string::npos) << p.detail();
}

TEST(McpMessageTest, Params) {
  McpMessage m = Message(
      R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}})");
  EXPECT_EQ(ParamString(m, "name"), "echo");
  EXPECT_EQ(ParamString(m, "arguments"), "");
  EXPECT_EQ(ParamJson(m, "arguments"), R"({"text":"hi"})");
  EXPECT_EQ(ParamJson(m, "missing"), "");
}

TEST(JsonRpcTest, Builders) {
  EXPECT_EQ(JsonRpcResult("1", "{}"), R"({"jsonrpc":"2.0","id":1,"result":{}})");
  EXPECT_EQ(
      JsonRpcError(R"("x")", -32601, "Method not found: a"),
      R"({"jsonrpc":"2.0","id":"x","error":{"code":-32601,"message":"Method not found: a"}})");
  EXPECT_EQ(JsonRpcError("", -32603, "m", R"({"a":1})"),
            R"({"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"m","data":{"a":1}}})");
}

TEST(JsonRpcTest, IsResponseTo) {
  EXPECT_TRUE(IsResponseTo(R"({"jsonrpc":"2.0","id":1,"result":{}})", "1"));
  EXPECT_TRUE(
      IsResponseTo(R"({"id":"a","error":{"code":-1,"message":""},"jsonrpc":"2.0"})", R"("a")"));
  EXPECT_FALSE(IsResponseTo(R"({"jsonrpc":"2.0","id":2,"result":{}})", "1"));
  EXPECT_FALSE(IsResponseTo(R"({"jsonrpc":"2.0","id":"1","result":{}})", "1"));
  EXPECT_FALSE(IsResponseTo(R"({"jsonrpc":"2.0","id":1})", "1"));
  EXPECT_FALSE(IsResponseTo(R"({"errorType":"TypeError","errorMessage":"x"})", "1"));
  EXPECT_FALSE(IsResponseTo("not json", "1"));
}

TEST(JsonRpcTest, InitializeResultRevision) {
  EXPECT_EQ(InitializeResultRevision(
                R"({"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18"}})"),
            "2025-06-18");
  EXPECT_EQ(InitializeResultRevision(R"({"jsonrpc":"2.0","id":1,"error":{"code":1}})"), "");
}

}  // namespace
}  // namespace toolgate::edge
