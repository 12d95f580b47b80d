#include "toolgate/executor/runtime.h"

#include <gtest/gtest.h>

#include <vector>

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

Notice Progress(double progress, std::string message = "") {
  Notice n;
  n.progress = progress;
  n.message = std::move(message);
  return n;
}

Notice Log(std::string level, std::string data_json) {
  Notice n;
  n.kind = Notice::Kind::kLog;
  n.level = std::move(level);
  n.data_json = std::move(data_json);
  return n;
}

TEST(BoundedNoticeSink, PassesOnTheFirstHundredInOrderAndDropsTheRest) {
  std::vector<double> seen;
  BoundedNoticeSink sink([&](const Notice& n) { seen.push_back(n.progress); });
  for (int i = 0; i < 1000; ++i) {
    if (sink.accepting()) {
      sink.Offer(Progress(i));
    } else {
      sink.Drop();
    }
  }
  ASSERT_EQ(seen.size(), 100u);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(seen[i], i);
  EXPECT_EQ(sink.delivered(), 100u);
  EXPECT_EQ(sink.dropped(), 900u);
  EXPECT_FALSE(sink.accepting());
}

TEST(BoundedNoticeSink, DropsAnOversizedNoticeAndKeepsTakingSmallerOnes) {
  std::vector<std::string> seen;
  BoundedNoticeSink sink([&](const Notice& n) { seen.push_back(n.data_json); });
  sink.Offer(Log("info", "\"" + std::string(16 << 10, 'x') + "\""));        // 2 bytes over
  sink.Offer(Log("info", "\"" + std::string((16 << 10) - 2, 'x') + "\""));  // exactly at it
  sink.Offer(Log("info", "1"));
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].size(), size_t{16 << 10});
  EXPECT_EQ(seen[1], "1");
  EXPECT_EQ(sink.dropped(), 1u);
}

TEST(BoundedNoticeSink, HoldsTheTotalBytesOfACall) {
  size_t bytes = 0, count = 0;
  BoundedNoticeSink sink([&](const Notice& n) {
    bytes += n.message.size();
    ++count;
  });
  // 16 of 16 KiB fill the 256 KiB; the 17th and anything larger than what is left are dropped.
  for (int i = 0; i < 17; ++i) sink.Offer(Progress(i, std::string(16 << 10, 'm')));
  sink.Offer(Progress(17));  // no text: still fits
  EXPECT_EQ(bytes, size_t{256 << 10});
  EXPECT_EQ(count, 17u);
  EXPECT_EQ(sink.dropped(), 1u);
}

TEST(BoundedNoticeSink, DropsALogAtALevelThatIsNotOne) {
  size_t count = 0;
  BoundedNoticeSink sink([&](const Notice&) { ++count; });
  sink.Offer(Log("loud", "1"));
  for (std::string_view level : kNoticeLevels) sink.Offer(Log(std::string(level), "1"));
  EXPECT_EQ(count, 8u);
  EXPECT_EQ(sink.dropped(), 1u);
  EXPECT_TRUE(IsNoticeLevel("emergency"));
  EXPECT_FALSE(IsNoticeLevel("Info"));
}

}  // namespace
}  // namespace toolgate::executor
