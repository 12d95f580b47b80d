#include "toolgate/registry/snippets.h"

#include <gtest/gtest.h>

namespace toolgate::registry {
namespace {

constexpr const char* kId = "6f1c2b9e-3d4a-4b5c-8d7e-9f0a1b2c3d4e";

SnippetRequest Request(std::vector<std::string> keys, std::string event = R"({"city":"Lisbon"})",
                       std::string version = "") {
  return SnippetRequest{"http://127.0.0.1:8080", kId, std::move(version), std::move(event),
                        std::move(keys)};
}

bool Has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(Snippets, CallTheLatestVersionWithThePlaceholderKey) {
  Snippets s = RenderSnippets(Request({}));
  const std::string url = "http://127.0.0.1:8080/api/v1/functions/" + std::string(kId) + "/invoke";
  EXPECT_EQ(s.curl, "curl -sS -X POST '" + url +
                        "' \\\n"
                        "  -H 'Authorization: <API_KEY>' \\\n"
                        "  -H 'Content-Type: application/json' \\\n"
                        "  -d '{\"event\":{\"city\":\"Lisbon\"}}'\n");
  EXPECT_TRUE(Has(s.python, "\"" + url + "\""));
  EXPECT_TRUE(Has(s.python, "\"Authorization\": \"<API_KEY>\""));
  EXPECT_TRUE(Has(s.python, "event = {\"city\": \"Lisbon\"}\n"));
  EXPECT_TRUE(Has(s.python, "import urllib.request"));
  EXPECT_TRUE(Has(s.javascript, "fetch(\"" + url + "\""));
  EXPECT_TRUE(Has(s.javascript, "\"Authorization\": \"<API_KEY>\""));
  EXPECT_TRUE(Has(s.javascript, "const event = {\"city\": \"Lisbon\"};"));
  for (const std::string* text : {&s.curl, &s.python, &s.javascript}) {
    EXPECT_FALSE(Has(*text, "X-Env-Keys")) << *text;
  }
}

TEST(Snippets, NameAVersionWhenAsked) {
  Snippets s = RenderSnippets(Request({}, "{}", "1.2.0"));
  EXPECT_TRUE(Has(s.curl, "/functions/" + std::string(kId) + "/1.2.0/invoke'"));
  EXPECT_TRUE(Has(s.python, "/1.2.0/invoke\""));
  EXPECT_TRUE(Has(s.javascript, "/1.2.0/invoke\""));
}

TEST(Snippets, MapEveryDeclaredKeyToASecretPlaceholder) {
  Snippets s = RenderSnippets(Request({"WEATHER_API_KEY", "GEO_TOKEN"}));
  const std::string value = "WEATHER_API_KEY=<secret_id>, GEO_TOKEN=<secret_id>";
  EXPECT_TRUE(Has(s.curl, "  -H 'X-Env-Keys: " + value + "' \\\n"));
  EXPECT_TRUE(Has(s.python, "\"X-Env-Keys\": \"" + value + "\","));
  EXPECT_TRUE(Has(s.javascript, "\"X-Env-Keys\": \"" + value + "\","));
}

TEST(Snippets, QuoteEventsForTheShellAndWriteLanguageLiterals) {
  Snippets s = RenderSnippets(
      Request({}, R"({"text": "it's", "ok": true, "none": null, "n": [1, 2.5, -3e+20]})"));
  // A single quote closes, escapes and reopens the shell's quoting.
  EXPECT_TRUE(Has(s.curl, R"(-d '{"event":{"text":"it'\''s","ok":true,"none":null,)"));
  EXPECT_TRUE(Has(s.python,
                  R"(event = {"text": "it's", "ok": True, "none": None, "n": [1, 2.5, -3e+20]})"));
  EXPECT_TRUE(
      Has(s.javascript,
          R"(const event = {"text": "it's", "ok": true, "none": null, "n": [1, 2.5, -3e+20]};)"));
}

TEST(Snippets, EscapeStringsInsideEvents) {
  Snippets s = RenderSnippets(Request({}, R"({"q": "a \"b\"\n\\"})"));
  EXPECT_TRUE(Has(s.python, R"(event = {"q": "a \"b\"\n\\"})"));
  EXPECT_TRUE(Has(s.curl, R"({"q":"a \"b\"\n\\"})"));
}

TEST(Snippets, AcceptNonObjectEvents) {
  // An MCP tool may take its JSON-RPC request as a string.
  Snippets s = RenderSnippets(Request({}, R"("{\"jsonrpc\":\"2.0\"}")"));
  EXPECT_TRUE(Has(s.curl, R"(-d '{"event":"{\"jsonrpc\":\"2.0\"}"}')"));
  Snippets fallback = RenderSnippets(Request({}, "not json"));
  EXPECT_TRUE(Has(fallback.curl, R"(-d '{"event":{}}')"));
}

TEST(Snippets, BaseUrlComesFromAPlausibleHost) {
  EXPECT_EQ(BaseUrlFor("127.0.0.1:8080", "http://fallback"), "http://127.0.0.1:8080");
  EXPECT_EQ(BaseUrlFor("tools.example.com", "http://fallback"), "http://tools.example.com");
  EXPECT_EQ(BaseUrlFor("[::1]:9000", "http://fallback"), "http://[::1]:9000");
  EXPECT_EQ(BaseUrlFor("", "http://fallback"), "http://fallback");
  EXPECT_EQ(BaseUrlFor("evil.com'; rm -rf ~; '", "http://fallback"), "http://fallback");
  EXPECT_EQ(BaseUrlFor("a.com/path", "http://fallback"), "http://fallback");
}

}  // namespace
}  // namespace toolgate::registry
