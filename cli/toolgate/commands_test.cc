#include "commands.h"

#include <gtest/gtest.h>

#include <cstdlib>

namespace toolgate::cli {
namespace {

// ---- ParseArgs ----

TEST(ParseArgsTest, OptionsTakeTheNextWordOrAnEqualsValue) {
  auto a = ParseArgs({"--name", "n1", "--scopes=invoke,manage", "ID", "-"}, {"name", "scopes"});
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->Get("name"), "n1");
  EXPECT_EQ(a->Get("scopes"), "invoke,manage");
  EXPECT_EQ(a->positional, (std::vector<std::string>{"ID", "-"}));
  EXPECT_TRUE(a->Has("name"));
  EXPECT_FALSE(a->Has("expires-at"));
  EXPECT_EQ(a->Get("expires-at", "fallback"), "fallback");
}

TEST(ParseArgsTest, ValuesMayLookLikeAnything) {
  auto a = ParseArgs({"--event", R"({"a":"--b"})", "--value", "-", "--password=a=b"},
                     {"event", "value", "password"});
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->Get("event"), R"({"a":"--b"})");
  EXPECT_EQ(a->Get("value"), "-");
  EXPECT_EQ(a->Get("password"), "a=b");
  EXPECT_TRUE(a->positional.empty());
}

TEST(ParseArgsTest, EmptyValueIsAValue) {
  auto a = ParseArgs({"--cursor="}, {"cursor"});
  ASSERT_TRUE(a.ok());
  EXPECT_TRUE(a->Has("cursor"));
  EXPECT_EQ(a->Get("cursor", "x"), "");
}

TEST(ParseArgsTest, DoubleDashEndsOptions) {
  auto a = ParseArgs({"--name", "n", "--", "--not-an-option"}, {"name"});
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->positional, std::vector<std::string>{"--not-an-option"});
}

TEST(ParseArgsTest, RejectsUnknownMissingAndRepeatedOptions) {
  auto unknown = ParseArgs({"--nmae", "x"}, {"name"});
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().message(), "unknown flag --nmae");
  auto missing = ParseArgs({"--name"}, {"name"});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().message(), "--name needs a value");
  auto twice = ParseArgs({"--name", "a", "--name=b"}, {"name"});
  ASSERT_FALSE(twice.ok());
  EXPECT_EQ(twice.status().message(), "--name is given twice");
}

TEST(ParseArgsTest, AnUnknownFlagIsNamedSoEvenWhenNothingFollows) {
  // Last of the words, it once read as a flag missing its value.
  for (const std::vector<std::string>& words : {std::vector<std::string>{"--no-such-flag"},
                                                {"ID", "--no-such-flag"},
                                                {"--no-such-flag=1"},
                                                {"--no-such-flag", "x"}}) {
    auto a = ParseArgs(words, {"name"});
    ASSERT_FALSE(a.ok());
    EXPECT_EQ(a.status().message(), "unknown flag --no-such-flag");
  }
}

TEST(ParseArgsTest, ARepeatableOptionKeepsEveryValueInOrder) {
  auto a = ParseArgs({"--env", "A=1", "DIR", "--env=B=2", "--event", "e"}, {"event"}, {"env"});
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->GetAll("env"), (std::vector<std::string>{"A=1", "B=2"}));
  EXPECT_TRUE(a->Has("env"));
  EXPECT_EQ(a->Get("event"), "e");
  EXPECT_EQ(a->positional, std::vector<std::string>{"DIR"});
  EXPECT_TRUE(a->GetAll("other").empty());
  EXPECT_FALSE(ParseArgs({"--env"}, {}, {"env"}).ok());
}

// ---- Manifest ----

constexpr char kFullManifest[] = R"({
  "name": "Forecast",
  "description": "Weather for a city.",
  "overview": "Long text.",
  "category": "Data",
  "sector": "Weather",
  "tags": ["weather", "demo"],
  "visibility": "public",
  "price_micro_usd": 2500,
  "mcp": false,
  "version": "1.2.0",
  "runtime": "lua",
  "compute_type": "CPU",
  "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}},
  "declared_keys": ["WEATHER_API_KEY"],
  "egress": ["api.weather.example", "*.example.com:8443"],
  "timeout_ms": 5000,
  "memory_mb": 128,
  "examples": [{"title": "Lisbon", "event": {"city": "Lisbon"}}],
  "handler": "handler.lua"
})";

