#include "mcp_workspace.h"

#include <gtest/gtest.h>

namespace toolgate::edge {
namespace {

v1::WorkspaceTool Function(std::string id, std::string name, bool mcp = false,
                           std::string schema = R"({"type":"object"})") {
  v1::WorkspaceTool f;
  f.set_function_id(std::move(id));
  f.set_name(std::move(name));
  f.set_description("does " + f.name());
  f.set_mcp(mcp);
  f.set_version("1.0");
  f.set_input_schema_json(std::move(schema));
  return f;
}

TEST(ToolNameTest, Base) {
  EXPECT_EQ(ToolNameBase("Weather Forecast!"), "weather_forecast");
  EXPECT_EQ(ToolNameBase("  a -- b__c  "), "a_--_b_c");
  EXPECT_EQ(ToolNameBase("Café au lait"), "caf_au_lait");
  EXPECT_EQ(ToolNameBase("日本語"), "tool");
  EXPECT_EQ(ToolNameBase(""), "tool");
  EXPECT_EQ(ToolNameBase(std::string(100, 'x')).size(), kMaxBaseChars);
  EXPECT_EQ(ToolNameBase(std::string(31, 'x') + " y"), std::string(31, 'x'));
  for (std::string_view n : {"a  b", "a__b", "x_ _y", "__init__"}) {
    EXPECT_EQ(ToolNameBase(n).find("__"), std::string::npos) << n;
  }
}

TEST(ToolNameTest, UniqueAndStable) {
  std::vector<v1::WorkspaceTool> functions = {
      Function("11111111-aaaa-4000-8000-000000000001", "Echo"),
      Function("22222222-bbbb-4000-8000-000000000002", "echo"),
      Function("33333333-cccc-4000-8000-000000000003", "Other"),
  };
  auto names = AssignToolNames(functions);
  EXPECT_EQ(names, (std::vector<std::string>{"echo", "echo_22222222", "other"}));
  // Removing the first does not rename the third, and the second keeps its suffix only while
  // the clash lasts.
  functions.erase(functions.begin());
  EXPECT_EQ(AssignToolNames(functions), (std::vector<std::string>{"echo", "other"}));

  // Names that clash even with the id's start get more of it, and stay within 64 characters.
  std::vector<v1::WorkspaceTool> clash = {
      Function("44444444-0000-4000-8000-000000000001", std::string(40, 'n')),
      Function("44444444-0000-4000-8000-000000000002", std::string(40, 'n')),
      Function("44444444-0000-4000-8000-000000000003", std::string(40, 'n')),
  };
  auto long_names = AssignToolNames(clash);
  EXPECT_EQ(long_names[0], std::string(32, 'n'));
  EXPECT_EQ(long_names[1], std::string(32, 'n') + "_44444444");
  EXPECT_EQ(long_names[2], std::string(32, 'n') + "_444444440000");
  for (const auto& n : long_names) EXPECT_LE(n.size(), kMaxToolNameChars);
}

TEST(InputSchemaTest, ObjectSchemasAsTheyAre) {
  auto s = ToMcpInputSchema(R"( {"type": "object", "properties": {"b": {}, "a": {}}} )");
  EXPECT_EQ(s.json, R"({"type": "object", "properties": {"b": {}, "a": {}}})");
  EXPECT_FALSE(s.wrapped);
  auto untyped = ToMcpInputSchema(R"({"properties":{"x":{"type":"number"}}})");
  EXPECT_EQ(untyped.json, R"({"type":"object","properties":{"x":{"type":"number"}}})");
  EXPECT_FALSE(untyped.wrapped);
}

TEST(InputSchemaTest, OtherSchemasWrappedAsEvent) {
  auto s = ToMcpInputSchema(R"({"type":"string"})");
  EXPECT_EQ(s.json,
            R"({"type":"object","properties":{"event":{"type":"string"}},"required":["event"]})");
  EXPECT_TRUE(s.wrapped);
  EXPECT_TRUE(ToMcpInputSchema(R"({"type":["object","string"]})").wrapped);
}

TEST(ArgumentsTest, Event) {
  EXPECT_EQ(EventFromArguments("", false).event_json, "{}");
  EXPECT_EQ(EventFromArguments(R"({"a":1})", false).event_json, R"({"a":1})");
  EXPECT_NE(EventFromArguments("[1]", false).error, "");
  EXPECT_EQ(EventFromArguments(R"({"event":"text"})", true).event_json, R"("text")");
  EXPECT_EQ(EventFromArguments(R"({"event":{"x":2}})", true).event_json, R"({"x":2})");
  EXPECT_NE(EventFromArguments(R"({"event":5})", true).error, "");
  EXPECT_NE(EventFromArguments(R"({})", true).error, "");
}

TEST(ResolveTest, PlainAndMcpTools) {
  std::vector<v1::WorkspaceTool> functions = {
      Function("1", "Echo"),
      Function("2", "Calc", /*mcp=*/true),
  };
  auto names = AssignToolNames(functions);
  auto plain = ResolveTool(functions, names, "echo");
  ASSERT_TRUE(plain.has_value());
  EXPECT_EQ(plain->function, 0u);
  EXPECT_EQ(plain->mcp_tool, "");
  auto nested = ResolveTool(functions, names, "calc__add__two");
  ASSERT_TRUE(nested.has_value());
  EXPECT_EQ(nested->function, 1u);
  EXPECT_EQ(nested->mcp_tool, "add__two");
  EXPECT_FALSE(ResolveTool(functions, names, "calc").has_value());  // not a tool itself
  EXPECT_FALSE(ResolveTool(functions, names, "calc__").has_value());
  EXPECT_FALSE(ResolveTool(functions, names, "echo__x").has_value());
  EXPECT_FALSE(ResolveTool(functions, names, "nothing").has_value());
}

TEST(ToolsListTest, Entries) {
  EXPECT_EQ(FunctionToolJson(Function("1", "Echo"), "echo"),
            R"({"name":"echo","title":"Echo","description":"does Echo",)"
            R"("inputSchema":{"type":"object"}})");
  auto page =
      ListResultPage(R"({"jsonrpc":"2.0","id":1,"result":{"tools":[)"
                     R"({"name":"add","description":"Add","inputSchema":{"type":"object"}},)"
                     R"({"name":")" +
                         std::string(60, 't') +
                         R"(","inputSchema":{"type":"object"}},)"
                         R"({"description":"nameless"}],"nextCursor":"c2"}})",
                     "tools");
  ASSERT_TRUE(page.has_value());
  EXPECT_EQ(page->next_cursor, "c2");
  auto prefixed = PrefixedToolsJson(page->items_json, "calc");
  ASSERT_EQ(prefixed.size(), 1u);  // the long name and the nameless tool are left out
  EXPECT_EQ(prefixed[0],
            R"({"name":"calc__add","description":"Add","inputSchema":{"type":"object"}})");
  EXPECT_FALSE(ListResultPage(R"({"jsonrpc":"2.0","id":1,"error":{}})", "tools"));
  EXPECT_FALSE(ListResultPage(R"({"jsonrpc":"2.0","id":1,"result":{"tools":{}}})", "tools"));
  EXPECT_TRUE(PrefixedToolsJson(R"({"tools":[]})", "x").empty());
  EXPECT_EQ(ToolsListResult({R"({"name":"a"})", R"({"name":"b"})"}),
            R"({"tools":[{"name":"a"},{"name":"b"}]})");
}

