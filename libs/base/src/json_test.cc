#include "toolgate/base/json.h"

#include <gtest/gtest.h>

namespace toolgate {
namespace {

// Parses text, which must be a JSON object, and keeps the document alive for the test.
class JsonTest : public ::testing::Test {
 protected:
  simdjson::dom::object Object(std::string_view text) {
    auto doc = ParseJson(text);
    EXPECT_TRUE(doc.ok()) << doc.status().ToString();
    doc_ = std::move(doc.value());
    simdjson::dom::object obj;
    EXPECT_EQ(doc_.root.get_object().get(obj), simdjson::SUCCESS);
    return obj;
  }

 private:
  ParsedJson doc_;
};

TEST_F(JsonTest, ParseJsonRejectsInvalidText) {
  for (const char* text : {"", "{", "{\"a\":}", "[1,]", "nul", "{\"a\":1} x", "'a'"}) {
    auto doc = ParseJson(text);
    ASSERT_FALSE(doc.ok()) << text;
    EXPECT_EQ(doc.status().code(), Status::Code::kInvalidArgument) << text;
    EXPECT_FALSE(doc.status().message().empty());
  }
}

TEST_F(JsonTest, ParseJsonAcceptsAnyValue) {
  for (const char* text : {"{}", "[]", "1", "\"s\"", "null", " true "}) {
    EXPECT_TRUE(ParseJson(text).ok()) << text;
  }
}

TEST_F(JsonTest, ParsedDocumentOutlivesTheInputText) {
  auto doc = [] {
    std::string text = R"({"name":"kept"})";
    return ParseJson(text);
  }();
  ASSERT_TRUE(doc.ok());
  std::string_view name;
  ASSERT_EQ(doc->root["name"].get_string().get(name), simdjson::SUCCESS);
  EXPECT_EQ(name, "kept");
}

TEST_F(JsonTest, GetString) {
  auto obj = Object(R"({"s":"v","n":1,"z":null,"e":"we\"ird"})");
  std::string out = "untouched";
  EXPECT_EQ(GetString(obj, "missing", &out), Field::kAbsent);
  EXPECT_EQ(GetString(obj, "z", &out), Field::kAbsent);
  EXPECT_EQ(GetString(obj, "n", &out), Field::kWrongType);
  EXPECT_EQ(out, "untouched");
  EXPECT_EQ(GetString(obj, "s", &out), Field::kOk);
  EXPECT_EQ(out, "v");
  EXPECT_EQ(GetString(obj, "e", &out), Field::kOk);
  EXPECT_EQ(out, "we\"ird");
}

TEST_F(JsonTest, GetInt) {
  auto obj = Object(R"({"i":5,"neg":-7,"d":5.0,"frac":5.5,"s":"5","b":true,"z":null,"big":1e300})");
  int64_t out = 99;
  EXPECT_EQ(GetInt(obj, "missing", &out), Field::kAbsent);
  EXPECT_EQ(GetInt(obj, "z", &out), Field::kAbsent);
  EXPECT_EQ(GetInt(obj, "frac", &out), Field::kWrongType);
  EXPECT_EQ(GetInt(obj, "s", &out), Field::kWrongType);
  EXPECT_EQ(GetInt(obj, "b", &out), Field::kWrongType);
  EXPECT_EQ(GetInt(obj, "big", &out), Field::kWrongType);  // whole, but no int64
  EXPECT_EQ(out, 99);
  EXPECT_EQ(GetInt(obj, "i", &out), Field::kOk);
  EXPECT_EQ(out, 5);
  EXPECT_EQ(GetInt(obj, "neg", &out), Field::kOk);
  EXPECT_EQ(out, -7);
  out = 0;
  EXPECT_EQ(GetInt(obj, "d", &out), Field::kOk);  // clients in JavaScript send 5.0
  EXPECT_EQ(out, 5);
}

TEST_F(JsonTest, GetBool) {
  auto obj = Object(R"({"t":true,"f":false,"n":0,"z":null})");
  bool out = true;
  EXPECT_EQ(GetBool(obj, "missing", &out), Field::kAbsent);
  EXPECT_EQ(GetBool(obj, "z", &out), Field::kAbsent);
  EXPECT_EQ(GetBool(obj, "n", &out), Field::kWrongType);
  EXPECT_TRUE(out);
  EXPECT_EQ(GetBool(obj, "f", &out), Field::kOk);
  EXPECT_FALSE(out);
  EXPECT_EQ(GetBool(obj, "t", &out), Field::kOk);
  EXPECT_TRUE(out);
}

TEST_F(JsonTest, GetStringArray) {
  auto obj = Object(R"({"a":["x","y"],"empty":[],"mixed":["x",1],"s":"x","z":null})");
  std::vector<std::string> out = {"untouched"};
  EXPECT_EQ(GetStringArray(obj, "missing", &out), Field::kAbsent);
  EXPECT_EQ(GetStringArray(obj, "z", &out), Field::kAbsent);
  EXPECT_EQ(GetStringArray(obj, "s", &out), Field::kWrongType);
  EXPECT_EQ(GetStringArray(obj, "mixed", &out), Field::kWrongType);
  EXPECT_EQ(out, std::vector<std::string>{"untouched"});
  EXPECT_EQ(GetStringArray(obj, "a", &out), Field::kOk);
  EXPECT_EQ(out, (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(GetStringArray(obj, "empty", &out), Field::kOk);
  EXPECT_TRUE(out.empty());
}

TEST_F(JsonTest, GetRawReencodesCompactly) {
  auto obj = Object(R"({"o": { "k" : [1, 2, {"x": "y"}] }, "n": 3, "s": "t", "z": null})");
  std::string out = "untouched";
  EXPECT_EQ(GetRaw(obj, "missing", &out), Field::kAbsent);
  EXPECT_EQ(GetRaw(obj, "z", &out), Field::kAbsent);
  EXPECT_EQ(out, "untouched");
  EXPECT_EQ(GetRaw(obj, "o", &out), Field::kOk);
  EXPECT_EQ(out, R"({"k":[1,2,{"x":"y"}]})");
  EXPECT_EQ(GetRaw(obj, "n", &out), Field::kOk);
  EXPECT_EQ(out, "3");
  EXPECT_EQ(GetRaw(obj, "s", &out), Field::kOk);
  EXPECT_EQ(out, "\"t\"");
}

TEST_F(JsonTest, ToJsonOfRoot) {
  auto doc = ParseJson(R"( [ 1 , "a\nb" , null ] )");
  ASSERT_TRUE(doc.ok());
  EXPECT_EQ(ToJson(doc->root), R"([1,"a\nb",null])");
}

}  // namespace
TEST(JsonWithMemberTest, ReplacesOrAdds) {
  EXPECT_EQ(WithMember(R"({"a":1,"b":2})", "b", "3"), R"({"a":1,"b":3})");
  EXPECT_EQ(WithMember(R"({"a":1})", "c", R"("x")"), R"({"a":1,"c":"x"})");
  EXPECT_EQ(WithMember("[1]", "c", "1"), "[1]");
}

}  // namespace toolgate