constexpr char kMinimalManifest[] = R"({"name": "Echo", "description": "d", "category": "c",
  "visibility": "private", "price_micro_usd": 0, "version": "1", "runtime": "python",
  "compute_type": "GPU", "handler": "src/main.py"})";

std::string ErrorsOf(std::string_view text) {
  Manifest m;
  std::string out;
  for (const auto& e : ParseManifest(text, &m)) out += e.field + ": " + e.message + "\n";
  return out;
}

TEST(ManifestTest, ParsesEveryMember) {
  Manifest m;
  auto errors = ParseManifest(kFullManifest, &m);
  ASSERT_TRUE(errors.empty()) << ErrorsOf(kFullManifest);
  EXPECT_EQ(m.function_id, "");
  EXPECT_EQ(m.name, "Forecast");
  EXPECT_EQ(m.overview, "Long text.");
  EXPECT_EQ(m.sector, "Weather");
  EXPECT_EQ(m.tags, (std::vector<std::string>{"weather", "demo"}));
  EXPECT_EQ(m.visibility, "public");
  EXPECT_EQ(m.price_micro_usd, 2500);
  EXPECT_EQ(m.mcp, false);
  EXPECT_EQ(m.version, "1.2.0");
  EXPECT_EQ(m.runtime, "lua");
  EXPECT_EQ(m.compute_type, "CPU");
  EXPECT_EQ(m.input_schema, R"({"type":"object","properties":{"city":{"type":"string"}}})");
  EXPECT_EQ(m.declared_keys, std::vector<std::string>{"WEATHER_API_KEY"});
  EXPECT_EQ(m.egress, (std::vector<std::string>{"api.weather.example", "*.example.com:8443"}));
  EXPECT_EQ(m.timeout_ms, 5000);
  EXPECT_EQ(m.memory_mb, 128);
  EXPECT_EQ(m.examples, R"([{"title":"Lisbon","event":{"city":"Lisbon"}}])");
  EXPECT_EQ(m.handler, "handler.lua");
}

TEST(ManifestTest, OptionalMembersStayUnset) {
  Manifest m;
  ASSERT_TRUE(ParseManifest(kMinimalManifest, &m).empty()) << ErrorsOf(kMinimalManifest);
  EXPECT_FALSE(m.overview.has_value());
  EXPECT_FALSE(m.sector.has_value());
  EXPECT_FALSE(m.tags.has_value());
  EXPECT_FALSE(m.mcp.has_value());
  EXPECT_FALSE(m.declared_keys.has_value());
  EXPECT_FALSE(m.egress.has_value());
  EXPECT_FALSE(m.timeout_ms.has_value());
  EXPECT_FALSE(m.memory_mb.has_value());
  EXPECT_FALSE(m.examples.has_value());
  EXPECT_EQ(m.input_schema, R"({"type":"object"})");
  EXPECT_EQ(m.handler, "src/main.py");
}

TEST(ManifestTest, KeepsAFunctionId) {
  std::string text = R"({"function_id": "123e4567-e89b-42d3-a456-426614174000",)" +
                     std::string(kMinimalManifest).substr(1);
  Manifest m;
  ASSERT_TRUE(ParseManifest(text, &m).empty()) << ErrorsOf(text);
  EXPECT_EQ(m.function_id, "123e4567-e89b-42d3-a456-426614174000");
}

TEST(ManifestTest, ReportsEveryMissingMember) {
  EXPECT_EQ(ErrorsOf("{}"),
            "name: is required\n"
            "description: is required\n"
            "category: is required\n"
            "visibility: is required\n"
            "price_micro_usd: is required\n"
            "version: is required\n"
            "runtime: is required\n"
            "compute_type: is required\n"
            "handler: is required\n");
}

TEST(ManifestTest, ReportsWrongTypesAndValues) {
  std::string errors = ErrorsOf(R"({
    "function_id": "not-a-uuid", "name": "", "description": 5, "category": "c",
    "tags": "x", "visibility": "secret", "price_micro_usd": -1, "mcp": "yes",
    "version": "1.2.3.4.5", "runtime": "ruby", "compute_type": "cpu",
    "input_schema": [], "declared_keys": ["OK", "not-ok"], "timeout_ms": 0,
    "memory_mb": 1.5, "examples": {}, "handler": "/etc/passwd", "timeout": 5,
    "egress": "*"})");
  for (const char* expected : {
           "timeout: is not a manifest field",
           "function_id: must be the UUID that toolgate publish wrote",
           "name: must not be empty",
           "description: must be a string",
           "tags: must be an array of strings",
           "visibility: must be one of: \"public\" \"private\"",
           "price_micro_usd: must not be negative",
           "mcp: must be true or false",
           "version: must be 1 to 4 dot-separated numbers",
           "runtime: must be one of: \"python\" \"javascript\" \"lua\"",
           "compute_type: must be one of: \"CPU\" \"GPU\"",
           "input_schema: must be an object",
           "declared_keys: \"not-ok\" must match",
           "egress: must be an array of strings",
           "timeout_ms: must be at least 1",
           "memory_mb: must be an integer",
           "examples: must be an array",
           "handler: must be a path relative to toolgate.json",
       }) {
    EXPECT_NE(errors.find(expected), std::string::npos) << expected << "\nin:\n" << errors;
  }
}

