#include "mcp_stateless.h"

#include <gtest/gtest.h>

#include "toolgate/base/crypto.h"

namespace toolgate::edge {
namespace {

McpMessage Message(std::string_view body) {
  auto parsed = ParseMcpMessage(body);
  EXPECT_TRUE(std::holds_alternative<McpMessage>(parsed));
  return std::get<McpMessage>(parsed);
}

constexpr char kCall[] =
    R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","_meta":)"
    R"({"io.modelcontextprotocol/protocolVersion":"2026-07-28",)"
    R"("io.modelcontextprotocol/clientCapabilities":{},"traceparent":"00-abc-def-01"}}})";

TEST(McpStatelessTest, ReadsTheMeta) {
  RequestMeta meta = ReadRequestMeta(Message(kCall));
  EXPECT_EQ(meta.protocol_version, "2026-07-28");
  EXPECT_TRUE(meta.has_client_capabilities);
  EXPECT_EQ(meta.traceparent, "00-abc-def-01");

  RequestMeta none = ReadRequestMeta(Message(R"({"jsonrpc":"2.0","id":1,"method":"x"})"));
  EXPECT_FALSE(none.protocol_version.has_value());
  EXPECT_FALSE(none.has_client_capabilities);
}

TEST(McpStatelessTest, TraceparentOfTheMeta) {
  EXPECT_EQ(MetaTraceparent(kCall), "00-abc-def-01");
  EXPECT_EQ(MetaTraceparent(R"({"jsonrpc":"2.0","id":1,"method":"x","params":{}})"), "");
  EXPECT_EQ(MetaTraceparent(R"({"traceparent": oops)"), "");
}

TEST(McpStatelessTest, TellsTheErasApart) {
  RequestMeta stateless;
  stateless.protocol_version = "2026-07-28";
  RequestMeta legacy;
  EXPECT_TRUE(IsStatelessRequest(stateless, std::nullopt, false));
  EXPECT_TRUE(IsStatelessRequest(stateless, "2026-07-28", true));  // _meta decides
  EXPECT_TRUE(IsStatelessRequest(legacy, "2026-07-28", false));    // then refused: no _meta
  EXPECT_TRUE(IsStatelessRequest(legacy, "2099-01-01", false));    // then refused: unsupported
  EXPECT_FALSE(IsStatelessRequest(legacy, "2025-11-25", false));
  EXPECT_FALSE(IsStatelessRequest(legacy, "2026-07-28", true));  // a session's request
  EXPECT_FALSE(IsStatelessRequest(legacy, std::nullopt, false));
}

TEST(McpStatelessTest, HeadersMustMirrorTheBody) {
  McpMessage m = Message(kCall);
  RequestMeta meta = ReadRequestMeta(m);
  EXPECT_FALSE(CheckStatelessRequest(m, meta, {"2026-07-28", "tools/call", "add"}));
  EXPECT_FALSE(CheckStatelessRequest(
      m, meta, {"2026-07-28", "tools/call", "=?base64?" + Base64Encode("add") + "?="}));
  for (const MirroredHeaders& wrong : std::vector<MirroredHeaders>{
           {std::nullopt, "tools/call", "add"},
           {"2026-07-28", std::nullopt, "add"},
           {"2026-07-28", "tools/list", "add"},
           {"2026-07-28", "tools/call", std::nullopt},
           {"2026-07-28", "tools/call", "ADD"},  // values are case-sensitive
           {"2026-07-28", "tools/call", "=?base64?!!!?="},
       }) {
    auto refusal = CheckStatelessRequest(m, meta, wrong);
    ASSERT_TRUE(refusal.has_value());
    EXPECT_EQ(refusal->http_status, 400);
    EXPECT_NE(refusal->body.find("-32020"), std::string::npos) << refusal->body;
  }
}

TEST(McpStatelessTest, HttpStatusOfAnswers) {
  EXPECT_EQ(StatelessHttpStatus(R"({"jsonrpc":"2.0","id":1,"result":{}})"), 200);
  EXPECT_EQ(StatelessHttpStatus(R"({"jsonrpc":"2.0","id":1,"error":{"code":-32601}})"), 404);
  EXPECT_EQ(StatelessHttpStatus(R"({"jsonrpc":"2.0","id":1,"error":{"code":-32021}})"), 400);
  // A tool's own invalid params (an unknown tool, bad arguments) is an answer, not a refusal.
  EXPECT_EQ(StatelessHttpStatus(R"({"jsonrpc":"2.0","id":1,"error":{"code":-32602}})"), 200);
  EXPECT_EQ(StatelessHttpStatus("not json"), 200);
}

TEST(McpStatelessTest, ResultTypeAndNestedMembers) {
  EXPECT_EQ(WithResultType(R"({"jsonrpc":"2.0","id":1,"result":{"a":1}})"),
            R"({"jsonrpc":"2.0","id":1,"result":{"a":1,"resultType":"complete"}})");
  const std::string typed = R"({"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required"}})";
  EXPECT_EQ(WithResultType(typed), typed);
  const std::string error = R"({"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"x"}})";
  EXPECT_EQ(WithResultType(error), error);

  EXPECT_EQ(NestedString(R"({"params":{"requestState":"s"}})", "params", "requestState"), "s");
  EXPECT_FALSE(NestedString(R"({"params":{"requestState":7}})", "params", "requestState"));
  EXPECT_EQ(WithNestedMember(R"({"params":{"requestState":"s","x":1},"id":2})", "params",
                             "requestState", R"("t")"),
            R"({"params":{"requestState":"t","x":1},"id":2})");
  EXPECT_EQ(WithNestedMember(R"({"id":2})", "params", "requestState", R"("t")"), R"({"id":2})");
}

}  // namespace
}  // namespace toolgate::edge
