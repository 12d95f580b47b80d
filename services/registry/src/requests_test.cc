#include "toolgate/registry/requests.h"

#include <gtest/gtest.h>

#include <string>

#include "test_bundles.h"
#include "toolgate/base/crypto.h"

namespace toolgate::registry {
namespace {

// A checker that accepts everything except code containing "BAD", and remembers what it saw.
struct FakeChecker {
  int calls = 0;
  Status result_for_bad = Status::InvalidArgument("handler:1: syntax error near BAD");
  SyntaxChecker Fn() {
    return [this](std::string_view, std::string_view code) {
      ++calls;
      return code.find("BAD") != std::string_view::npos ? result_for_bad : Status::Ok();
    };
  }
};

// A valid request with one member replaced (or removed, when value is empty).
std::string Request(const std::string& member = "", const std::string& value = "") {
  std::vector<std::pair<std::string, std::string>> fields = {
      {"version", R"("1.0.0")"},
      {"runtime", R"("python")"},
      {"compute_type", R"("CPU")"},
      {"code", R"("def service_handler(event, context):\n    return event")"},
  };
  bool replaced = false;
  for (auto& [k, v] : fields) {
    if (k == member) {
      v = value;
      replaced = true;
    }
  }
  if (!replaced && !member.empty()) fields.emplace_back(member, value);
  std::string out = "{";
  for (const auto& [k, v] : fields) {
    if (v.empty()) continue;
    if (out.size() > 1) out += ",";
    out += "\"" + k + "\":" + v;
  }
  return out + "}";
}

// The field errors of a rejected request, "field: message" each.
std::vector<std::string> Errors(const std::variant<v1::Problem, VersionDraft>& result) {
  std::vector<std::string> out;
  if (const auto* p = std::get_if<v1::Problem>(&result)) {
    for (const auto& e : p->errors()) out.push_back(e.field() + ": " + e.message());
  }
  return out;
}

bool RejectsField(const std::string& member, const std::string& value, const std::string& field) {
  FakeChecker checker;
  auto result = ParseVersionRequest(Request(member, value), checker.Fn());
  const auto* p = std::get_if<v1::Problem>(&result);
  if (p == nullptr || p->status() != 422 || p->code() != "validation_failed") return false;
  for (const auto& e : p->errors()) {
    if (e.field() == field) return true;
  }
  return false;
}

TEST(VersionRequest, ValidRequestGetsDefaults) {
  FakeChecker checker;
  auto result = ParseVersionRequest(Request(), checker.Fn());
  ASSERT_TRUE(std::holds_alternative<VersionDraft>(result))
      << testing::PrintToString(Errors(result));
  const auto& d = std::get<VersionDraft>(result);
  EXPECT_EQ(d.version, "1.0.0");
  EXPECT_EQ(d.parsed.parts[0], 1u);
  EXPECT_EQ(d.runtime, "python");
  EXPECT_EQ(d.compute_type, "CPU");
  EXPECT_EQ(d.timeout_ms, 30000);
  EXPECT_EQ(d.memory_mb, 256);
  EXPECT_EQ(d.input_schema_json, R"({"type":"object"})");
  EXPECT_EQ(d.examples_json, "[]");
  EXPECT_TRUE(d.declared_keys.empty());
  EXPECT_EQ(checker.calls, 1);
}

TEST(VersionRequest, MemoryDefaultDependsOnRuntime) {
  FakeChecker checker;
  for (const char* rt : {"lua", "javascript"}) {
    auto result =
        ParseVersionRequest(Request("runtime", std::string("\"") + rt + "\""), checker.Fn());
    ASSERT_TRUE(std::holds_alternative<VersionDraft>(result)) << rt;
    EXPECT_EQ(std::get<VersionDraft>(result).memory_mb, 128) << rt;
  }
}

TEST(VersionRequest, BodyThatIsNotAnObjectIs400) {
  FakeChecker checker;
  for (const char* body : {"", "nope", "[1]", "\"x\""}) {
    auto result = ParseVersionRequest(body, checker.Fn());
    ASSERT_TRUE(std::holds_alternative<v1::Problem>(result)) << body;
    EXPECT_EQ(std::get<v1::Problem>(result).status(), 400) << body;
    EXPECT_EQ(std::get<v1::Problem>(result).code(), "invalid_json") << body;
  }
}

TEST(VersionRequest, Version) {
  EXPECT_TRUE(RejectsField("version", "", "version"));  // absent
  for (const char* bad : {R"("")", R"("1.")", R"(".1")", R"("1.2.3.4.5")", R"("1234567890")",
                          R"("v1")", R"("1.0-beta")", R"(" 1.0")", "1.0", "1"}) {
    EXPECT_TRUE(RejectsField("version", bad, "version")) << bad;
  }
  for (const char* good : {R"("0")", R"("1.2.3.4")", R"("999999999.0")", R"("0.0.4")"}) {
    EXPECT_FALSE(RejectsField("version", good, "version")) << good;
  }
}

TEST(VersionRequest, Runtime) {
  EXPECT_TRUE(RejectsField("runtime", "", "runtime"));
  EXPECT_TRUE(RejectsField("runtime", R"("ruby")", "runtime"));
  EXPECT_TRUE(RejectsField("runtime", R"("Python")", "runtime"));
  EXPECT_TRUE(RejectsField("runtime", "3", "runtime"));
}

TEST(VersionRequest, ComputeType) {
  EXPECT_TRUE(RejectsField("compute_type", "", "compute_type"));
  EXPECT_TRUE(RejectsField("compute_type", R"("TPU")", "compute_type"));
  EXPECT_TRUE(RejectsField("compute_type", R"("cpu")", "compute_type"));
}

TEST(VersionRequest, GpuOnlyForPython) {
  FakeChecker checker;
  EXPECT_TRUE(std::holds_alternative<VersionDraft>(
      ParseVersionRequest(Request("compute_type", R"("GPU")"), checker.Fn())));
  for (const char* rt : {"lua", "javascript"}) {
    std::string body = Request("compute_type", R"("GPU")");
    body.replace(body.find("\"python\""), 8, std::string("\"") + rt + "\"");
    auto errors = Errors(ParseVersionRequest(body, checker.Fn()));
    ASSERT_EQ(errors.size(), 1u) << rt;
    EXPECT_EQ(errors[0], "compute_type: GPU is available for the python runtime only");
  }
}

TEST(VersionRequest, TimeoutRange) {
  EXPECT_TRUE(RejectsField("timeout_ms", "0", "timeout_ms"));
  EXPECT_TRUE(RejectsField("timeout_ms", "900001", "timeout_ms"));
  EXPECT_TRUE(RejectsField("timeout_ms", "1.5", "timeout_ms"));
  EXPECT_TRUE(RejectsField("timeout_ms", R"("100")", "timeout_ms"));
  EXPECT_FALSE(RejectsField("timeout_ms", "1", "timeout_ms"));
  EXPECT_FALSE(RejectsField("timeout_ms", "900000", "timeout_ms"));
}

TEST(VersionRequest, MemoryRange) {
  EXPECT_TRUE(RejectsField("memory_mb", "0", "memory_mb"));
  EXPECT_TRUE(RejectsField("memory_mb", "4097", "memory_mb"));
  EXPECT_FALSE(RejectsField("memory_mb", "4096", "memory_mb"));
  FakeChecker checker;
  auto result = ParseVersionRequest(Request("memory_mb", "512"), checker.Fn());
  ASSERT_TRUE(std::holds_alternative<VersionDraft>(result));
  EXPECT_EQ(std::get<VersionDraft>(result).memory_mb, 512);
}

TEST(VersionRequest, PriceIsOptionalAndBounded) {
  EXPECT_TRUE(RejectsField("price_micro_usd", "-1", "price_micro_usd"));
  EXPECT_TRUE(RejectsField("price_micro_usd", "1.5", "price_micro_usd"));
  FakeChecker checker;
  auto own = ParseVersionRequest(Request("price_micro_usd", "40000000"), checker.Fn());
  ASSERT_TRUE(std::holds_alternative<VersionDraft>(own));
  EXPECT_EQ(std::get<VersionDraft>(own).price_micro_usd, 40000000);
  auto inherited = ParseVersionRequest(Request(), checker.Fn());
  ASSERT_TRUE(std::holds_alternative<VersionDraft>(inherited));
  EXPECT_FALSE(std::get<VersionDraft>(inherited).price_micro_usd.has_value());
}

TEST(VersionRequest, DeclaredKeys) {
  EXPECT_TRUE(RejectsField("declared_keys", R"(["1KEY"])", "declared_keys"));
  EXPECT_TRUE(RejectsField("declared_keys", R"(["A-B"])", "declared_keys"));
  EXPECT_TRUE(RejectsField("declared_keys", R"([""])", "declared_keys"));
  EXPECT_TRUE(RejectsField("declared_keys", R"(["KEY","KEY"])", "declared_keys"));
  EXPECT_TRUE(RejectsField("declared_keys", R"("KEY")", "declared_keys"));
  EXPECT_TRUE(RejectsField("declared_keys", R"([1])", "declared_keys"));
  FakeChecker checker;
  auto result = ParseVersionRequest(Request("declared_keys", R"(["API_KEY","_x9"])"), checker.Fn());
  ASSERT_TRUE(std::holds_alternative<VersionDraft>(result));
  EXPECT_EQ(std::get<VersionDraft>(result).declared_keys,
            (std::vector<std::string>{"API_KEY", "_x9"}));
}

TEST(VersionRequest, AnOutputSchemaIsAnObjectSchema) {
  for (const char* bad :
       {"[]", R"("object")", R"({"type":"array"})", R"({"properties":{"n":{"minimum":"1"}}})"}) {
    EXPECT_TRUE(RejectsField("output_schema", bad, "output_schema")) << bad;
  }
  FakeChecker checker;
  auto none = ParseVersionRequest(Request("timeout_ms", "1000"), checker.Fn());
  ASSERT_TRUE(std::holds_alternative<VersionDraft>(none));
  EXPECT_EQ(std::get<VersionDraft>(none).output_schema_json, "");
  auto given = ParseVersionRequest(
      Request("output_schema", R"({"type": "object", "properties": {"sum": {"type": "number"}}})"),
      checker.Fn());
  ASSERT_TRUE(std::holds_alternative<VersionDraft>(given));
  EXPECT_EQ(std::get<VersionDraft>(given).output_schema_json,
            R"({"type":"object","properties":{"sum":{"type":"number"}}})");
}

TEST(VersionRequest, InputSchemaMustBeAnObject) {
  for (const char* bad : {"[]", R"("object")", "1", "true", R"({"type":"text"})",
                          R"({"properties":{"n":{"minimum":"1"}}})", R"({"pattern":"(x"})"}) {
    EXPECT_TRUE(RejectsField("input_schema", bad, "input_schema")) << bad;
  }
  FakeChecker checker;
  auto result = ParseVersionRequest(
      Request("input_schema", R"({"type": "object", "properties": {"b": {}, "a": {}}})"),
      checker.Fn());
  ASSERT_TRUE(std::holds_alternative<VersionDraft>(result));
  // Kept as sent, key order included.
  EXPECT_EQ(std::get<VersionDraft>(result).input_schema_json,
            R"({"type":"object","properties":{"b":{},"a":{}}})");
}

TEST(VersionRequest, Examples) {
  EXPECT_TRUE(RejectsField("examples", R"({})", "examples"));
  EXPECT_TRUE(RejectsField("examples", R"([1])", "examples[0]"));
  EXPECT_TRUE(RejectsField("examples", R"([{"event": {}}])", "examples[0].title"));
  EXPECT_TRUE(RejectsField("examples", R"([{"title": "", "event": {}}])", "examples[0].title"));
  EXPECT_TRUE(RejectsField("examples", R"([{"title": "t"}])", "examples[0].event"));
  EXPECT_TRUE(RejectsField("examples", R"([{"title": "t", "event": 3}])", "examples[0].event"));
  EXPECT_TRUE(RejectsField("examples", R"([{"title":"a","event":{}},{"title":"b","event":[]}])",
                           "examples[1].event"));
  FakeChecker checker;
  auto result = ParseVersionRequest(
      Request(
          "examples",
          R"([{"title": "Hi", "event": {"x": 1}, "extra": 2}, {"title": "s", "event": "raw"}])"),
      checker.Fn());
  ASSERT_TRUE(std::holds_alternative<VersionDraft>(result));
  EXPECT_EQ(std::get<VersionDraft>(result).examples_json,
            R"([{"title":"Hi","event":{"x":1}},{"title":"s","event":"raw"}])");
}

TEST(VersionRequest, Code) {
  EXPECT_TRUE(RejectsField("code", "", "code"));
  EXPECT_TRUE(RejectsField("code", "42", "code"));
  EXPECT_TRUE(RejectsField("code", R"("  \n ")", "code"));
  EXPECT_TRUE(RejectsField("code", R"("x = 1\u0000")", "code"));
  std::string big = "\"" + std::string(kMaxCodeBytes + 1, 'x') + "\"";
  EXPECT_TRUE(RejectsField("code", big, "code"));
}

TEST(VersionRequest, CompileErrorCarriesTheCompilersMessage) {
  FakeChecker checker;
  auto errors = Errors(ParseVersionRequest(Request("code", R"("BAD")"), checker.Fn()));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0], "code: handler:1: syntax error near BAD");
}

TEST(VersionRequest, MissingToolchainIsAnErrorOnRuntime) {
  FakeChecker checker;
  checker.result_for_bad = Status::NotFound("node is not installed");
  std::string body = Request("code", R"("BAD")");
  body.replace(body.find("\"python\""), 8, "\"javascript\"");
  auto errors = Errors(ParseVersionRequest(body, checker.Fn()));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0], "runtime: javascript is not available on this server");
}

