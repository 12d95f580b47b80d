// Python and JavaScript tools through the whole system: contract sections 3 and 5 as for Lua,
// run by the executor's sandboxed worker pools.
#include <gtest/gtest.h>

#include <string>

#include "system.h"
#include "toolgate/base/json_writer.h"
#include "toolgate/base/time.h"

namespace toolgate::testing {
namespace {

const auto* const kEnv = ::testing::AddGlobalTestEnvironment(new SharedSystem());

// Publishes a CPU version of runtime; extra_members adds fields such as "timeout_ms":300.
void Publish(Account& account, const std::string& function_id, const std::string& version,
             const std::string& runtime, const std::string& code,
             const std::string& extra_members = "") {
  std::string body = R"({"version":")" + version + R"(","runtime":")" + runtime +
                     R"(","compute_type":"CPU","input_schema":{"type":"object"},"code":)" +
                     JsonWriter::Quote(code);
  if (!extra_members.empty()) body += "," + extra_members;
  body += "}";
  auto r = account.session().Post("/api/v1/functions/" + function_id + "/versions", body);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->status, 201) << r->body;
}

std::string Body(const http::HttpResponse& r) {
  return StringField(r.body, "body");
}
std::string ErrorType(const http::HttpResponse& r) {
  return StringField(Body(r), "errorType");
}
std::string ErrorMessage(const http::HttpResponse& r) {
  return StringField(Body(r), "errorMessage");
}
std::string ExecutionId(const http::HttpResponse& r) {
  auto doc = Json(r.body);
  std::string_view id;
  if (doc.root["summary"]["execution_id"].get(id) != simdjson::SUCCESS) return "";
  return std::string(id);
}

struct Runtime {
  const char* name;
  const char* echo;
  const char* status;
  const char* number;
  const char* raise;
  const char* context;
  const char* loop;
  const char* bomb;
  const char* logs;
};

const Runtime kPython = {
    "python",
    "def service_handler(event, context):\n    return event\n",
    "def service_handler(event, context):\n"
    "    return {'statusCode': event['code'], 'body': event['body']}\n",
    "def service_handler(event, context):\n    return 42\n",
    "def service_handler(event, context):\n    raise ValueError('bad input ' + str(event['n']))\n",
    "import os\n"
    "def service_handler(event, context):\n"
    "    return {'env': context['env'], 'environ': os.environ.get('API_TOKEN'),\n"
    "            'caller': context['caller_org_id'], 'version': context['version'],\n"
    "            'deadline': context['deadline_ms'] > 0}\n",
    "def service_handler(event, context):\n    while True:\n        pass\n",
    "def service_handler(event, context):\n    return len(bytearray(1 << 30))\n",
    "def service_handler(event, context):\n"
    "    print('hello from python', event['n'])\n"
    "    raise KeyError('missing')\n",
};

const Runtime kJavaScript = {
    "javascript",
    "exports.service_handler = (event, context) => event;\n",
    "exports.service_handler = (event) => ({statusCode: event.code, body: event.body});\n",
    "module.exports.service_handler = () => 42;\n",
    "exports.service_handler = (event) => { throw new RangeError('bad input ' + event.n); };\n",
    "function service_handler(event, context) {\n"
    "  return {env: context.env, environ: process.env.API_TOKEN || null,\n"
    "          caller: context.caller_org_id, version: context.version,\n"
    "          deadline: context.deadline_ms > 0};\n"
    "}\n",
    "exports.service_handler = () => { for (;;) {} };\n",
    "exports.service_handler = () => { const a = [];\n"
    "  for (;;) a.push(Buffer.alloc(1 << 20, 1)); };\n",
    "exports.service_handler = (event) => {\n"
    "  console.log('hello from javascript', event.n);\n"
    "  throw new TypeError('missing');\n"
    "};\n",
};