TEST(ToolCallTest, ResultOfAPlainFunction) {
  EXPECT_EQ(ToolCallResult(200, R"({"sum":3})"),
            R"({"content":[{"type":"text","text":"{\"sum\":3}"}],)"
            R"("structuredContent":{"sum":3},"isError":false})");
  EXPECT_EQ(ToolCallResult(200, "[1,2]"),
            R"({"content":[{"type":"text","text":"[1,2]"}],"isError":false})");
  EXPECT_EQ(ToolCallResult(422, R"("bad")"),
            R"({"content":[{"type":"text","text":"\"bad\""}],"isError":true})");
}

TEST(ToolCallTest, Forwarded) {
  EXPECT_EQ(ForwardedToolCall("9", R"({"name":"calc__add","arguments":{"a":1},"_meta":{}})", "add"),
            R"({"jsonrpc":"2.0","id":9,"method":"tools/call",)"
            R"("params":{"name":"add","arguments":{"a":1},"_meta":{}}})");
}

TEST(EnvKeysTest, OnlyTheDeclaredOnes) {
  v1::WorkspaceTool f = Function("1", "Forecast");
  f.add_declared_keys("WEATHER_API_KEY");
  EXPECT_EQ(EnvKeysFor("WEATHER_API_KEY = s1, OTHER=s2", f), "WEATHER_API_KEY=s1");
  EXPECT_EQ(EnvKeysFor("OTHER=s2", f), "");
  EXPECT_EQ(EnvKeysFor("not a header", f), "not a header");
}