TEST(VersionRequest, CheckThatCannotRunIs503) {
  FakeChecker checker;
  checker.result_for_bad = Status::Unavailable("spawn failed");
  auto result = ParseVersionRequest(Request("code", R"("BAD")"), checker.Fn());
  ASSERT_TRUE(std::holds_alternative<v1::Problem>(result));
  EXPECT_EQ(std::get<v1::Problem>(result).status(), 503);
}

TEST(VersionRequest, NoTurnForTheCheckIs503WithRetryAfter) {
  FakeChecker checker;
  checker.result_for_bad = Status::Timeout("every syntax check turn stayed busy");
  auto result = ParseVersionRequest(Request("code", R"("BAD")"), checker.Fn());
  ASSERT_TRUE(std::holds_alternative<v1::Problem>(result));
  const v1::Problem& p = std::get<v1::Problem>(result);
  EXPECT_EQ(p.status(), 503);
  EXPECT_EQ(p.code(), "service_unavailable");
  EXPECT_EQ(p.retry_after_s(), kSyntaxCheckRetryAfterS);
}

TEST(VersionRequest, CheckPastItsLimitIsAnErrorOnCode) {
  FakeChecker checker;
  checker.result_for_bad = Status::InvalidArgument(MemoryLimitMessage(SyntaxCheckLimits{}));
  auto errors = Errors(ParseVersionRequest(Request("code", R"("BAD")"), checker.Fn()));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0], "code: the syntax check exceeded its memory limit of 256 MB");
}

