// Python and JavaScript handlers through ProcessRuntime: real sandboxed worker processes, no bus.
#include "toolgate/executor/process_runtime.h"

#include <dirent.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "testing/notice_recorder.h"
#include "toolgate/base/json.h"
#include "toolgate/executor/process_worker.h"

namespace toolgate::executor {
namespace {

struct Call {
  std::string code;
  std::string event = R"({"x":1})";
  std::string org = "org-a";
  std::string version = "1.0";
  std::vector<EnvVar> env = {};
  int64_t timeout_ms = 10000;
  int64_t memory_mb = 128;
  NoticeSink* notices = nullptr;
  const CancelSignal* cancel = nullptr;
};

class ProcessRuntimeTest : public ::testing::Test {
 protected:
  // No spares unless a test asks: every worker is started for its call.
  explicit ProcessRuntimeTest(WorkerPoolOptions options = {.max_workers = 8,
                                                           .spares_per_shape = 0,
                                                           .upkeep_interval_ms = 0})
      : pool_(options),
        python_(Language::kPython, Config(), RuntimeLimits{}, pool_, nullptr),
        node_(Language::kJavaScript, Config(), RuntimeLimits{}, pool_, nullptr),
        lua_(Language::kLua, Config(), RuntimeLimits{}, pool_, nullptr) {}

  static ProcessRuntimeConfig Config() {
    ProcessRuntimeConfig config;
    config.runtime_dir = TOOLGATE_RUNTIME_DIR;
    return config;
  }

  ExecutionOutcome Run(Runtime& runtime, const Call& call) {
    Invocation inv;
    inv.code = call.code;
    inv.event_json = call.event;
    inv.execution_id = "exec-1";
    inv.function_id = "fn-1";
    inv.version = call.version;
    inv.caller_org_id = call.org;
    inv.timeout_ms = call.timeout_ms;
    inv.memory_mb = call.memory_mb;
    inv.env = call.env;
    inv.notices = call.notices;
    inv.cancel = call.cancel;
    return runtime.Run(inv);
  }
  ExecutionOutcome Py(const Call& call) { return Run(python_, call); }
  ExecutionOutcome Js(const Call& call) { return Run(node_, call); }
  ExecutionOutcome Lua(const Call& call) { return Run(lua_, call); }

  static std::string ErrorType(const ExecutionOutcome& out) {
    auto doc = ParseJson(out.body);
    std::string type;
    if (doc.ok()) GetString(doc->root.get_object().value(), "errorType", &type);
    return type;
  }
  static std::string ErrorMessage(const ExecutionOutcome& out) {
    auto doc = ParseJson(out.body);
    std::string message;
    if (doc.ok()) GetString(doc->root.get_object().value(), "errorMessage", &message);
    return message;
  }