class RuntimesTest : public ::testing::TestWithParam<const Runtime*> {
 protected:
  static void SetUpTestSuite() {
    if (owner_ != nullptr) return;  // shared by both runtimes' instantiations
    owner_ = new Account(*g_system, "Runtime Owner");
    caller_ = new Account(*g_system, "Runtime Caller");
    owner_->TopUp(500'000'000);
    caller_->TopUp(500'000'000);
    owner_key_ = owner_->CreateKey();
    caller_key_ = caller_->CreateKey();
  }
  const Runtime& rt() const { return *GetParam(); }
  // A new private function of the owner with one version "1" of code.
  std::string Tool(const std::string& code, const std::string& extra = "") {
    std::string fn = owner_->CreateFunction(std::string(rt().name) + " tool");
    Publish(*owner_, fn, "1", rt().name, code, extra);
    return fn;
  }
  http::HttpResponse Call(const std::string& fn, const std::string& event_json,
                          const http::HeaderList& headers = {}) {
    return Invoke(*g_system, owner_key_, fn, "1", R"({"event": )" + event_json + "}", headers);
  }

  static Account* owner_;
  static Account* caller_;
  static std::string owner_key_, caller_key_;
};
Account* RuntimesTest::owner_ = nullptr;
Account* RuntimesTest::caller_ = nullptr;
std::string RuntimesTest::owner_key_, RuntimesTest::caller_key_;

TEST_P(RuntimesTest, EchoAnswersWithTheEnvelope) {
  std::string fn = Tool(rt().echo);
  const int64_t sent_us = MonotonicUs();
  auto r = Call(fn, R"({"a": [1, 2], "s": "x"})");
  const int64_t round_trip_ms = (MonotonicUs() - sent_us + 999) / 1000;  // rounded up
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.Header("content-type"), "application/json");
  EXPECT_EQ(Body(r), R"({"a":[1,2],"s":"x"})");
  auto doc = Json(r.body);
  EXPECT_EQ(std::string_view(doc.root["summary"]["compute_type"]), "CPU");
  // The handler's time, in milliseconds: within the call's round trip as the client saw it.
  EXPECT_LE(int64_t(doc.root["summary"]["runtime_ms"]), round_trip_ms);
  EXPECT_GE(int64_t(doc.root["summary"]["memory_used_mb"]), 1);
  EXPECT_GE(int64_t(doc.root["summary"]["cost"]["compute_micro_usd"]), 1);
  // A string event is passed unchanged; the warm worker answers again.
  r = Call(fn, R"("plain")");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(Body(r), R"("plain")");
}

TEST_P(RuntimesTest, ExplicitStatusCodesAndNonObjectResults) {
  std::string fn = Tool(rt().status);
  auto r = Call(fn, R"({"code": 201, "body": "made"})");
  EXPECT_EQ(r.status, 201);
  EXPECT_EQ(Body(r), "made");
  r = Call(fn, R"({"code": 404, "body": {"k": 1}})");
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(Body(r), R"({"k":1})");
  r = Call(fn, R"({"code": 99, "body": ""})");
  EXPECT_EQ(r.status, 500);
  EXPECT_EQ(ErrorType(r), "InvalidStatusCode");
  r = Call(Tool(rt().number), "{}");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(Body(r), "42");
}

TEST_P(RuntimesTest, AnExceptionGivesItsClassAndMessageAndIsCharged) {
  std::string fn = Tool(rt().raise);
  int64_t before = owner_->Balance();
  auto r = Call(fn, R"({"n": 7})");
  EXPECT_EQ(r.status, 500);
  EXPECT_EQ(ErrorType(r), std::string(rt().name) == "python" ? "ValueError" : "RangeError");
  EXPECT_EQ(ErrorMessage(r), "bad input 7");
  EXPECT_EQ(r.body.find("Traceback"), std::string::npos);
  EXPECT_EQ(r.body.find("handler."), std::string::npos);
  EXPECT_LT(owner_->Balance(), before);  // the handler ran: compute is charged
}

