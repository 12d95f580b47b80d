#include "toolgate/registry/syntax_check.h"

#include <gtest/gtest.h>
#include <unistd.h>

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
  if (access("/usr/bin/python3", X_OK) != 0) GTEST_SKIP() << "no /usr/bin/python3";
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
  if (ok.code() == Status::Code::kNotFound) GTEST_SKIP() << "node is not installed";
  EXPECT_TRUE(ok.ok()) << ok.ToString();
  EXPECT_TRUE(CheckJavaScriptSyntax("process.exit(3)").ok());  // never run
  Status s = CheckJavaScriptSyntax("function service_handler(event {\n  return 1;\n}\n");
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(s.message().rfind("handler.js:1", 0), 0u) << s.message();
  EXPECT_NE(s.message().find("SyntaxError"), std::string::npos) << s.message();
  EXPECT_EQ(s.message().find("    at "), std::string::npos) << s.message();
}

TEST(CheckSyntax, DispatchesOnRuntime) {
  EXPECT_EQ(CheckSyntax("lua", "x = = 1").code(), Status::Code::kInvalidArgument);
  EXPECT_TRUE(CheckSyntax("lua", "x = 1").ok());
  EXPECT_EQ(CheckSyntax("ruby", "x = 1").code(), Status::Code::kInvalidArgument);
}

}  // namespace
}  // namespace toolgate::registry