TEST(WorkspaceResourcesTest, UrisNameTheirFunction) {
  auto entries =
      PrefixedResourcesJson(R"([{"uri":"file:///a b","name":"a"},{"name":"x"},7])", "docs", "uri");
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0], R"({"uri":"toolgate://docs/file:///a b","name":"a"})");
  auto uri = ParseWorkspaceUri("toolgate://docs/file:///a b");
  ASSERT_TRUE(uri.has_value());
  EXPECT_EQ(uri->function_name, "docs");
  EXPECT_EQ(uri->uri, "file:///a b");
  EXPECT_FALSE(ParseWorkspaceUri("file:///a"));
  EXPECT_FALSE(ParseWorkspaceUri("toolgate://docs"));
  EXPECT_FALSE(ParseWorkspaceUri("toolgate:///x"));
  EXPECT_FALSE(ParseWorkspaceUri("toolgate://docs/"));
}

TEST(ToolsListTest, AnOutputSchemaIsOfferedAndHeldTo) {
  v1::WorkspaceTool f = Function("1", "Sum");
  const std::string schema =
      R"({"type":"object","properties":{"sum":{"type":"number"}},"required":["sum"]})";
  f.set_output_schema_json(schema);
  EXPECT_NE(FunctionToolJson(f, "sum").find(R"("outputSchema":)" + schema), std::string::npos);
  EXPECT_EQ(FunctionToolJson(f, "sum").find("icons"), std::string::npos);  // it has none
  f.set_icon_url("https://example.com/sum.png");
  EXPECT_NE(FunctionToolJson(f, "sum").find(R"("icons":[{"src":"https://example.com/sum.png"}])"),
            std::string::npos);

  EXPECT_EQ(ToolCallResult(200, R"({"sum":3})", schema),
            R"({"content":[{"type":"text","text":"{\"sum\":3}"}],"structuredContent":{"sum":3},)"
            R"("isError":false})");
  // A result that breaks it is a tool error naming what differs, with no structuredContent.
  EXPECT_EQ(ToolCallResult(200, R"({"sum":"three"})", schema),
            R"({"content":[{"type":"text","text":"The tool's result does not follow its output )"
            R"(schema: /sum must be a number"}],"isError":true})");
  EXPECT_EQ(ToolCallResult(200, "[1]", schema),
            R"({"content":[{"type":"text","text":"The tool's result does not follow its output )"
            R"(schema: the result is not a JSON object"}],"isError":true})");
  // A failed call is the tool's error as it is.
  EXPECT_EQ(ToolCallResult(500, R"("boom")", schema),
            R"({"content":[{"type":"text","text":"\"boom\""}],"isError":true})");
}

}  // namespace
}  // namespace toolgate::edge