TEST(VersionRequest, NoCompileWhileOtherFieldsAreInvalidAndAllErrorsReported) {
  FakeChecker checker;
  auto errors = Errors(ParseVersionRequest(
      R"({"version": "x", "runtime": "cobol", "compute_type": "CPU", "code": "BAD",
          "timeout_ms": 0, "memory_mb": 99999})",
      checker.Fn()));
  EXPECT_EQ(checker.calls, 0);
  EXPECT_EQ(errors.size(), 4u) << testing::PrintToString(errors);
}

TEST(VersionRequest, EgressIsKeptAsPublished) {
  FakeChecker checker;
  auto result = ParseVersionRequest(
      Request("egress", R"(["api.open-meteo.com", "*.Example.com:8443", "*"])"), checker.Fn());
  ASSERT_TRUE(std::holds_alternative<VersionDraft>(result))
      << testing::PrintToString(Errors(result));
  EXPECT_EQ(std::get<VersionDraft>(result).egress,
            (std::vector<std::string>{"api.open-meteo.com", "*.Example.com:8443", "*"}));
  auto none = ParseVersionRequest(Request("egress", "[]"), checker.Fn());
  ASSERT_TRUE(std::holds_alternative<VersionDraft>(none));
  EXPECT_TRUE(std::get<VersionDraft>(none).egress.empty());
  auto absent = ParseVersionRequest(Request(), checker.Fn());
  ASSERT_TRUE(std::holds_alternative<VersionDraft>(absent));
  EXPECT_TRUE(std::get<VersionDraft>(absent).egress.empty());
}

