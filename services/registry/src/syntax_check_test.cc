#include "toolgate/registry/syntax_check.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <future>
#include <string>
#include <thread>

namespace toolgate::registry {
namespace {

TEST(LuaSyntax, ValidCodeCompiles) {
  EXPECT_TRUE(CheckLuaSyntax("function service_handler(event, context)\n"
                             "  return {statusCode = 200, body = json.encode(event)}\n"
                             "end\n")
                  .ok());
}

TEST(LuaSyntax, ErrorNamesTheHandlerChunkAndLine) {
  Status s = CheckLuaSyntax("function service_handler(event)\n  return 1\n");
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(s.message(), "handler:3: 'end' expected (to close 'function' at line 1) near <eof>");

  s = CheckLuaSyntax("local x = = 1");
  EXPECT_EQ(s.message(), "handler:1: unexpected symbol near '='");
}

TEST(LuaSyntax, CodeIsNeverRun) {
  // Would loop forever, or abort the test, if it ran.
  EXPECT_TRUE(CheckLuaSyntax("while true do end").ok());
  EXPECT_TRUE(CheckLuaSyntax("os.exit(3)").ok());
}

TEST(LuaSyntax, BinaryChunksAreRefused) {
  Status s = CheckLuaSyntax(std::string("\x1bLua\x54\x00", 6));
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(s.message().find("binary chunk"), std::string::npos) << s.message();
}

TEST(PythonSyntax, ValidAndInvalid) {
  // python3 is a dependency of the registry (scripts/install-deps.sh): its absence is a failure.
  ASSERT_EQ(access("/usr/bin/python3", X_OK), 0) << "no /usr/bin/python3";
  EXPECT_TRUE(CheckPythonSyntax("def service_handler(event, context):\n    return event\n").ok());
  // Parsing only: this would exit with 7 if it ran.
  EXPECT_TRUE(CheckPythonSyntax("import sys\nsys.exit(7)\n").ok());
  Status s = CheckPythonSyntax("def service_handler(event, context)\n    return event\n");
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(s.message().rfind("handler.py:1:", 0), 0u) << s.message();
  EXPECT_NE(s.message().find("expected ':'"), std::string::npos) << s.message();
}

TEST(JavaScriptSyntax, ValidAndInvalid) {
  Status ok = CheckJavaScriptSyntax("function service_handler(event, context) { return event; }");
  // node is a dependency of the registry (scripts/install-deps.sh): its absence is a failure.
  ASSERT_TRUE(ok.ok()) << ok.ToString();
  EXPECT_TRUE(CheckJavaScriptSyntax("process.exit(3)").ok());  // never run
  Status s = CheckJavaScriptSyntax("function service_handler(event {\n  return 1;\n}\n");
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(s.message().rfind("handler.js:1", 0), 0u) << s.message();
  EXPECT_NE(s.message().find("SyntaxError"), std::string::npos) << s.message();
  EXPECT_EQ(s.message().find("    at "), std::string::npos) << s.message();
}

// 1 MiB of statements: CPython's parser needs about 440 MB for it.
std::string HugePython() {
  std::string code;
  while (code.size() < (1 << 20) - 16) code += "x = 1\n";
  return code;
}

TEST(SyntaxCheckLimits, Messages) {
  SyntaxCheckLimits limits;
  EXPECT_EQ(MemoryLimitMessage(limits), "the syntax check exceeded its memory limit of 256 MB");
  EXPECT_EQ(TimeLimitMessage(limits), "the syntax check exceeded its time limit of 10 s");
  limits.timeout_ms = 250;
  EXPECT_EQ(TimeLimitMessage(limits), "the syntax check exceeded its time limit of 250 ms");
}

TEST(PythonSyntax, ParseOverTheMemoryLimitIsRefusedWithTheLimit) {
  SyntaxCheckLimits limits;
  limits.memory_mb = 64;
  Status s = CheckPythonSyntax(HugePython(), limits);
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(s.message(), "the syntax check exceeded its memory limit of 64 MB");
}

TEST(PythonSyntax, NestingTooDeepIsACompileErrorNotAMemoryOne) {
  // CPython reports this one as a MemoryError although it uses a few MB.
  Status s = CheckPythonSyntax("x = " + std::string(100'000, '-') + "1\n");
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(s.message(), "handler.py: the code is nested too deeply to parse");
}

TEST(PythonSyntax, CheckPastTheTimeLimitIsCut) {
  SyntaxCheckLimits limits;
  limits.memory_mb = 2048;
  limits.timeout_ms = 50;  // far less than parsing 1 MiB takes
  Status s = CheckPythonSyntax(HugePython(), limits);
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(s.message(), "the syntax check exceeded its time limit of 50 ms");
}

TEST(JavaScriptSyntax, ParseOverTheMemoryLimitIsRefusedWithTheLimit) {
  std::string code;
  while (code.size() < (1 << 20) - 16) code += "function f(){}\n";
  SyntaxCheckLimits limits;
  limits.memory_mb = 64;
  Status s = CheckJavaScriptSyntax(code, limits);
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(s.message(), "the syntax check exceeded its memory limit of 64 MB");
  // The default limits leave room for it.
  EXPECT_TRUE(CheckJavaScriptSyntax(code).ok()) << CheckJavaScriptSyntax(code).ToString();
}

TEST(LuaSyntax, ParseOverTheMemoryLimitIsRefusedWithTheLimit) {
  std::string code = "local t = {";
  while (code.size() < (1 << 20) - 16) code += "1,";
  code += "}\n";
  SyntaxCheckLimits limits;
  limits.memory_mb = 1;
  Status s = CheckLuaSyntax(code, limits);
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(s.message(), "the syntax check exceeded its memory limit of 1 MB");
  EXPECT_TRUE(CheckLuaSyntax(code).ok());  // 256 MB is plenty
}

TEST(SyntaxCheckTurns, WaitingPastTheLimitForATurnIsTimeout) {
  std::promise<void> started, release;
  std::shared_future<void> released = release.get_future().share();
  int runs = 0;  // only ever touched by the caller that holds the one turn
  SyntaxCheckTurns turns(1, 1, 50, [&](std::string_view runtime, std::string_view) {
    ++runs;
    if (runtime == "slow") {
      started.set_value();
      released.wait();
    }
    return Status::Ok();
  });
  std::thread holder([&] { EXPECT_TRUE(turns.Check("slow", "").ok()); });
  started.get_future().wait();
  Status waited = turns.Check("lua", "");
  EXPECT_EQ(waited.code(), Status::Code::kTimeout) << waited.ToString();
  release.set_value();
  holder.join();
  EXPECT_TRUE(turns.Check("lua", "").ok());  // the turn came back
  EXPECT_EQ(runs, 2);                        // the refused caller never ran the check
}

TEST(SyntaxCheckTurns, NoWaitingPastTheWaitingLimit) {
  std::promise<void> started, release;
  std::shared_future<void> released = release.get_future().share();
  SyntaxCheckTurns turns(1, 0, 600'000, [&](std::string_view runtime, std::string_view) {
    if (runtime == "slow") {
      started.set_value();
      released.wait();
    }
    return Status::Ok();
  });
  std::thread holder([&] { EXPECT_TRUE(turns.Check("slow", "").ok()); });
  started.get_future().wait();
  // No one may wait: refused at once, not after the ten minutes' wait.
  Status refused = turns.Check("lua", "");
  EXPECT_EQ(refused.code(), Status::Code::kTimeout);
  EXPECT_NE(refused.message().find("already wait"), std::string::npos) << refused.message();
  release.set_value();
  holder.join();
  EXPECT_TRUE(turns.Check("lua", "").ok());
}

TEST(CheckSyntax, DispatchesOnRuntime) {
  EXPECT_EQ(CheckSyntax("lua", "x = = 1").code(), Status::Code::kInvalidArgument);
  EXPECT_TRUE(CheckSyntax("lua", "x = 1").ok());
  EXPECT_EQ(CheckSyntax("ruby", "x = 1").code(), Status::Code::kInvalidArgument);
}

}  // namespace
}  // namespace toolgate::registry
