#include "toolgate/executor/runtime.h"

#include <gtest/gtest.h>

namespace toolgate::executor {
namespace {

TEST(ToValidUtf8, KeepsValidText) {
  EXPECT_EQ(ToValidUtf8("plain é ☃ 😀"), "plain é ☃ 😀");
  EXPECT_EQ(ToValidUtf8(""), "");
}

TEST(ToValidUtf8, ReplacesEachBadByte) {
  const std::string kBad = "\xEF\xBF\xBD";
  EXPECT_EQ(ToValidUtf8("a\xFF"
                        "b"),
            "a" + kBad + "b");
  EXPECT_EQ(ToValidUtf8("\xC0\xAF"), kBad + kBad);                        // overlong
  EXPECT_EQ(ToValidUtf8("\xED\xA0\x80"), kBad + kBad + kBad);             // surrogate
  EXPECT_EQ(ToValidUtf8("\xF4\x90\x80\x80"), kBad + kBad + kBad + kBad);  // past U+10FFFF
  EXPECT_EQ(ToValidUtf8("x\xE2\x98"), "x" + kBad + kBad);                 // cut short
}

TEST(LogBuffer, KeepsTextUpToTheLimitThenMarksTheCut) {
  LogBuffer log(10);
  log.Append("12345");
  log.Append("67");
  EXPECT_FALSE(log.truncated());
  log.Append("89abc");
  EXPECT_TRUE(log.truncated());
  log.Append("more");
  EXPECT_EQ(log.Take(), "123456789a\n[truncated]\n");
}

TEST(LogBuffer, ACharacterCutAtTheLimitBecomesAReplacement) {
  LogBuffer log(2);
  log.Append("a☃");
  EXPECT_EQ(log.Take(), "a\xEF\xBF\xBD\n[truncated]\n");
}

TEST(MemoryUsedMb, RoundsUpAndIsAtLeastOne) {
  EXPECT_EQ(MemoryUsedMb(0), 1);
  EXPECT_EQ(MemoryUsedMb(1), 1);
  EXPECT_EQ(MemoryUsedMb(1 << 20), 1);
  EXPECT_EQ(MemoryUsedMb((1 << 20) + 1), 2);
}

TEST(CompleteWithReturnValue, NormalisesAndEnforcesTheBodyLimit) {
  RuntimeLimits limits;
  limits.max_response_bytes = 5;
  ExecutionOutcome out;
  CompleteWithReturnValue(R"({"statusCode":202,"body":"12345"})", limits, &out);
  EXPECT_EQ(out.status_code, 202);
  EXPECT_EQ(out.body, "12345");
  CompleteWithReturnValue(R"({"statusCode":202,"body":"123456"})", limits, &out);
  EXPECT_EQ(out.status_code, 500);
  EXPECT_NE(out.body.find(R"("errorType":"ResponseTooLarge")"), std::string::npos);
}

TEST(CompleteWithError, CutsLongMessages) {
  ExecutionOutcome out;
  CompleteWithError("LuaError", std::string(20000, 'x'), &out);
  EXPECT_EQ(out.status_code, 500);
  EXPECT_LT(out.body.size(), 9000u);
  EXPECT_NE(out.body.find("[truncated]"), std::string::npos);
}

}  // namespace
}  // namespace toolgate::executor