TEST(VersionRequest, EachBadEgressEntryIsAnErrorOnItsIndex) {
  FakeChecker checker;
  auto errors = Errors(ParseVersionRequest(
      Request("egress", R"(["api.x.com", "*.*.com", 7, "host:99999"])"), checker.Fn()));
  ASSERT_EQ(errors.size(), 3u) << testing::PrintToString(errors);
  EXPECT_EQ(errors[0].rfind("egress[1]: ", 0), 0u) << errors[0];
  EXPECT_NE(errors[0].find("*.*.com"), std::string::npos) << errors[0];
  EXPECT_EQ(errors[1], "egress[2]: must be a string");
  EXPECT_EQ(errors[2].rfind("egress[3]: ", 0), 0u) << errors[2];
  EXPECT_EQ(checker.calls, 0);
  EXPECT_TRUE(RejectsField("egress", R"("api.x.com")", "egress"));
  std::string many = "[";
  for (size_t i = 0; i <= kMaxEgressEntries; ++i) {
    many += (i ? ",\"h" : "\"h") + std::to_string(i) + ".example.com\"";
  }
  EXPECT_TRUE(RejectsField("egress", many + "]", "egress"));
}

// A valid request whose code is the bundle given, in base64, with extra members.
std::string BundleRequest(const std::string& archive, const std::string& extra = "") {
  return R"({"version": "1.0", "runtime": "python", "compute_type": "CPU", "bundle": ")" +
         Base64Encode(archive) + "\"" + extra + "}";
}

