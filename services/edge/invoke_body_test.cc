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

}  // namespace
}  // namespace toolgate::edge