TEST_P(RuntimesTest, OutputAndTracebackGoToTheOwnersExecutionLog) {
  std::string fn = Tool(rt().logs);
  auto r = Call(fn, R"({"n": 5})");
  ASSERT_EQ(r.status, 500) << r.body;
  EXPECT_EQ(r.body.find("hello from"), std::string::npos);
  std::string id = ExecutionId(r);
  ASSERT_FALSE(id.empty());
  auto execution = owner_->session().Get("/api/v1/executions/" + id);
  ASSERT_TRUE(execution.ok());
  ASSERT_EQ(execution->status, 200) << execution->body;
  std::string logs = StringField(execution->body, "logs");
  EXPECT_NE(logs.find(std::string("hello from ") + rt().name + " 5"), std::string::npos) << logs;
  if (std::string(rt().name) == "python") {
    EXPECT_NE(logs.find("Traceback (most recent call last)"), std::string::npos) << logs;
    EXPECT_NE(logs.find("KeyError: 'missing'"), std::string::npos) << logs;
  } else {
    EXPECT_NE(logs.find("TypeError: missing"), std::string::npos) << logs;
    EXPECT_NE(logs.find("handler.js:3"), std::string::npos) << logs;
  }
}

TEST_P(RuntimesTest, MappedSecretsReachContextAndEnvironment) {
  std::string fn = Tool(rt().context, R"("declared_keys":["API_TOKEN"])");
  std::string secret =
      owner_->CreateSecret(std::string(rt().name) + "_token", "tok-" + std::string(rt().name));
  auto r = Call(fn, "{}", {{"X-Env-Keys", "API_TOKEN=" + secret}});
  ASSERT_EQ(r.status, 200) << r.body;
  auto body = Json(Body(r));
  EXPECT_EQ(std::string_view(body.root["env"]["API_TOKEN"]), "tok-" + std::string(rt().name));
  EXPECT_EQ(std::string_view(body.root["environ"]), "tok-" + std::string(rt().name));
  EXPECT_EQ(std::string_view(body.root["caller"]), owner_->org_id());
  EXPECT_EQ(std::string_view(body.root["version"]), "1");
  EXPECT_TRUE(bool(body.root["deadline"]));
}

TEST_P(RuntimesTest, ALoopingHandlerIsStoppedWith408AndNotCharged) {
  std::string fn = Tool(rt().loop, R"("timeout_ms":300)");
  int64_t before = owner_->Balance();
  auto r = Call(fn, "{}");
  EXPECT_EQ(r.status, 408) << r.body;
  EXPECT_EQ(StringField(r.body, "code"), "timeout");
  EXPECT_EQ(owner_->Balance(), before);
  // The killed worker is replaced: the next call is a fresh 408, not a 502.
  r = Call(fn, "{}");
  EXPECT_EQ(r.status, 408) << r.body;
}

TEST_P(RuntimesTest, AMemoryBombAnswersMemoryLimitExceeded) {
  std::string fn = Tool(rt().bomb, R"("memory_mb":64)");
  auto r = Call(fn, "{}");
  EXPECT_EQ(r.status, 500) << r.body;
  EXPECT_EQ(ErrorType(r), "MemoryLimitExceeded") << r.body;
  EXPECT_EQ(ErrorMessage(r), "the handler exceeded its memory limit of 64 MB");
  // The platform is unharmed.
  EXPECT_EQ(Call(Tool(rt().echo), "{}").status, 200);
}