TEST(ManifestTest, RejectsNonObjects) {
  EXPECT_NE(ErrorsOf("{").find("toolgate.json: is not JSON"), std::string::npos);
  EXPECT_EQ(ErrorsOf("[]"), "toolgate.json: must be a JSON object\n");
}

TEST(ManifestTest, NullFunctionIdIsAnError) {
  // A null would otherwise survive next to the id that publish writes.
  std::string text = R"({"function_id": null,)" + std::string(kMinimalManifest).substr(1);
  EXPECT_NE(ErrorsOf(text).find("function_id:"), std::string::npos);
}

TEST(ManifestTest, LeavesOutputUntouchedOnErrors) {
  Manifest m;
  m.name = "before";
  EXPECT_FALSE(ParseManifest(R"({"name":"after"})", &m).empty());
  EXPECT_EQ(m.name, "before");
}

TEST(RequestBodyTest, FunctionBodyCarriesTheFunctionMembers) {
  Manifest m;
  ASSERT_TRUE(ParseManifest(kFullManifest, &m).empty());
  EXPECT_EQ(FunctionRequestBody(m),
            R"({"name":"Forecast","description":"Weather for a city.","overview":"Long text.",)"
            R"("category":"Data","sector":"Weather","tags":["weather","demo"],)"
            R"("visibility":"public","price_micro_usd":2500,"mcp":false})");
}

TEST(RequestBodyTest, VersionBodyCarriesTheCode) {
  Manifest m;
  ASSERT_TRUE(ParseManifest(kFullManifest, &m).empty());
  EXPECT_EQ(VersionRequestBody(m, "return function(e) return \"x\" end\n"),
            R"({"version":"1.2.0","runtime":"lua","compute_type":"CPU",)"
            R"("code":"return function(e) return \"x\" end\n",)"
            R"("input_schema":{"type":"object","properties":{"city":{"type":"string"}}},)"
            R"("declared_keys":["WEATHER_API_KEY"],)"
            R"("egress":["api.weather.example","*.example.com:8443"],)"
            R"("timeout_ms":5000,"memory_mb":128,)"
            R"("examples":[{"title":"Lisbon","event":{"city":"Lisbon"}}],"price_micro_usd":2500})");
}

TEST(RequestBodyTest, MinimalBodiesOmitWhatTheManifestLacks) {
  Manifest m;
  ASSERT_TRUE(ParseManifest(kMinimalManifest, &m).empty());
  EXPECT_EQ(FunctionRequestBody(m),
            R"({"name":"Echo","description":"d","category":"c","visibility":"private",)"
            R"("price_micro_usd":0})");
  EXPECT_EQ(VersionRequestBody(m, "def service_handler(e, c): return e"),
            R"({"version":"1","runtime":"python","compute_type":"GPU",)"
            R"("code":"def service_handler(e, c): return e","input_schema":{"type":"object"},)"
            R"("price_micro_usd":0})");
}

// ---- WithFunctionId ----

constexpr char kId[] = "123e4567-e89b-42d3-a456-426614174000";

TEST(WithFunctionIdTest, InsertsAsFirstMemberWithTheSameIndent) {
  EXPECT_EQ(WithFunctionId("{\n  \"name\": \"x\",\n  \"a\": 1\n}\n", kId),
            "{\n  \"function_id\": \"123e4567-e89b-42d3-a456-426614174000\",\n"
            "  \"name\": \"x\",\n  \"a\": 1\n}\n");
  EXPECT_EQ(
      WithFunctionId("{\n\t\"name\": \"x\"\n}", kId),
      "{\n\t\"function_id\": \"123e4567-e89b-42d3-a456-426614174000\",\n\t\"name\": \"x\"\n}");
}

