#include "toolgate/core/handler_result.h"

#include <gtest/gtest.h>

namespace toolgate::core {
namespace {

void ExpectResult(std::string_view returned, int status, std::string_view body) {
  HandlerResult r = NormalizeHandlerResult(returned);
  EXPECT_EQ(r.status_code, status) << returned;
  EXPECT_EQ(r.body, body) << returned;
}

TEST(HandlerResultTest, StatusCodeWithStringBodyKeepsTheStringAsIs) {
  ExpectResult(R"({"statusCode":201,"body":"{\"id\":1}"})", 201, R"({"id":1})");
  ExpectResult(R"({"statusCode":200,"body":"plain text"})", 200, "plain text");
  ExpectResult(R"({"statusCode":404,"body":""})", 404, "");
}

TEST(HandlerResultTest, StatusCodeWithObjectBodyEncodesIt) {
  ExpectResult(R"({"statusCode":200,"body":{"a": [1, 2], "b": "x"}})", 200,
               R"({"a":[1,2],"b":"x"})");
  ExpectResult(R"({"statusCode":202,"body":[true, null]})", 202, "[true,null]");
  ExpectResult(R"({"statusCode":200,"body":42})", 200, "42");
  ExpectResult(R"({"statusCode":200,"body":false})", 200, "false");
}

TEST(HandlerResultTest, AbsentOrNullBodyIsTheStringNull) {
  ExpectResult(R"({"statusCode":204})", 204, "null");
  ExpectResult(R"({"statusCode":200,"body":null})", 200, "null");
}

TEST(HandlerResultTest, OtherFieldsBesideStatusCodeAreDropped) {
  ExpectResult(R"({"statusCode":200,"body":"b","headers":{"x":"y"}})", 200, "b");
}

TEST(HandlerResultTest, StatusCodeAsWholeDoubleIsAccepted) {
  ExpectResult(R"({"statusCode":200.0,"body":"ok"})", 200, "ok");
  ExpectResult(R"({"statusCode":4.04e2,"body":"nf"})", 404, "nf");
}

TEST(HandlerResultTest, StatusCodeBoundaries) {
  ExpectResult(R"({"statusCode":200,"body":"x"})", 200, "x");
  ExpectResult(R"({"statusCode":599,"body":"x"})", 599, "x");
}

TEST(HandlerResultTest, StatusCodeOutOfRangeIs500InvalidStatusCode) {
  for (const char* returned :
       {R"({"statusCode":99,"body":"x"})", R"({"statusCode":600,"body":"x"})",
        R"({"statusCode":199})", R"({"statusCode":0})", R"({"statusCode":-200})",
        R"({"statusCode":100000000000})", R"({"statusCode":600.0})"}) {
    HandlerResult r = NormalizeHandlerResult(returned);
    EXPECT_EQ(r.status_code, 500) << returned;
    EXPECT_NE(r.body.find(R"("errorType":"InvalidStatusCode")"), std::string::npos)
        << returned << " -> " << r.body;
  }
  HandlerResult r = NormalizeHandlerResult(R"({"statusCode":99})");
  EXPECT_EQ(r.body, ErrorBody("InvalidStatusCode", "statusCode 99 is not in 200..599"));
}

TEST(HandlerResultTest, NonObjectValuesAre200WithTheirEncoding) {
  ExpectResult("42", 200, "42");
  ExpectResult(R"("hello")", 200, R"("hello")");
  ExpectResult(R"( [1, {"statusCode": 404}] )", 200, R"([1,{"statusCode":404}])");
  ExpectResult("null", 200, "null");
  ExpectResult("true", 200, "true");
  ExpectResult("1.5", 200, "1.5");
}

TEST(HandlerResultTest, ObjectWithoutStatusCodeIsAPlainValue) {
  ExpectResult(R"({"body":"x","result": 3})", 200, R"({"body":"x","result":3})");
  ExpectResult("{}", 200, "{}");
  ExpectResult(R"({"StatusCode":404})", 200, R"({"StatusCode":404})");  // case matters
}

TEST(HandlerResultTest, NonIntegerStatusCodeIsAPlainValue) {
  ExpectResult(R"({"statusCode":"404","body":"x"})", 200, R"({"statusCode":"404","body":"x"})");
  ExpectResult(R"({"statusCode":200.5,"body":"x"})", 200, R"({"statusCode":200.5,"body":"x"})");
  ExpectResult(R"({"statusCode":null,"body":"x"})", 200, R"({"statusCode":null,"body":"x"})");
  ExpectResult(R"({"statusCode":true})", 200, R"({"statusCode":true})");
}

TEST(HandlerResultTest, UnparseableResultIs500InvalidResult) {
  HandlerResult r = NormalizeHandlerResult("{not json");
  EXPECT_EQ(r.status_code, 500);
  EXPECT_NE(r.body.find(R"("errorType":"InvalidResult")"), std::string::npos) << r.body;
}

TEST(HandlerResultTest, ErrorBodyShape) {
  EXPECT_EQ(ErrorBody("ValueError", "bad \"x\""),
            R"({"errorType":"ValueError","errorMessage":"bad \"x\""})");
}

}  // namespace
}  // namespace toolgate::core

namespace toolgate::core {
namespace {

TEST(HandlerResultRangeTest, HugeStatusCodeIsAPlainValueNotACast) {
  // 1e300 is not an integer statusCode: the object is the handler's plain answer.
  HandlerResult r = NormalizeHandlerResult(R"({"statusCode": 1e300, "body": "x"})");
  EXPECT_EQ(r.status_code, 200);
  EXPECT_NE(r.body.find("statusCode"), std::string::npos);
}

}  // namespace
}  // namespace toolgate::core
