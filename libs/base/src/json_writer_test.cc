#include "toolgate/base/json_writer.h"

#include <gtest/gtest.h>

namespace toolgate {
namespace {

TEST(JsonWriterTest, EmptyContainers) {
  EXPECT_EQ(JsonWriter().BeginObject().EndObject().str(), "{}");
  EXPECT_EQ(JsonWriter().BeginArray().EndArray().str(), "[]");
}

TEST(JsonWriterTest, ScalarsAndCommas) {
  JsonWriter w;
  w.BeginObject()
      .Field("s", "x")
      .Field("i", int64_t{-42})
      .Field("n", 7)
      .Field("t", true)
      .Field("f", false)
      .Key("z")
      .Null()
      .EndObject();
  EXPECT_EQ(w.str(), R"({"s":"x","i":-42,"n":7,"t":true,"f":false,"z":null})");
}

TEST(JsonWriterTest, NestingPlacesCommasBetweenSiblingsOnly) {
  JsonWriter w;
  w.BeginObject()
      .Key("a")
      .BeginArray()
      .Int(1)
      .BeginObject()
      .Field("b", 2)
      .EndObject()
      .BeginArray()
      .EndArray()
      .Int(3)
      .EndArray()
      .Key("c")
      .BeginObject()
      .Key("d")
      .BeginArray()
      .String("e")
      .EndArray()
      .EndObject()
      .EndObject();
  EXPECT_EQ(w.str(), R"({"a":[1,{"b":2},[],3],"c":{"d":["e"]}})");
}

TEST(JsonWriterTest, TopLevelArrayOfObjects) {
  JsonWriter w;
  w.BeginArray();
  for (int i = 0; i < 3; ++i) w.BeginObject().Field("i", i).EndObject();
  w.EndArray();
  EXPECT_EQ(w.str(), R"([{"i":0},{"i":1},{"i":2}])");
}

TEST(JsonWriterTest, EscapesQuotesAndBackslashes) {
  EXPECT_EQ(JsonWriter::Quote(R"(say "hi")"), R"("say \"hi\"")");
  EXPECT_EQ(JsonWriter::Quote(R"(C:\dir\)"), R"("C:\\dir\\")");
  EXPECT_EQ(JsonWriter::Quote("/"), R"("/")");
}

TEST(JsonWriterTest, KeepsTheTextBetweenEscapes) {
  EXPECT_EQ(JsonWriter::Quote("ab\"cd\\ef\ngh\x01ij"), R"("ab\"cd\\ef\ngh\u0001ij")");
  EXPECT_EQ(JsonWriter::Quote("\"\""), R"("\"\"")");
  EXPECT_EQ(JsonWriter::Quote("plain text, é and ✓"), "\"plain text, é and ✓\"");
  EXPECT_EQ(JsonWriter::Quote(""), R"("")");
}

TEST(JsonWriterTest, EscapesNamedControlCharacters) {
  EXPECT_EQ(JsonWriter::Quote("a\nb\rc\td\be\ff"), R"("a\nb\rc\td\be\ff")");
}

TEST(JsonWriterTest, EscapesOtherControlCharactersAsUnicode) {
  EXPECT_EQ(JsonWriter::Quote(std::string_view("\x00", 1)), R"("\u0000")");
  EXPECT_EQ(JsonWriter::Quote("\x01\x1f"), R"("\u0001\u001f")");
  // DEL (0x7f) is not a control character in JSON's sense and stays as is.
  EXPECT_EQ(JsonWriter::Quote("\x7f"), "\"\x7f\"");
}

TEST(JsonWriterTest, PassesUtf8Through) {
  EXPECT_EQ(JsonWriter::Quote("h\xc3\xa9llo \xe2\x82\xac"), "\"h\xc3\xa9llo \xe2\x82\xac\"");
}

TEST(JsonWriterTest, KeysAreEscapedToo) {
  JsonWriter w;
  w.BeginObject().Field("we\"ird\n", 1).EndObject();
  EXPECT_EQ(w.str(), R"({"we\"ird\n":1})");
}

TEST(JsonWriterTest, AppendQuotedAppends) {
  std::string out = "prefix:";
  JsonWriter::AppendQuoted(out, "v");
  EXPECT_EQ(out, R"(prefix:"v")");
}

TEST(JsonWriterTest, RawIsInsertedVerbatimAsOneValue) {
  JsonWriter w;
  w.BeginObject().Key("a").Raw(R"({"x":[1,2]})").Key("b").Raw("3").EndObject();
  EXPECT_EQ(w.str(), R"({"a":{"x":[1,2]},"b":3})");
  JsonWriter arr;
  arr.BeginArray().Raw("true").Raw("null").EndArray();
  EXPECT_EQ(arr.str(), "[true,null]");
}

TEST(JsonWriterTest, FieldOrNull) {
  JsonWriter w;
  w.BeginObject().FieldOrNull("a", "").FieldOrNull("b", "x").EndObject();
  EXPECT_EQ(w.str(), R"({"a":null,"b":"x"})");
}

TEST(JsonWriterTest, TakeMovesTheDocumentOut) {
  JsonWriter w;
  w.BeginArray().Int(1).EndArray();
  EXPECT_EQ(w.Take(), "[1]");
}

TEST(JsonWriterTest, Int64Extremes) {
  JsonWriter w;
  w.BeginArray().Int(INT64_MAX).Int(INT64_MIN).EndArray();
  EXPECT_EQ(w.str(), "[9223372036854775807,-9223372036854775808]");
}

}  // namespace
}  // namespace toolgate