TEST(WithFunctionIdTest, CompactManifest) {
  EXPECT_EQ(WithFunctionId(R"({"name":"x"})", kId),
            R"({"function_id": "123e4567-e89b-42d3-a456-426614174000", "name":"x"})");
}

TEST(WithFunctionIdTest, ResultParsesToTheSameManifestPlusTheId) {
  std::string text = WithFunctionId(kFullManifest, kId);
  Manifest before, after;
  ASSERT_TRUE(ParseManifest(kFullManifest, &before).empty());
  ASSERT_TRUE(ParseManifest(text, &after).empty()) << text;
  EXPECT_EQ(after.function_id, kId);
  EXPECT_EQ(FunctionRequestBody(after), FunctionRequestBody(before));
  EXPECT_EQ(VersionRequestBody(after, "c"), VersionRequestBody(before, "c"));
}

// ---- Output ----

TEST(DescribeHttpErrorTest, ProblemWithFieldErrors) {
  EXPECT_EQ(DescribeHttpError(422, R"({"type":"urn:toolgate:error:validation_failed",)"
                                   R"("title":"Validation failed","status":422,)"
                                   R"("detail":"Fix the fields listed in errors.",)"
                                   R"("code":"validation_failed","request_id":"r",)"
                                   R"("errors":[{"field":"version","message":"is taken"},)"
                                   R"({"field":"code","message":"line 3: syntax error"}]})"),
            "error: Validation failed: Fix the fields listed in errors.\n"
            "  version: is taken\n"
            "  code: line 3: syntax error\n");
}

TEST(DescribeHttpErrorTest, ProblemWithoutDetail) {
  EXPECT_EQ(DescribeHttpError(404, R"({"title":"Not found","status":404})"), "error: Not found\n");
}

TEST(DescribeHttpErrorTest, AnythingElseShowsStatusAndBody) {
  EXPECT_EQ(DescribeHttpError(502, "Bad Gateway\n"), "error: HTTP 502: Bad Gateway\n");
  EXPECT_EQ(DescribeHttpError(500, ""), "error: HTTP 500\n");
  EXPECT_EQ(DescribeHttpError(400, R"({"message":"x"})"), "error: HTTP 400: {\"message\":\"x\"}\n");
}

TEST(PrettyJsonTest, IndentsNestedValues) {
  EXPECT_EQ(PrettyJson(R"({"a":1,"b":[true,null,"s"],"c":{},"d":[],"e":{"f":"g\"h"}})"),
            "{\n"
            "  \"a\": 1,\n"
            "  \"b\": [\n"
            "    true,\n"
            "    null,\n"
            "    \"s\"\n"
            "  ],\n"
            "  \"c\": {},\n"
            "  \"d\": [],\n"
            "  \"e\": {\n"
            "    \"f\": \"g\\\"h\"\n"
            "  }\n"
            "}");
}

