#include "invoke_body.h"

#include <gtest/gtest.h>

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
  for (const char* body : {"{\"event\": 1}", "{\"event\": null}", "{\"event\": [1]}",
                           "{\"event\": true}"}) {
    EXPECT_EQ(ParseInvokeBody(body).check, v1::BODY_INVALID_EVENT) << body;
  }
}

}  // namespace
}  // namespace toolgate::edge
