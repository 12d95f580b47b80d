#include "invoke_body.h"

#include <gtest/gtest.h>

#include <string>

#include "toolgate/core/event_depth.h"

namespace toolgate::edge {
namespace {

TEST(InvokeBodyTest, ObjectEventKeptByteForByte) {
  auto b = ParseInvokeBody(R"({"event": {"b": 1.50, "a": [1, 2]} })");
  EXPECT_EQ(b.check, v1::BODY_OK);
  EXPECT_EQ(b.event_json, R"({"b": 1.50, "a": [1, 2]})");
}

TEST(InvokeBodyTest, StringEventKeptWithQuotes) {
  auto b = ParseInvokeBody(R"({"event": "{\"jsonrpc\":\"2.0\"}" })");
  EXPECT_EQ(b.check, v1::BODY_OK);
  EXPECT_EQ(b.event_json, R"("{\"jsonrpc\":\"2.0\"}")");
}

TEST(InvokeBodyTest, InvalidJson) {
  EXPECT_EQ(ParseInvokeBody("").check, v1::BODY_INVALID_JSON);
  EXPECT_EQ(ParseInvokeBody("{\"event\": {}").check, v1::BODY_INVALID_JSON);
  EXPECT_EQ(ParseInvokeBody("{\"event\": {}} trailing").check, v1::BODY_INVALID_JSON);
}

TEST(InvokeBodyTest, MissingEvent) {
  EXPECT_EQ(ParseInvokeBody("{}").check, v1::BODY_MISSING_EVENT);
  EXPECT_EQ(ParseInvokeBody("{\"evnt\": {}}").check, v1::BODY_MISSING_EVENT);
  EXPECT_EQ(ParseInvokeBody("[1]").check, v1::BODY_MISSING_EVENT);
}

TEST(InvokeBodyTest, EventOfWrongType) {
  for (const char* body :
       {"{\"event\": 1}", "{\"event\": null}", "{\"event\": [1]}", "{\"event\": true}"}) {
    EXPECT_EQ(ParseInvokeBody(body).check, v1::BODY_INVALID_EVENT) << body;
  }
}

// {"event": E} where E nests `levels` levels: objects and arrays in turn, the event an object.
std::string BodyWithEventDepth(size_t levels) {
  std::string open, close;
  for (size_t level = 1; level <= levels; ++level) {
    const bool object = level % 2 == 1;
    open += object ? (level == levels ? "{" : "{\"a\":") : "[";
    close.insert(0, object ? "}" : "]");
  }
  return "{\"event\": " + open + close + "}";
}

TEST(InvokeBodyTest, EventAtTheDepthLimitPasses) {
  const std::string body = BodyWithEventDepth(core::kMaxEventDepth);
  auto b = ParseInvokeBody(body);
  EXPECT_EQ(b.check, v1::BODY_OK);
  EXPECT_EQ(b.event_json, body.substr(10, body.size() - 11));
}

TEST(InvokeBodyTest, EventOneLevelDeeperIsRefused) {
  EXPECT_EQ(ParseInvokeBody(BodyWithEventDepth(core::kMaxEventDepth + 1)).check,
            v1::BODY_EVENT_TOO_DEEP);
}

TEST(InvokeBodyTest, DeepEventIsRefusedForItsDepthNotAsInvalidJson) {
  EXPECT_EQ(ParseInvokeBody(BodyWithEventDepth(1000)).check, v1::BODY_EVENT_TOO_DEEP);
  // Deep as it may be, the parser's other checks are unchanged, thread after thread.
  EXPECT_EQ(ParseInvokeBody("{\"event\": {}}").check, v1::BODY_OK);
}

TEST(PreferTest, RespondAsyncAmongOtherPreferences) {
  EXPECT_TRUE(PrefersRespondAsync("respond-async"));
  EXPECT_TRUE(PrefersRespondAsync("Respond-Async"));
  EXPECT_TRUE(PrefersRespondAsync("return=minimal, respond-async; foo=bar, wait=10"));
  EXPECT_TRUE(PrefersRespondAsync("  respond-async  "));
  EXPECT_FALSE(PrefersRespondAsync(""));
  EXPECT_FALSE(PrefersRespondAsync("wait=10"));
  EXPECT_FALSE(PrefersRespondAsync("respond-asynchronously"));
  EXPECT_FALSE(PrefersRespondAsync("x=respond-async"));
}

TEST(IdempotencyKeyTest, QuotedOrBarePrintableAscii) {
  std::string key;
  ASSERT_TRUE(ParseIdempotencyKey("\"8e03978e-40d5-43e8-bc93-6894a57f9324\"", &key));
  EXPECT_EQ(key, "8e03978e-40d5-43e8-bc93-6894a57f9324");
  ASSERT_TRUE(ParseIdempotencyKey("order-1", &key));
  EXPECT_EQ(key, "order-1");
  ASSERT_TRUE(ParseIdempotencyKey(R"("say \"hi\" \\")", &key));
  EXPECT_EQ(key, R"(say "hi" \)");
  EXPECT_FALSE(ParseIdempotencyKey("", &key));
  EXPECT_FALSE(ParseIdempotencyKey("\"\"", &key));
  EXPECT_FALSE(ParseIdempotencyKey("\"open", &key));
  EXPECT_FALSE(ParseIdempotencyKey(R"("a"b")", &key));
  EXPECT_FALSE(ParseIdempotencyKey(R"("bad \n escape")", &key));
  EXPECT_FALSE(ParseIdempotencyKey("caf\xc3\xa9", &key));
  EXPECT_TRUE(ParseIdempotencyKey(std::string(kMaxIdempotencyKeyLength, 'k'), &key));
  EXPECT_FALSE(ParseIdempotencyKey(std::string(kMaxIdempotencyKeyLength + 1, 'k'), &key));
}

TEST(IdempotencyKeyTest, RequestDigestTellsRequestsApart) {
  const std::string empty, keys = "A=s1";
  const std::string base = InvokeRequestDigest("f", "1.0", nullptr, "{}");
  EXPECT_EQ(base, InvokeRequestDigest("f", "1.0", nullptr, "{}"));
  EXPECT_NE(base, InvokeRequestDigest("f", "1.0", nullptr, "{ }"));
  EXPECT_NE(base, InvokeRequestDigest("f", "", nullptr, "{}"));
  EXPECT_NE(base, InvokeRequestDigest("f", "1.0", &empty, "{}"));
  EXPECT_NE(InvokeRequestDigest("f", "1.0", &empty, "{}"),
            InvokeRequestDigest("f", "1.0", &keys, "{}"));
  // No shifting of bytes between parts gives the same digest.
  EXPECT_NE(InvokeRequestDigest("f1", ".0", nullptr, "{}"),
            InvokeRequestDigest("f", "1.0", nullptr, "{}"));
}

}  // namespace
}  // namespace toolgate::edge