TEST(PrettyJsonTest, ScalarsAndNonJson) {
  EXPECT_EQ(PrettyJson("42"), "42");
  EXPECT_EQ(PrettyJson("not json"), "not json");
  EXPECT_EQ(PrettyJson(R"({"body":"{\"x\":1}"})"), "{\n  \"body\": \"{\\\"x\\\":1}\"\n}");
}

// ---- Usage errors never reach the network ----

TEST(RunClientCommandTest, UsageErrorsExitTwo) {
  unsetenv("TOOLGATE_API_KEY");
  unsetenv("TOOLGATE_PROFILE");
  // No saved session either.
  setenv("XDG_CONFIG_HOME", "/nonexistent-config-dir", 1);
  // An address nothing listens on: a usage error must be found before any request.
  setenv("TOOLGATE_URL", "http://127.0.0.1:9", 1);
  EXPECT_EQ(RunClientCommand({"bogus"}), 2);
  EXPECT_EQ(RunClientCommand({"keys"}), 2);
  EXPECT_EQ(RunClientCommand({"keys", "create"}), 2);  // --name missing
  EXPECT_EQ(RunClientCommand({"keys", "create", "--name", "k", "--scopes", ","}), 2);
  EXPECT_EQ(RunClientCommand({"keys", "revoke"}), 2);  // ID missing
  EXPECT_EQ(RunClientCommand({"keys", "list", "extra"}), 2);
  EXPECT_EQ(RunClientCommand({"balance", "--nope", "1"}), 2);
  EXPECT_EQ(RunClientCommand({"topup", "--amount", "1.5"}), 2);
  EXPECT_EQ(RunClientCommand({"secrets", "create", "--name", "n"}), 2);  // no value
  EXPECT_EQ(
      RunClientCommand({"secrets", "create", "--name", "n", "--value", "v", "--value-file", "f"}),
      2);
  EXPECT_EQ(RunClientCommand({"invoke", "f"}), 2);  // no API key and no session
  EXPECT_EQ(RunClientCommand({"invoke", "f", "--api-key", "k", "--event", "{oops"}), 2);
  EXPECT_EQ(RunClientCommand({"invoke", "f", "--api-key", "k", "--env-keys", "1BAD=x"}), 2);
  EXPECT_EQ(RunClientCommand({"publish", "/nonexistent-dir"}), 2);
  EXPECT_EQ(RunClientCommand({"publish", "dir", "--bump", "huge"}), 2);
  EXPECT_EQ(RunClientCommand({"balance", "--json=yes"}), 2);
  EXPECT_EQ(RunClientCommand({"logs", "f", "--interval-ms", "5"}), 2);
  EXPECT_EQ(RunClientCommand({"completion", "fish"}), 2);
  EXPECT_EQ(RunClientCommand({"executions"}), 2);  // list or show
  EXPECT_EQ(RunClientCommand({"balance", "--profile", "bad/name"}), 2);
  EXPECT_EQ(RunClientCommand({"--no-such-flag"}), 2);
  EXPECT_EQ(RunClientCommand({"balance", "--no-such-flag"}), 2);
  EXPECT_EQ(RunClientCommand({"workspace"}), 2);
  EXPECT_EQ(RunClientCommand({"workspace", "env-keys"}), 2);
  EXPECT_EQ(RunClientCommand({"workspace", "add"}), 2);  // FUNCTION_ID missing
  EXPECT_EQ(RunClientCommand({"workspace", "list", "extra"}), 2);
  EXPECT_EQ(RunClientCommand({"workspace", "env-keys", "set", "f"}), 2);  // no mapping
  EXPECT_EQ(RunClientCommand({"workspace", "env-keys", "set", "f", "1BAD=s"}), 2);
  EXPECT_EQ(RunClientCommand({"workspace", "env-keys", "set", "f", "A=s", "A=t"}), 2);
  EXPECT_EQ(RunClientCommand({"workspace", "env-keys", "show"}), 2);
  // Spending limits: a bad amount, no limit named, or a key that is no id, before any request.
  EXPECT_EQ(RunClientCommand({"budget", "set"}), 2);
  EXPECT_EQ(RunClientCommand({"budget", "set", "--daily-usd", "-5"}), 2);
  EXPECT_EQ(RunClientCommand({"budget", "set", "--daily-usd", "5", "--monthly-usd", "1.0000001"}),
            2);
  EXPECT_EQ(RunClientCommand({"budget", "set", "--monthly-usd", "0"}), 2);
  EXPECT_EQ(RunClientCommand({"budget", "set", "--key", "k1", "--daily-usd", "5"}), 2);
  EXPECT_EQ(RunClientCommand({"budget", "show", "--key", "not-a-uuid"}), 2);
  EXPECT_EQ(RunClientCommand({"budget", "show", "extra"}), 2);
  EXPECT_EQ(RunClientCommand({"usage", "--group-by", "week"}), 2);
  // A profile that was never saved is an error, not a quiet fall back to the default server.
  EXPECT_EQ(RunClientCommand({"balance", "--profile", "nosuch"}), 2);
  setenv("TOOLGATE_PROFILE", "nosuch", 1);
  EXPECT_EQ(RunClientCommand({"balance"}), 2);
  unsetenv("TOOLGATE_PROFILE");
  unsetenv("TOOLGATE_URL");
  unsetenv("XDG_CONFIG_HOME");
}

// ---- Spending limits ----

TEST(ParseLimitUsdTest, ReadsDecimalUsdExactlyAsMicroUsd) {
  const std::vector<std::pair<std::string, int64_t>> cases = {
      {"5", 5'000'000},
      {"2.50", 2'500'000},
      {"0.000001", 1},
      // 0.1 + 0.2 is not 0.3 in binary floating point; here it is exact.
      {"0.3", 300'000},
      {"1234567.891011", 1'234'567'891'011},
      {"007", 7'000'000},
      {"1000000000000", 1'000'000'000'000'000'000},  // the API's largest limit
  };
  for (const auto& [text, micro] : cases) {
    auto parsed = ParseLimitUsd(text);
    ASSERT_TRUE(parsed.ok()) << text << ": " << parsed.status().ToString();
    ASSERT_TRUE(parsed->has_value()) << text;
    EXPECT_EQ(**parsed, micro) << text;
  }
  auto none = ParseLimitUsd("none");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
}

TEST(ParseLimitUsdTest, RefusesWhatIsNoLimit) {
  for (const char* text :
       {"", "0", "0.000000", "-1", "+1", "1e3", "1,000", "$5", "5.", ".5", "1.0000001",
        "1000000000000.000001", "99999999999999", "NONE", " 5", "5 ", "１"}) {
    auto parsed = ParseLimitUsd(text);
    EXPECT_FALSE(parsed.ok()) << "\"" << text << "\"";
  }
  EXPECT_NE(ParseLimitUsd("0").status().message().find("none removes the limit"),
            std::string::npos);
  EXPECT_NE(ParseLimitUsd("0.1234567").status().message().find("6 decimals"), std::string::npos);
}

TEST(BudgetRequestBodyTest, ChangesOnlyTheLimitsNamed) {
  const std::string current =
      R"({"daily_micro_usd":5000000,"monthly_micro_usd":null,"spent_today_micro_usd":12,)"
      R"("spent_this_month_micro_usd":40})";
  LimitChanges monthly_only;
  monthly_only.monthly = std::optional<int64_t>(90'000'000);
  auto body = BudgetRequestBody(current, monthly_only);
  ASSERT_TRUE(body.ok()) << body.status().ToString();
  EXPECT_EQ(*body, R"({"daily_micro_usd":5000000,"monthly_micro_usd":90000000})");

  LimitChanges clear_daily;
  clear_daily.daily = std::optional<int64_t>();
  body = BudgetRequestBody(current, clear_daily);
  ASSERT_TRUE(body.ok());
  EXPECT_EQ(*body, R"({"daily_micro_usd":null,"monthly_micro_usd":null})");

  EXPECT_FALSE(BudgetRequestBody("[]", monthly_only).ok());
  EXPECT_FALSE(BudgetRequestBody(R"({"daily_micro_usd":"5"})", monthly_only).ok());
}

TEST(WithVersionTest, ReplacesOnlyTheTopLevelVersion) {
  std::string text = R"({
  "name": "v", "examples": [{"event": {"version": "9.9.9"}}],
  "input_schema": {"properties": {"version": {"type": "string"}}},
  "version"  :  "1.2.3",
  "runtime": "lua"
})";
  auto updated = WithVersion(text, "1.2.4");
  ASSERT_TRUE(updated.ok()) << updated.status().ToString();
  std::string expected = text;
  expected.replace(expected.find("\"1.2.3\""), 7, "\"1.2.4\"");
  EXPECT_EQ(*updated, expected);
  EXPECT_FALSE(WithVersion(R"({"name": "x", "o": {"version": "1"}})", "2").ok());
  EXPECT_FALSE(WithVersion(R"({"version": 1})", "2").ok());
  EXPECT_EQ(*WithVersion(R"({"a":"\"version\"","version":"1"})", "2"),
            R"({"a":"\"version\"","version":"2"})");
}