TEST_P(RuntimesTest, ASecretOfOneCallIsNotSeenByTheNextCallOfAnotherOrganization) {
  // Module state outlives calls in a warm worker; it must never reach another organization.
  const std::string code =
      std::string(rt().name) == "python"
          ? "import os\n"
            "seen = []\n"
            "def service_handler(event, context):\n"
            "    before = list(seen)\n"
            "    seen.append(os.environ.get('API_TOKEN'))\n"
            "    return {'before': before, 'now': os.environ.get('API_TOKEN')}\n"
          : "const seen = [];\n"
            "exports.service_handler = () => {\n"
            "  const before = seen.slice();\n"
            "  seen.push(process.env.API_TOKEN);\n"
            "  return {before, now: process.env.API_TOKEN};\n"
            "};\n";
  std::string fn = owner_->CreateFunction(std::string(rt().name) + " shared",
                                          R"("visibility":"public","price_micro_usd":0)");
  Publish(*owner_, fn, "1", rt().name, code, R"("declared_keys":["API_TOKEN"])");
  caller_->AddToWorkspace(fn);
  std::string owner_secret =
      owner_->CreateSecret(std::string(rt().name) + "_shared_a", "owner-secret-value");
  std::string caller_secret =
      caller_->CreateSecret(std::string(rt().name) + "_shared_b", "caller-secret-value");

  auto a = Invoke(*g_system, owner_key_, fn, "1", R"({"event": {}})",
                  {{"X-Env-Keys", "API_TOKEN=" + owner_secret}});
  ASSERT_EQ(a.status, 200) << a.body;
  EXPECT_EQ(Body(a), R"({"before":[],"now":"owner-secret-value"})");
  auto b = Invoke(*g_system, caller_key_, fn, "1", R"({"event": {}})",
                  {{"X-Env-Keys", "API_TOKEN=" + caller_secret}});
  ASSERT_EQ(b.status, 200) << b.body;
  EXPECT_EQ(Body(b), R"({"before":[],"now":"caller-secret-value"})");
  EXPECT_EQ(b.body.find("owner-secret-value"), std::string::npos);
  // A worker that held a call's secrets serves no other call: even the owner's next call
  // starts in a fresh process, with nothing of the last one.
  a = Invoke(*g_system, owner_key_, fn, "1", R"({"event": {}})",
             {{"X-Env-Keys", "API_TOKEN=" + owner_secret}});
  EXPECT_EQ(Body(a), R"({"before":[],"now":"owner-secret-value"})");
}

INSTANTIATE_TEST_SUITE_P(BothRuntimes, RuntimesTest, ::testing::Values(&kPython, &kJavaScript),
                         [](const auto& info) {
                           return std::string(info.param->name) == "python" ? "Python"
                                                                            : "JavaScript";
                         });

TEST(JavaScriptRuntimeTest, APromiseIsRefused) {
  Account account(*g_system, "Async Org");
  account.TopUp(10'000'000);
  std::string key = account.CreateKey();
  std::string fn = account.CreateFunction("async");
  Publish(account, fn, "1", "javascript", "exports.service_handler = async (event) => event;\n");
  auto r = Invoke(*g_system, key, fn, "1", R"({"event": {}})");
  EXPECT_EQ(r.status, 500) << r.body;
  EXPECT_EQ(ErrorType(r), "AsyncHandlerNotSupported");
}

TEST(LuaRuntimeTest, ABacktrackingPatternIsStoppedAt408) {
  // The pattern matcher loops in C, out of the instruction hook's reach: the Lua worker is
  // killed at the deadline and replaced, and every executor thread stays free.
  Account account(*g_system, "Pattern Org");
  account.TopUp(10'000'000);
  std::string key = account.CreateKey();
  std::string fn = account.CreateFunction("backtracking");
  Publish(account, fn, "1", "lua",
          "function service_handler(event)\n"
          "  if event.slow then return string.find(string.rep('a', 300), '.-.-.-.-.-x') end\n"
          "  return 'fast'\n"
          "end\n",
          R"("timeout_ms":300)");
  for (int i = 0; i < 6; ++i) {  // more than the executor has threads
    auto r = Invoke(*g_system, key, fn, "1", R"({"event": {"slow": true}})");
    EXPECT_EQ(r.status, 408) << r.body;
  }
  auto r = Invoke(*g_system, key, fn, "1", R"({"event": {}})");
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(Body(r), R"("fast")");
}

TEST(PythonRuntimeTest, PublishingRefusesCodeThatDoesNotCompile) {
  Account account(*g_system, "Syntax Org");
  std::string fn = account.CreateFunction("broken");
  auto r = account.session().Post(
      "/api/v1/functions/" + fn + "/versions",
      R"({"version":"1","runtime":"python","compute_type":"CPU","input_schema":{"type":"object"},)"
      R"("code":"def service_handler(event, context)\n    return 1\n"})");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 422) << r->body;
}

}  // namespace
}  // namespace toolgate::testing