TEST(VersionRequest, BundleInBase64WithTheDefaultHandler) {
  FakeChecker checker;
  const std::string archive = Pack({File("handler.py", "def service_handler(e, c):\n  pass\n"),
                                    Dir("lib"), File("lib/util.py")});
  auto result = ParseVersionRequest(BundleRequest(archive), checker.Fn());
  ASSERT_TRUE(std::holds_alternative<VersionDraft>(result))
      << testing::PrintToString(Errors(result));
  const auto& d = std::get<VersionDraft>(result);
  EXPECT_EQ(d.code, "");
  EXPECT_EQ(d.bundle, archive);
  EXPECT_EQ(d.handler, "handler.py");
  EXPECT_EQ(d.bundle_info.digest, HexEncode(Sha256(archive)));
  EXPECT_EQ(d.bundle_info.files, 3);
  EXPECT_EQ(checker.calls, 1);  // the handler's syntax
}

TEST(VersionRequest, BundleUploadedWithANamedHandler) {
  FakeChecker checker;
  const std::string archive =
      Pack({Dir("src"), File("src/main.py", "def service_handler(e, c): 1")});
  auto result = ParseVersionRequest(
      R"({"version": "1.0", "runtime": "python", "compute_type": "CPU",
          "handler": "./src/main.py"})",
      checker.Fn(), BundleCheck(), std::string_view(archive));
  ASSERT_TRUE(std::holds_alternative<VersionDraft>(result))
      << testing::PrintToString(Errors(result));
  EXPECT_EQ(std::get<VersionDraft>(result).handler, "src/main.py");
  EXPECT_EQ(std::get<VersionDraft>(result).bundle, archive);
}