TEST(PublishHintTest, CurlLineQuotesForTheShell) {
  EXPECT_EQ(CurlLine("http://h:1/api/v1/functions/f/invoke", R"({"q":"it's"})"),
            "curl -X POST 'http://h:1/api/v1/functions/f/invoke' -H \"Authorization: "
            "$TOOLGATE_API_KEY\" -H 'Content-Type: application/json' -d "
            "'{\"event\":{\"q\":\"it'\\''s\"}}'");
}

TEST(RunClientCommandTest, HelpExitsZero) {
  EXPECT_EQ(RunClientCommand({"help"}), 0);
  EXPECT_EQ(RunClientCommand({"--help"}), 0);
  EXPECT_EQ(RunClientCommand({"keys", "create", "--help"}), 0);
  EXPECT_EQ(RunClientCommand({"version"}), 0);
  EXPECT_EQ(RunClientCommand({"completion", "bash"}), 0);
  EXPECT_EQ(RunClientCommand({"workspace", "env-keys", "set", "--help"}), 0);
}

TEST(RunClientCommandTest, UnreachableServerExitsOne) {
  EXPECT_EQ(RunClientCommand({"balance", "--url", "http://127.0.0.1:9", "--api-key", "k"}), 1);
}

}  // namespace
}  // namespace toolgate::cli
