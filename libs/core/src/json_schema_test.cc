#include "toolgate/core/json_schema.h"

#include <gtest/gtest.h>

#include <string>

namespace toolgate::core {
namespace {

std::shared_ptr<const JsonSchema> Compiled(std::string_view schema) {
  auto s = JsonSchema::Compile(schema);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return s.ok() ? *s : nullptr;
}

// "pointer: message" for each error, joined with "; ".
std::string Errors(const JsonSchema& schema, std::string_view value) {
  std::string out;
  for (const SchemaError& e : schema.Validate(value)) {
    out += (out.empty() ? "" : "; ") + e.pointer + ": " + e.message;
  }
  return out;
}

constexpr const char* kWeather = R"({
  "type": "object",
  "title": "Weather",
  "properties": {
    "city": {"type": "string", "minLength": 2, "maxLength": 5, "pattern": "^[A-Z]"},
    "days": {"type": "integer", "minimum": 1, "maximum": 7},
    "units": {"enum": ["metric", "imperial"]},
    "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 2},
    "ratio": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
    "a/b~c": {"type": ["string", "null"]}
  },
  "required": ["city", "days"],
  "additionalProperties": false
})";

TEST(JsonSchemaTest, AConformingEventHasNoErrors) {
  auto s = Compiled(kWeather);
  EXPECT_EQ(Errors(*s, R"({"city":"Paris","days":3,"units":"metric","tags":["a"],)"
                       R"("ratio":0.5,"a/b~c":null})"),
            "");
  EXPECT_EQ(Errors(*s, R"({"city":"Oslo","days":7.0})"), "");  // 7.0 is an integer
}

TEST(JsonSchemaTest, EachErrorNamesItsPointer) {
  auto s = Compiled(kWeather);
  EXPECT_EQ(Errors(*s, R"({"days":0})"), "/city: is required; /days: must be at least 1");
  EXPECT_EQ(Errors(*s, R"({"city":"parisian","days":1.5})"),
            "/city: must be at most 5 characters long; /city: must match the pattern ^[A-Z]; "
            "/days: must be an integer");
  EXPECT_EQ(Errors(*s, R"({"city":"Rome","days":2,"units":"kelvin","extra":1})"),
            R"(/units: must be one of ["metric","imperial"]; /extra: is not an allowed property)");
  EXPECT_EQ(Errors(*s, R"({"city":"Rome","days":2,"tags":["a",2,"c"]})"),
            "/tags: must have at most 2 items; /tags/1: must be a string");
  EXPECT_EQ(Errors(*s, R"({"city":"Rome","days":2,"ratio":1,"a/b~c":3})"),
            "/ratio: must be less than 1; /a~1b~0c: must be a string or null");
  EXPECT_EQ(Errors(*s, R"("just a string")"), ": must be an object");
}

TEST(JsonSchemaTest, LengthsCountCharactersNotBytes) {
  auto s = Compiled(R"({"type":"string","maxLength":3})");
  EXPECT_EQ(Errors(*s, R"("été")"), "");
  EXPECT_EQ(Errors(*s, R"("étés")"), ": must be at most 3 characters long");
}

TEST(JsonSchemaTest, EnumAndConstUseJsonEquality) {
  auto s = Compiled(R"({"enum":[1, {"a":1,"b":[true,null]}]})");
  EXPECT_EQ(Errors(*s, "1.0"), "");
  EXPECT_EQ(Errors(*s, R"({"b":[true,null],"a":1})"), "");
  EXPECT_NE(Errors(*s, R"({"b":[null,true],"a":1})"), "");
  EXPECT_EQ(Errors(*Compiled(R"({"const":"x"})"), R"("y")"), R"(: must be "x")");
}

TEST(JsonSchemaTest, AdditionalPropertiesMayBeASchema) {
  auto s = Compiled(R"({"properties":{"a":{}},"additionalProperties":{"type":"integer"}})");
  EXPECT_EQ(Errors(*s, R"({"a":"x","b":1})"), "");
  EXPECT_EQ(Errors(*s, R"({"a":"x","b":"y"})"), "/b: must be an integer");
}

TEST(JsonSchemaTest, ASchemaWithoutCheckedKeywordsAcceptsEverything) {
  for (const char* text : {"{}", "true", R"({"title":"t","description":"d"})"}) {
    auto s = Compiled(text);
    EXPECT_TRUE(s->accepts_anything_of_its_type()) << text;
    EXPECT_EQ(Errors(*s, "[1]"), "");
  }
  EXPECT_EQ(Errors(*Compiled("false"), "{}"), ": is not allowed here");
  EXPECT_FALSE(Compiled(R"({"type":"object"})")->accepts_anything_of_its_type());
}

TEST(JsonSchemaTest, ErrorsAreBounded) {
  auto s = Compiled(R"({"type":"array","items":{"type":"string"}})");
  std::string many = "[";
  for (int i = 0; i < 100; ++i) many += (i ? ",1" : "1");
  many += "]";
  EXPECT_EQ(s->Validate(std::string_view(many)).size(), kMaxSchemaErrors);
}

TEST(JsonSchemaTest, APathologicalPatternRunsInLinearTime) {
  // Catastrophic for a backtracking engine; RE2 answers at once.
  auto s = Compiled(R"({"type":"string","pattern":"^(a+)+$"})");
  std::string text = "\"" + std::string(5000, 'a') + "!\"";
  EXPECT_EQ(Errors(*s, text), ": must match the pattern ^(a+)+$");
}

TEST(JsonSchemaTest, MalformedSchemasAreRefusedWithWhere) {
  auto refused = [](std::string_view schema) {
    auto s = JsonSchema::Compile(schema);
    return s.ok() ? std::string("accepted") : s.status().message();
  };
  EXPECT_EQ(refused("[]"), ": a schema must be an object");
  EXPECT_EQ(refused(R"({"type":"text"})"),
            "/type: must be one of object, array, string, number, integer, boolean, null");
  EXPECT_EQ(refused(R"({"type":[]})"), "/type: must name at least one type");
  EXPECT_EQ(refused(R"({"required":"a"})"), "/required: must be an array of names");
  EXPECT_EQ(refused(R"({"properties":{"age":{"minimum":"1"}}})"),
            "/properties/age/minimum: must be a number");
  EXPECT_EQ(refused(R"({"items":{"maxItems":-1}})"),
            "/items/maxItems: must be a non-negative integer");
  EXPECT_EQ(refused(R"({"enum":[]})"), "/enum: must be a non-empty array");
  EXPECT_NE(refused(R"({"pattern":"(unclosed"})").find("/pattern: is not a valid pattern"),
            std::string::npos);
  std::string deep;
  for (int i = 0; i <= kMaxSchemaDepth; ++i) deep += R"({"items":)";
  deep += "{}";
  for (int i = 0; i <= kMaxSchemaDepth; ++i) deep += "}";
  EXPECT_NE(refused(deep).find("nests deeper than 32 levels"), std::string::npos);
  EXPECT_NE(refused("{").find("is not JSON"), std::string::npos);
}

}  // namespace
}  // namespace toolgate::core