TEST(VersionRequest, BadBundlesAre422OnBundleNamingTheEntry) {
  FakeChecker checker;
  auto errors = Errors(ParseVersionRequest(
      BundleRequest(Pack({File("handler.py"), File("../evil.py")})), checker.Fn()));
  EXPECT_EQ(errors,
            (std::vector<std::string>{"bundle: ../evil.py: a path may not leave the bundle"}));
  errors = Errors(ParseVersionRequest(BundleRequest(Pack({File("main.py")})), checker.Fn()));
  EXPECT_EQ(errors, (std::vector<std::string>{
                        "bundle: handler.py: the handler must be a regular file in the bundle"}));
  errors = Errors(ParseVersionRequest(
      R"({"version": "1.0", "runtime": "lua", "compute_type": "CPU", "bundle": "%%%"})",
      checker.Fn()));
  EXPECT_EQ(errors, (std::vector<std::string>{"bundle: must be a .tar.gz archive in base64"}));
  BundleLimits small;
  small.max_compressed_bytes = 100;
  errors = Errors(
      ParseVersionRequest(BundleRequest(std::string(1000, 'x')), checker.Fn(), BundleCheck(small)));
  EXPECT_EQ(errors, (std::vector<std::string>{"bundle: is over 0 MiB compressed"}));
  EXPECT_EQ(checker.calls, 0);
}

TEST(VersionRequest, BundleHandlerSyntaxErrorIsOnHandler) {
  FakeChecker checker;
  auto errors =
      Errors(ParseVersionRequest(BundleRequest(Pack({Dir("src"), File("src/main.py", "BAD")}),
                                               R"(, "handler": "src/main.py")"),
                                 checker.Fn()));
  EXPECT_EQ(errors,
            (std::vector<std::string>{"handler: src/main.py: handler:1: syntax error near BAD"}));
}

TEST(VersionRequest, AnEntryFileOverOneMiBIsNotSyntaxChecked) {
  FakeChecker checker;
  const std::string big = "BAD" + std::string(kMaxHandlerReadBytes, ' ');
  auto result = ParseVersionRequest(BundleRequest(Pack({File("handler.py", big)})), checker.Fn());
  ASSERT_TRUE(std::holds_alternative<VersionDraft>(result))
      << testing::PrintToString(Errors(result));
  EXPECT_EQ(checker.calls, 0);
}

TEST(VersionRequest, CodeAndBundleExcludeEachOther) {
  FakeChecker checker;
  const std::string archive = Pack({File("handler.py")});
  EXPECT_EQ(
      Errors(ParseVersionRequest(BundleRequest(archive, R"(, "code": "x = 1")"), checker.Fn())),
      (std::vector<std::string>{"code: give either code or a bundle, not both"}));
  EXPECT_EQ(Errors(ParseVersionRequest(BundleRequest(archive), checker.Fn(), BundleCheck(),
                                       std::string_view(archive))),
            (std::vector<std::string>{
                "bundle: is uploaded as the \"bundle\" part; the metadata may not hold one too"}));
  EXPECT_TRUE(RejectsField("handler", R"("handler.py")", "handler"));  // with single-file code
  EXPECT_TRUE(RejectsField("code", "", "code"));
  EXPECT_TRUE(RejectsField("handler", R"("../x.py")", "handler"));
}