  WorkerPool pool_;
  ProcessRuntime python_;
  ProcessRuntime node_;
  ProcessRuntime lua_;
};

using Kind = ExecutionOutcome::Kind;

constexpr const char* kPyEcho = "def service_handler(event, context):\n    return event\n";
constexpr const char* kJsEcho = "exports.service_handler = (event, context) => event;\n";

TEST_F(ProcessRuntimeTest, PythonEchoesTheEvent) {
  auto out = Py({.code = kPyEcho, .event = R"({"a":[1,2],"b":"x"})"});
  ASSERT_EQ(out.kind, Kind::kCompleted) << out.failure;
  EXPECT_EQ(out.status_code, 200);
  EXPECT_EQ(out.body, R"({"a":[1,2],"b":"x"})");
  EXPECT_GE(out.memory_used_mb, 1);
}

TEST_F(ProcessRuntimeTest, PythonStatusCodesAndNonObjectResults) {
  auto out =
      Py({.code = "def service_handler(e, c):\n    return {'statusCode': 201, 'body': 'made'}\n"});
  EXPECT_EQ(out.status_code, 201);
  EXPECT_EQ(out.body, "made");
  out =
      Py({.code = "def service_handler(e, c):\n    return {'statusCode': 404, 'body': {'k': 1}}\n",
          .version = "1.1"});
  EXPECT_EQ(out.status_code, 404);
  EXPECT_EQ(out.body, R"({"k":1})");
  out = Py({.code = "def service_handler(e, c):\n    return 42\n", .version = "2"});
  EXPECT_EQ(out.status_code, 200);
  EXPECT_EQ(out.body, "42");
  out = Py({.code = "def service_handler(e, c):\n    return None\n", .version = "3"});
  EXPECT_EQ(out.body, "null");
  out =
      Py({.code = "def service_handler(e, c):\n    return {'statusCode': 700}\n", .version = "4"});
  EXPECT_EQ(out.status_code, 500);
  EXPECT_EQ(ErrorType(out), "InvalidStatusCode");
  out = Py({.code = "def service_handler(e, c):\n    return {1, 2}\n", .version = "5"});
  EXPECT_EQ(out.status_code, 500);
  EXPECT_EQ(ErrorType(out), "InvalidResult");
}

TEST_F(ProcessRuntimeTest, PythonExceptionGivesClassAndMessageWithTracebackInTheLog) {
  auto out = Py({.code = "def service_handler(e, c):\n    print('about to fail')\n"
                         "    raise ValueError('bad input')\n"});
  ASSERT_EQ(out.kind, Kind::kCompleted);
  EXPECT_EQ(out.status_code, 500);
  EXPECT_EQ(ErrorType(out), "ValueError");
  EXPECT_EQ(ErrorMessage(out), "bad input");
  EXPECT_EQ(out.body.find("Traceback"), std::string::npos);
  EXPECT_NE(out.logs.find("about to fail"), std::string::npos) << out.logs;
  EXPECT_NE(out.logs.find("Traceback"), std::string::npos) << out.logs;
  EXPECT_NE(out.logs.find("handler.py\", line 3"), std::string::npos) << out.logs;
  EXPECT_NE(out.logs.find("raise ValueError('bad input')"), std::string::npos) << out.logs;
  EXPECT_EQ(out.logs.find("worker.py"), std::string::npos) << out.logs;
}

TEST_F(ProcessRuntimeTest, PythonModuleErrorsAnswerEachCall) {
  auto out = Py({.code = "x = 1\n"});
  EXPECT_EQ(ErrorType(out), "HandlerNotFound");
  out = Py({.code = "print('loading')\nraise RuntimeError('no config')\n", .version = "2"});
  EXPECT_EQ(out.status_code, 500);
  EXPECT_EQ(ErrorType(out), "RuntimeError");
  EXPECT_NE(out.logs.find("loading"), std::string::npos);
  // A worker whose module failed is not kept: the next call loads it again.
  out = Py({.code = "print('loading')\nraise RuntimeError('no config')\n", .version = "2"});
  EXPECT_EQ(ErrorType(out), "RuntimeError");
  EXPECT_EQ(pool_.stats().reused, 0u);
}

TEST_F(ProcessRuntimeTest, PythonContextAndSecrets) {
  const char* code =
      "import os\n"
      "def service_handler(event, context):\n"
      "    return {'ctx': [context['execution_id'], context.function_id, context.version,\n"
      "                    context.caller_org_id, context.deadline_ms > 0],\n"
      "            'env': context.env, 'environ': os.environ.get('API_TOKEN'),\n"
      "            'path': os.environ.get('PATH')}\n";
  auto out = Py({.code = code, .env = {{"API_TOKEN", "s3cret"}}});
  ASSERT_EQ(out.status_code, 200) << out.body << out.logs;
  EXPECT_EQ(out.body, R"({"ctx":["exec-1","fn-1","1.0","org-a",true],"env":{"API_TOKEN":"s3cret"},)"
                      R"("environ":"s3cret","path":"/usr/local/bin:/usr/bin:/bin"})");
  // A worker that held secrets serves no other call: the next one gets a fresh process.
  out = Py({.code = code});
  EXPECT_EQ(pool_.stats().reused, 0u);
  EXPECT_EQ(pool_.stats().started, 2u);
  EXPECT_NE(out.body.find(R"("env":{},"environ":null)"), std::string::npos) << out.body;
}

TEST_F(ProcessRuntimeTest, PythonSecretsSetByTheHandlerDoNotSurviveTheCall) {
  const char* code =
      "import os\n"
      "def service_handler(event, context):\n"
      "    seen = os.environ.get('LEFT_BEHIND')\n"
      "    os.environ['LEFT_BEHIND'] = 'x'\n"
      "    return seen\n";
  EXPECT_EQ(Py({.code = code}).body, "null");
  EXPECT_EQ(Py({.code = code}).body, "null");
  EXPECT_EQ(pool_.stats().reused, 1u);
}

TEST_F(ProcessRuntimeTest, WorkersAreReusedWithinAnOrganizationOnly) {
  const char* code =
      "calls = 0\n"
      "def service_handler(event, context):\n"
      "    global calls\n"
      "    calls += 1\n"
      "    return calls\n";
  EXPECT_EQ(Py({.code = code}).body, "1");
  EXPECT_EQ(Py({.code = code}).body, "2");                    // warm: module state survives
  EXPECT_EQ(Py({.code = code, .org = "org-b"}).body, "1");    // another organization: its own
  EXPECT_EQ(Py({.code = code, .version = "2.0"}).body, "1");  // another version: its own
  EXPECT_EQ(Py({.code = code}).body, "3");
  auto stats = pool_.stats();
  EXPECT_EQ(stats.started, 3u);
  EXPECT_EQ(stats.reused, 2u);
  EXPECT_EQ(stats.idle, 3u);
}

TEST_F(ProcessRuntimeTest, PythonTimeoutKillsTheWorkerAndTheNextCallWorks) {
  const char* code =
      "def service_handler(event, context):\n"
      "    if event.get('loop'):\n"
      "        while True:\n"
      "            pass\n"
      "    return 'ok'\n";
  EXPECT_EQ(Py({.code = code}).body, "\"ok\"");
  auto out = Py({.code = code, .event = R"({"loop":true})", .timeout_ms = 300});
  EXPECT_EQ(out.kind, Kind::kTimeout);
  out = Py({.code = code});
  EXPECT_EQ(out.body, "\"ok\"");
  EXPECT_EQ(pool_.stats().started, 2u);  // the killed worker was replaced
}

TEST_F(ProcessRuntimeTest, PythonMemoryBombAnswersMemoryLimitExceeded) {
  auto out = Py({.code = "def service_handler(e, c):\n    return len(bytearray(1 << 30))\n",
                 .memory_mb = 64});
  EXPECT_EQ(out.status_code, 500);
  EXPECT_EQ(ErrorType(out), "MemoryLimitExceeded");
  EXPECT_EQ(ErrorMessage(out), "the handler exceeded its memory limit of 64 MB");
  out = Py({.code = "def service_handler(e, c):\n    a = []\n    while True:\n"
                    "        a.append('x' * 100000)\n",
            .version = "2",
            .memory_mb = 64});
  EXPECT_EQ(ErrorType(out), "MemoryLimitExceeded");
  EXPECT_GE(out.memory_used_mb, 32);
}

TEST_F(ProcessRuntimeTest, PeakMemoryIsEachCallsOwnOnAReusedWorker) {
  // A call's peak is what the worker held during that call: memory a call kept stays in the
  // next call's peak (the worker holds it), memory freed before the call started does not.
  const char* code =
      "held = None\n"
      "def service_handler(event, context):\n"
      "    global held\n"
      "    if event.get('hold'): held = b'x' * (100 << 20)\n"
      "    if event.get('drop'): held = None\n"
      "    if event.get('burst'): len(b'y' * (100 << 20))\n"
      "    return 'ok'\n";
  auto call = [&](const char* event) {
    return Py({.code = code, .event = event, .memory_mb = 512});
  };
  EXPECT_LT(call("{}").memory_used_mb, 90);
  EXPECT_GE(call(R"({"burst":true})").memory_used_mb, 100);
  EXPECT_LT(call("{}").memory_used_mb, 90);  // the burst ended with the call before
  EXPECT_GE(call(R"({"hold":true})").memory_used_mb, 100);
  EXPECT_GE(call("{}").memory_used_mb, 100);  // still held
  EXPECT_GE(call(R"({"drop":true})").memory_used_mb, 100);
  EXPECT_LT(call("{}").memory_used_mb, 90);  // dropped during the call before
  EXPECT_EQ(pool_.stats().started, 1u);
}

TEST(MayHaveUsedHalfItsCpuTest, OnlyOnceItHasLivedLongEnoughOnItsCores) {
  // Half of 3,600 CPU seconds takes 1,800 s of life on one core, 900 s on two.
  EXPECT_FALSE(MayHaveUsedHalfItsCpu(1'799'000'000, 1, 3600));
  EXPECT_TRUE(MayHaveUsedHalfItsCpu(1'800'000'000, 1, 3600));
  EXPECT_FALSE(MayHaveUsedHalfItsCpu(899'000'000, 2, 3600));
  EXPECT_TRUE(MayHaveUsedHalfItsCpu(900'000'000, 2, 3600));
  EXPECT_TRUE(MayHaveUsedHalfItsCpu(1'000'000, 64, 60));
  EXPECT_TRUE(MayHaveUsedHalfItsCpu(0, 1, 0));
}

TEST_F(ProcessRuntimeTest, PythonCrashAnswers500AndTheNextCallGetsANewWorker) {
  const char* code =
      "import os\n"
      "def service_handler(event, context):\n"
      "    if event.get('die'):\n"
      "        os._exit(3)\n"
      "    return 'alive'\n";
  auto out = Py({.code = code, .event = R"({"die":true})"});
  EXPECT_EQ(out.status_code, 500);
  EXPECT_EQ(ErrorType(out), "WorkerCrashed");
  EXPECT_EQ(ErrorMessage(out), "the process running the handler exited with status 3");
  EXPECT_EQ(Py({.code = code}).body, "\"alive\"");
}

TEST_F(ProcessRuntimeTest, PythonOutputIsBoundedInTheLog) {
  auto out = Py({.code = "def service_handler(e, c):\n    for i in range(20000):\n"
                         "        print('line', i)\n    return 1\n"});
  EXPECT_EQ(out.body, "1");
  EXPECT_LE(out.logs.size(), (64u << 10) + 64);
  EXPECT_NE(out.logs.find("[truncated]"), std::string::npos);
}

TEST_F(ProcessRuntimeTest, JavaScriptEchoesTheEventInEveryExportForm) {
  auto out = Js({.code = kJsEcho, .event = R"({"a":[1,2],"b":"x"})"});
  ASSERT_EQ(out.kind, Kind::kCompleted) << out.failure;
  EXPECT_EQ(out.status_code, 200) << out.body << out.logs;
  EXPECT_EQ(out.body, R"({"a":[1,2],"b":"x"})");
  out = Js({.code = "module.exports.service_handler = function (e) { return e.x + 1; };",
            .version = "2"});
  EXPECT_EQ(out.body, "2");
  out = Js({.code = "module.exports = { service_handler(e) { return 'obj'; } };", .version = "3"});
  EXPECT_EQ(out.body, "\"obj\"");
  out = Js(
      {.code = "function service_handler(event, context) { return [event.x]; }", .version = "4"});
  EXPECT_EQ(out.body, "[1]");
  out = Js({.code = "const x = 1;", .version = "5"});
  EXPECT_EQ(ErrorType(out), "HandlerNotFound");
}

TEST_F(ProcessRuntimeTest, JavaScriptResultsAndErrors) {
  auto out = Js({.code = "exports.service_handler = () => ({statusCode: 202, body: {ok: true}});"});
  EXPECT_EQ(out.status_code, 202);
  EXPECT_EQ(out.body, R"({"ok":true})");
  out = Js({.code = "exports.service_handler = () => undefined;", .version = "2"});
  EXPECT_EQ(out.body, "null");
  out = Js({.code = "exports.service_handler = () => { console.log('hi', 1);\n"
                    "  null.x; };",
            .version = "3"});
  EXPECT_EQ(out.status_code, 500);
  EXPECT_EQ(ErrorType(out), "TypeError");
  EXPECT_NE(ErrorMessage(out).find("null"), std::string::npos);
  EXPECT_NE(out.logs.find("hi 1"), std::string::npos) << out.logs;
  EXPECT_NE(out.logs.find("handler.js:2"), std::string::npos) << out.logs;
  EXPECT_EQ(out.body.find("handler.js"), std::string::npos);
  out = Js({.code = "class Nope extends Error {}\n"
                    "exports.service_handler = () => { throw new Nope('custom'); };",
            .version = "4"});
  EXPECT_EQ(ErrorType(out), "Nope");
  EXPECT_EQ(ErrorMessage(out), "custom");
  out = Js({.code = "exports.service_handler = () => { const a = {}; a.a = a; return a; };",
            .version = "5"});
  EXPECT_EQ(ErrorType(out), "InvalidResult");
}

TEST_F(ProcessRuntimeTest, JavaScriptPromisesAreRefused) {
  auto out = Js({.code = "exports.service_handler = async (e) => e;"});
  EXPECT_EQ(out.status_code, 500);
  EXPECT_EQ(ErrorType(out), "AsyncHandlerNotSupported");
  out = Js({.code = "exports.service_handler = () => ({ then(ok) { ok(1); } });", .version = "2"});
  EXPECT_EQ(ErrorType(out), "AsyncHandlerNotSupported");
  out = Js({.code = "exports.service_handler = async () => { throw new Error('late'); };",
            .version = "3"});
  EXPECT_EQ(ErrorType(out), "AsyncHandlerNotSupported");
  // The worker survives its refused Promise.
  out = Js({.code = "exports.service_handler = async (e) => e;"});
  EXPECT_EQ(ErrorType(out), "AsyncHandlerNotSupported");
  EXPECT_EQ(pool_.stats().reused, 1u);
}

TEST_F(ProcessRuntimeTest, JavaScriptContextAndSecretsLeaveProcessEnv) {
  const char* code =
      "exports.service_handler = (event, context) => ({\n"
      "  ctx: [context.execution_id, context.function_id, context.version, context.caller_org_id,\n"
      "        context.deadline_ms > 0],\n"
      "  env: context.env, penv: process.env.API_TOKEN === undefined ? null : "
      "process.env.API_TOKEN,\n"
      "});";
  auto out = Js({.code = code, .env = {{"API_TOKEN", "s3cret"}}});
  EXPECT_EQ(out.body, R"({"ctx":["exec-1","fn-1","1.0","org-a",true],"env":{"API_TOKEN":"s3cret"},)"
                      R"("penv":"s3cret"})");
  out = Js({.code = code});
  EXPECT_EQ(out.body, R"({"ctx":["exec-1","fn-1","1.0","org-a",true],"env":{},"penv":null})");
  EXPECT_EQ(pool_.stats().reused, 0u);  // a fresh worker after a call with secrets
}

TEST_F(ProcessRuntimeTest, JavaScriptTimeoutAndMemoryBomb) {
  auto out = Js({.code = "exports.service_handler = () => { for (;;) {} };", .timeout_ms = 300});
  EXPECT_EQ(out.kind, Kind::kTimeout);
  out = Js({.code = "exports.service_handler = () => Buffer.alloc(2e9).length;",
            .version = "2",
            .memory_mb = 64});
  EXPECT_EQ(ErrorType(out), "MemoryLimitExceeded");
  out = Js({.code = "exports.service_handler = () => { const a = [];\n"
                    "  for (;;) a.push({x: Math.random(), s: 'y' + Math.random()}); };",
            .version = "3",
            .memory_mb = 64});
  EXPECT_EQ(out.status_code, 500);
  EXPECT_EQ(ErrorType(out), "MemoryLimitExceeded") << out.body;
  out = Js({.code = "exports.service_handler = () => { const a = [];\n"
                    "  for (;;) a.push(Buffer.alloc(1 << 20, 1)); };",
            .version = "4",
            .memory_mb = 64});
  EXPECT_EQ(ErrorType(out), "MemoryLimitExceeded") << out.body;
  EXPECT_EQ(Js({.code = kJsEcho}).status_code, 200);
}

TEST(ProcessWorkerTest, ClassifiesHowAWorkerDied) {
  auto signaled = [](int sig) { return sig & 0x7f; };  // a wait status for "killed by sig"
  auto exited = [](int code) { return (code & 0xff) << 8; };
  // The CPU rlimit is a deadline.
  EXPECT_EQ(ClassifyDeath(signaled(SIGXCPU), 1000, 128), WorkerReply::Kind::kTimeout);
  // Near the memory limit, an abort or a fault is the interpreter refused memory.
  EXPECT_EQ(ClassifyDeath(signaled(SIGABRT), 100 * 1024, 128), WorkerReply::Kind::kMemory);
  EXPECT_EQ(ClassifyDeath(signaled(SIGSEGV), 96 * 1024, 128), WorkerReply::Kind::kMemory);
  EXPECT_EQ(ClassifyDeath(signaled(SIGKILL), 200 * 1024, 128), WorkerReply::Kind::kMemory);
  // Far from it, a crash.
  EXPECT_EQ(ClassifyDeath(signaled(SIGSEGV), 95 * 1024, 128), WorkerReply::Kind::kCrashed);
  EXPECT_EQ(ClassifyDeath(exited(3), 10 * 1024, 128), WorkerReply::Kind::kCrashed);
  EXPECT_EQ(DescribeDeath(exited(3)), "exited with status 3");
  EXPECT_EQ(DescribeDeath(signaled(SIGSEGV)), "was killed by signal 11 (Segmentation fault)");
}

TEST_F(ProcessRuntimeTest, AHandlerCannotForgeATimeoutToRunUncharged) {
  // A kTimeout frame written by the handler itself lacks the call's nonce: a 500, charged.
  auto out = Py({.code = "import os\n"
                         "def service_handler(e, c):\n"
                         "    os.write(4, b'\\0\\0\\0\\0T')\n"
                         "    return 1\n"});
  EXPECT_EQ(out.kind, Kind::kCompleted);
  EXPECT_EQ(out.status_code, 500);
  EXPECT_EQ(ErrorType(out), "WorkerProtocolError");
}

TEST_F(ProcessRuntimeTest, AFailureBeforeTheHandlerStartsIsThePlatforms) {
  // Python's decoder refuses an integer of more than 4,300 digits: the worker cannot decode
  // the call, which is valid JSON. Not the tool's failure: 502, nothing charged.
  std::string huge(5000, '7');
  auto out = Py({.code = kPyEcho, .event = R"({"n":)" + huge + "}"});
  EXPECT_EQ(out.kind, Kind::kPlatformFailure) << out.status_code << " " << out.body;
  // The worker lives on, and the next call is served.
  EXPECT_EQ(Py({.code = kPyEcho, .event = R"({"n":1})"}).body, R"({"n":1})");
}

TEST_F(ProcessRuntimeTest, LuaRunsInAWorker) {
  auto out = Lua(
      {.code = "function service_handler(event, context)\n"
               "  print('seen', event.x)\n"
               "  return {statusCode = 202, body = {x = event.x, org = context.caller_org_id}}\n"
               "end",
       .env = {{"K", "v"}}});
  ASSERT_EQ(out.kind, Kind::kCompleted) << out.failure;
  EXPECT_EQ(out.status_code, 202);
  EXPECT_NE(out.body.find(R"("org":"org-a")"), std::string::npos) << out.body;
  EXPECT_EQ(out.logs, "seen\t1\n");
  out = Lua({.code = "function service_handler() error('boom') end", .version = "2"});
  EXPECT_EQ(out.status_code, 500);
  EXPECT_EQ(ErrorType(out), "LuaError");
  EXPECT_EQ(ErrorMessage(out), "handler.lua:1: boom");
}

// Cancelling (POST /executions/{id}/cancel): the handler says it runs (a progress notice),
// and the sink that hears it fires the call's signal, as the executor's tg.exec.cancel would.
class CancelOnFirstNotice final : public NoticeSink {
 public:
  explicit CancelOnFirstNotice(CancelSignal& signal) : signal_(signal) {}
  void Offer(Notice&&) override { signal_.Cancel(); }

 private:
  CancelSignal& signal_;
};

TEST_F(ProcessRuntimeTest, ACancelledRunningCallIsKilledAndChargedAsRunAndTheNextCallWorks) {
  CancelSignal signal;
  CancelOnFirstNotice sink(signal);
  auto out = Lua({.code = "function service_handler(e) progress(1) while true do end end",
                  .timeout_ms = 60000,
                  .notices = &sink,
                  .cancel = &signal});
  // Stopped at the signal, long before its 60 s timeout: the handler had started.
  EXPECT_EQ(out.kind, Kind::kCancelled) << out.failure << out.logs;
  auto next = Lua({.code = "function service_handler(e) return {n = 1} end"});
  EXPECT_EQ(next.kind, Kind::kCompleted) << next.failure << next.logs;
  EXPECT_EQ(next.status_code, 200);
}

TEST_F(ProcessRuntimeTest, ACallCancelledBeforeItStartsNeverRuns) {
  CancelSignal signal;
  signal.Cancel();
  auto out = Py({.code = "def service_handler(e, c):\n    while True: pass\n",
                 .timeout_ms = 60000,
                 .cancel = &signal});
  EXPECT_EQ(out.kind, Kind::kCancelledBeforeStart) << out.failure << out.logs;
}

TEST(RunningCallsTest, ACancelReachesTheRunningCallOrWaitsForItsStart) {
  RunningCalls running;
  auto signal = running.Begin("e1");
  EXPECT_FALSE(signal->cancelled());
  EXPECT_TRUE(running.Cancel("e1"));
  EXPECT_TRUE(signal->cancelled());
  running.End("e1");
  // A cancel for a call not running here yet: its start finds it fired.
  EXPECT_FALSE(running.Cancel("e2"));
  EXPECT_TRUE(running.Begin("e2")->cancelled());
  EXPECT_FALSE(running.Begin("e3")->cancelled());
}

TEST_F(ProcessRuntimeTest, LuaLoopStoppedByTheHookKeepsTheWorker) {
  const char* code = "function service_handler(e) while e.loop do end return 'ok' end";
  EXPECT_EQ(Lua({.code = code}).body, "\"ok\"");
  EXPECT_EQ(Lua({.code = code, .event = R"({"loop":true})", .timeout_ms = 200}).kind,
            Kind::kTimeout);
  EXPECT_EQ(Lua({.code = code}).body, "\"ok\"");
  EXPECT_EQ(pool_.stats().started, 1u);
}

TEST_F(ProcessRuntimeTest, LuaBacktrackingPatternIsStoppedAtTheDeadline) {
  // The instruction hook never runs inside the C pattern matcher; the worker is killed instead.
  const char* code =
      "function service_handler(e)\n"
      "  if e.slow then return string.find(string.rep('a', 300), '.-.-.-.-.-x') end\n"
      "  return 'fast'\n"
      "end";
  auto out = Lua({.code = code, .event = R"({"slow":true})", .timeout_ms = 300});
  EXPECT_EQ(out.kind, Kind::kTimeout);
  EXPECT_EQ(Lua({.code = code}).body, "\"fast\"");
  EXPECT_EQ(pool_.stats().started, 2u);  // the stuck worker was replaced
}

// Spares: interpreters started in their sandboxes ahead of need, taken by cold calls.
class SpareWorkerTest : public ProcessRuntimeTest {
 protected:
  SpareWorkerTest()
      : ProcessRuntimeTest({.max_workers = 8, .spares_per_shape = 1, .upkeep_interval_ms = 0}) {}

  // The pids of this process's children whose command is comm: the workers, each the init of
  // its sandbox.
  static std::vector<pid_t> Children(const std::string& comm) {
    std::vector<pid_t> pids;
    DIR* proc = ::opendir("/proc");
    if (proc == nullptr) return pids;
    while (dirent* entry = ::readdir(proc)) {
      pid_t pid = static_cast<pid_t>(std::atoi(entry->d_name));
      if (pid <= 0) continue;
      std::ifstream file("/proc/" + std::to_string(pid) + "/stat");
      std::stringstream text;
      text << file.rdbuf();
      std::string stat = text.str();
      // "pid (comm) state ppid ..."
      size_t open = stat.find('('), close = stat.rfind(')');
      if (open == std::string::npos || close == std::string::npos) continue;
      char state = 0;
      pid_t ppid = 0;
      std::istringstream rest(stat.substr(close + 1));
      rest >> state >> ppid;
      if (ppid == ::getpid() && stat.substr(open + 1, close - open - 1) == comm) {
        pids.push_back(pid);
      }
    }
    ::closedir(proc);
    return pids;
  }
};

TEST_F(SpareWorkerTest, ColdCallsTakeSparesAndEachServesOnlyItsOwnKey) {
  // Lua and JavaScript at 128 MB, Python at 256 MB: the contract's defaults.
  EXPECT_EQ(pool_.StartSpares(), 3u);
  const char* code =
      "import os\n"
      "calls = 0\n"
      "def service_handler(event, context):\n"
      "    global calls\n"
      "    calls += 1\n"
      "    return [calls, context.caller_org_id, os.environ.get('API_TOKEN')]\n";
  auto out = Py({.code = code, .memory_mb = 256});
  ASSERT_EQ(out.kind, Kind::kCompleted) << out.failure;
  EXPECT_EQ(out.body, R"([1,"org-a",null])");
  auto stats = pool_.stats();
  EXPECT_EQ(stats.spares_taken, 1u);
  EXPECT_EQ(stats.started, 0u);

  EXPECT_EQ(pool_.StartSpares(), 1u);  // the Python spare's replacement
  // Another organization: another spare, which shares nothing with the first.
  EXPECT_EQ(Py({.code = code, .org = "org-b", .memory_mb = 256}).body, R"([1,"org-b",null])");
  // The first, warm.
  EXPECT_EQ(Py({.code = code, .memory_mb = 256}).body, R"([2,"org-a",null])");
  EXPECT_EQ(Js({.code = kJsEcho}).body, R"({"x":1})");
  EXPECT_EQ(Lua({.code = "function service_handler(e) return e.x + 1 end"}).body, "2");
  stats = pool_.stats();
  EXPECT_EQ(stats.spares_taken, 4u);
  EXPECT_EQ(stats.reused, 1u);
  EXPECT_EQ(stats.started, 0u);

  // A version with another memory limit is another shape: its worker is started for it.
  EXPECT_EQ(Py({.code = kPyEcho, .version = "2", .memory_mb = 128}).body, R"({"x":1})");
  EXPECT_EQ(pool_.stats().started, 1u);
}

TEST_F(SpareWorkerTest, ASpareThatDiedIsDroppedAndTheCallServed) {
  EXPECT_EQ(pool_.StartSpares(), 3u);
  std::vector<pid_t> pythons = Children("python3");
  ASSERT_EQ(pythons.size(), 1u);
  ASSERT_EQ(::kill(pythons[0], SIGKILL), 0);
  siginfo_t info;
  // Dead, but left for the worker to reap.
  ASSERT_EQ(::waitid(P_PID, static_cast<id_t>(pythons[0]), &info, WEXITED | WNOWAIT), 0);
  auto out = Py({.code = kPyEcho, .memory_mb = 256});
  ASSERT_EQ(out.kind, Kind::kCompleted) << out.failure;
  EXPECT_EQ(out.body, R"({"x":1})");
  auto stats = pool_.stats();
  EXPECT_EQ(stats.spares_lost, 1u);
  EXPECT_EQ(stats.spares_taken, 0u);
  EXPECT_EQ(stats.started, 1u);
  EXPECT_EQ(pool_.StartSpares(), 1u);  // its replacement
}

TEST_F(SpareWorkerTest, AGpuExecutorKeepsSparesForEachDevice) {
  // Devices this machine may lack: the sandbox skips absent device nodes.
  WorkerPool pool({.max_workers = 8, .spares_per_shape = 1, .upkeep_interval_ms = 0});
  GpuSlots gpus({0, 1}, 1);
  ProcessRuntimeConfig config = Config();
  config.gpu = true;
  ProcessRuntime python(Language::kPython, config, RuntimeLimits{}, pool, &gpus);
  EXPECT_EQ(pool.StartSpares(), 2u);
  const char* code =
      "import os\n"
      "def service_handler(event, context):\n"
      "    return os.environ.get('CUDA_VISIBLE_DEVICES')\n";
  EXPECT_EQ(Run(python, {.code = code, .memory_mb = 256}).body, R"("0")");
  EXPECT_EQ(pool.stats().spares_taken, 1u);
  EXPECT_EQ(pool.stats().started, 0u);
}

// Handlers' notices, through each worker and the executor's bounds. Each handler makes the five
// notices of ExpectTheFiveNotices, or (event "flood") one oversized log and then 1,000
// progress calls, or (event "bad") logs at a level that is none.
constexpr const char* kPyNotices = R"py(
def service_handler(event, context):
    if event == "flood":
        context.log("info", "x" * 20000)
        for i in range(1000):
            context.progress(i + 1, 1000)
        return "done"
    if event == "bad":
        context.log("loud", 1)
    context.progress(1, 3, "one")
    context.progress(2, total=3)
    context.log("info", {"step": 2}, logger="steps")
    context.progress(3)
    context.log("warning", "almost")
    return {"ok": True}
)py";

constexpr const char* kJsNotices = R"js(
exports.service_handler = (event, context) => {
  if (event === 'flood') {
    context.log('info', 'x'.repeat(20000));
    for (let i = 0; i < 1000; i++) context.progress(i + 1, 1000);
    return 'done';
  }
  if (event === 'bad') context.log('loud', 1);
  context.progress(1, 3, 'one');
  context.progress(2, 3);
  context.log('info', {step: 2}, 'steps');
  context.progress(3, undefined, null);
  context.log('warning', 'almost');
  return {ok: true};
};
)js";

constexpr const char* kLuaNotices = R"lua(
function service_handler(event)
  if event == "flood" then
    log("info", string.rep("x", 20000))
    for i = 1, 1000 do progress(i, 1000) end
    return "done"
  end
  if event == "bad" then log("loud", 1) end
  progress(1, 3, "one")
  progress(2, 3)
  log("info", {step = 2}, "steps")
  progress(3)
  log("warning", "almost")
  return {ok = true}
end
)lua";

class ProcessNoticesTest : public ProcessRuntimeTest,
                           public ::testing::WithParamInterface<Language> {
 protected:
  ExecutionOutcome RunNotices(std::string event, NoticeSink* notices, std::string version = "1") {
    Language language = GetParam();
    Call call{.code = language == Language::kPython       ? kPyNotices
                      : language == Language::kJavaScript ? kJsNotices
                                                          : kLuaNotices,
              .event = std::move(event),
              .version = std::move(version),
              .notices = notices};
    return language == Language::kPython       ? Py(call)
           : language == Language::kJavaScript ? Js(call)
                                               : Lua(call);
  }
};

TEST_P(ProcessNoticesTest, ProgressAndLogReachTheSinkInOrderAndLeaveTheResult) {
  testing::NoticeRecorder recorder;
  auto out = RunNotices("{}", &recorder.sink);
  ASSERT_EQ(out.kind, Kind::kCompleted) << out.failure << out.logs;
  EXPECT_EQ(out.status_code, 200) << out.body << out.logs;
  EXPECT_EQ(out.body, R"({"ok":true})");
  testing::ExpectTheFiveNotices(recorder.seen);
  EXPECT_EQ(recorder.sink.dropped(), 0u);
  // The same worker, warm, for a caller that wants none: the same result, nothing sent.
  auto quiet = RunNotices("{}", nullptr);
  EXPECT_EQ(quiet.status_code, 200) << quiet.body << quiet.logs;
  EXPECT_EQ(quiet.body, R"({"ok":true})");
  EXPECT_EQ(recorder.seen.size(), 5u);
}

TEST_P(ProcessNoticesTest, ThousandsOfNoticesAreCutToTheBoundsAndTheOversizedDropped) {
  testing::NoticeRecorder recorder;
  auto out = RunNotices(R"("flood")", &recorder.sink);
  EXPECT_EQ(out.status_code, 200) << out.body << out.logs;
  EXPECT_EQ(out.body, R"("done")");
  ASSERT_EQ(recorder.seen.size(), 100u);
  for (size_t i = 0; i < recorder.seen.size(); ++i) {
    EXPECT_EQ(recorder.seen[i].kind, Notice::Kind::kProgress);
    EXPECT_EQ(recorder.seen[i].progress, static_cast<double>(i + 1));
    EXPECT_EQ(recorder.seen[i].total, 1000);
  }
  EXPECT_EQ(recorder.sink.dropped(), 901u);  // the oversized log and 900 past the count
  // The worker kept its protocol: it serves the next call.
  EXPECT_EQ(RunNotices("{}", nullptr).body, R"({"ok":true})");
}

TEST_P(ProcessNoticesTest, ALevelThatIsNoneIsAnErrorTheHandlerSees) {
  testing::NoticeRecorder recorder;
  auto out = RunNotices(R"("bad")", &recorder.sink);
  ASSERT_EQ(out.kind, Kind::kCompleted) << out.failure;
  EXPECT_EQ(out.status_code, 500);
  EXPECT_NE(ErrorMessage(out).find("level must be one of debug, info, notice, warning, error, "
                                   "critical, alert, emergency"),
            std::string::npos)
      << out.body;
  EXPECT_TRUE(recorder.seen.empty());
  // Checked also when nobody wants the notice.
  EXPECT_EQ(RunNotices(R"("bad")", nullptr).status_code, 500);
}

// A context kept past its call sends nothing: its frame would carry the old call's nonce, which
// would stop the worker in the middle of the next call.
TEST_F(ProcessRuntimeTest, AContextKeptPastItsCallSendsNothing) {
  const char* py =
      "kept = []\n"
      "def service_handler(event, context):\n"
      "    if kept:\n"
      "        kept[0].progress(1)\n"
      "        kept[0].log('info', 'late')\n"
      "    kept.append(context)\n"
      "    return len(kept)\n";
  const char* js =
      "const kept = [];\n"
      "exports.service_handler = (event, context) => {\n"
      "  if (kept.length) { kept[0].progress(1); kept[0].log('info', 'late'); }\n"
      "  kept.push(context);\n"
      "  return kept.length;\n"
      "};\n";
  for (Runtime* runtime : {static_cast<Runtime*>(&python_), static_cast<Runtime*>(&node_)}) {
    testing::NoticeRecorder first, second;
    std::string code = runtime == &python_ ? py : js;
    auto out = Run(*runtime, {.code = code, .notices = &first.sink});
    EXPECT_EQ(out.body, "1") << out.body << out.logs;
    out = Run(*runtime, {.code = code, .notices = &second.sink});
    EXPECT_EQ(out.status_code, 200) << out.body << out.logs;
    EXPECT_EQ(out.body, "2") << out.logs;  // the same worker, still in step
    EXPECT_TRUE(first.seen.empty());
    EXPECT_TRUE(second.seen.empty());
    EXPECT_EQ(second.sink.dropped(), 0u);
  }
}

INSTANTIATE_TEST_SUITE_P(EachRuntime, ProcessNoticesTest,
                         ::testing::Values(Language::kPython, Language::kJavaScript,
                                           Language::kLua),
                         [](const ::testing::TestParamInfo<Language>& info) {
                           return info.param == Language::kPython       ? std::string("Python")
                                  : info.param == Language::kJavaScript ? std::string("JavaScript")
                                                                        : std::string("Lua");
                         });

}  // namespace
}  // namespace toolgate::executor