TEST(FunctionFields, CreateRequiresTheContractFields) {
  auto result = ParseFunctionFields("{}", /*creating=*/true);
  ASSERT_TRUE(std::holds_alternative<v1::Problem>(result));
  std::vector<std::string> fields;
  for (const auto& e : std::get<v1::Problem>(result).errors()) fields.push_back(e.field());
  EXPECT_EQ(fields, (std::vector<std::string>{"name", "description", "category", "visibility",
                                              "price_micro_usd"}));
}

TEST(FunctionFields, CreateFillsDefaults) {
  auto result = ParseFunctionFields(
      R"({"name": "Weather", "description": "d", "category": "data", "visibility": "public",
          "price_micro_usd": 0})",
      true);
  ASSERT_TRUE(std::holds_alternative<FunctionFields>(result));
  const auto& f = std::get<FunctionFields>(result);
  EXPECT_EQ(*f.name, "Weather");
  EXPECT_EQ(*f.overview, "");
  EXPECT_EQ(*f.sector, "");
  EXPECT_TRUE(f.tags->empty());
  EXPECT_FALSE(*f.mcp);
  EXPECT_EQ(*f.icon_url, "");
}

TEST(FunctionFields, PatchTakesOnlyWhatIsPresentAndValidatesIt) {
  auto ok = ParseFunctionFields(R"({"price_micro_usd": 1500, "mcp": true})", false);
  ASSERT_TRUE(std::holds_alternative<FunctionFields>(ok));
  const auto& f = std::get<FunctionFields>(ok);
  EXPECT_EQ(*f.price_micro_usd, 1500);
  EXPECT_TRUE(*f.mcp);
  EXPECT_FALSE(f.name.has_value());
  EXPECT_FALSE(f.tags.has_value());

  for (const char* bad :
       {R"({"price_micro_usd": -1})", R"({"price_micro_usd": 1.5})", R"({"visibility": "all"})",
        R"({"name": ""})", R"({"tags": ["a", "a"]})", R"({"tags": [""]})", R"({"mcp": "yes"})",
        R"({"icon_url": "http://example.com/i.png"})", R"({"icon_url": "javascript:void"})",
        R"({"icon_url": "https://"})", R"({"icon_url": "https://a b"})", R"({"icon_url": 7})"}) {
    auto result = ParseFunctionFields(bad, false);
    ASSERT_TRUE(std::holds_alternative<v1::Problem>(result)) << bad;
    EXPECT_EQ(std::get<v1::Problem>(result).status(), 422) << bad;
  }
}

TEST(FunctionFields, AnIconIsAnHttpsUrlOrNone) {
  auto set = ParseFunctionFields(R"({"icon_url": "https://example.com/icon.png"})", false);
  ASSERT_TRUE(std::holds_alternative<FunctionFields>(set));
  EXPECT_EQ(*std::get<FunctionFields>(set).icon_url, "https://example.com/icon.png");
  auto cleared = ParseFunctionFields(R"({"icon_url": ""})", false);
  ASSERT_TRUE(std::holds_alternative<FunctionFields>(cleared));
  EXPECT_EQ(*std::get<FunctionFields>(cleared).icon_url, "");
}

TEST(FunctionFields, NameLimitCountsCharactersNotBytes) {
  std::string name;
  for (size_t i = 0; i < kMaxNameChars; ++i) name += "\xC3\xA9";  // é
  EXPECT_TRUE(std::holds_alternative<FunctionFields>(
      ParseFunctionFields("{\"name\": \"" + name + "\"}", false)));
  EXPECT_TRUE(std::holds_alternative<v1::Problem>(
      ParseFunctionFields("{\"name\": \"" + name + "e\"}", false)));
}

}  // namespace
}  // namespace toolgate::registry
