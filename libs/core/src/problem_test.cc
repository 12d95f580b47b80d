#include "toolgate/core/problem.h"

#include <gtest/gtest.h>

namespace toolgate::core {
namespace {

TEST(ProblemTest, MakeProblemFillsStatusAndTitleFromTheCatalogue) {
  v1::Problem p = MakeProblem("insufficient_balance", "Top up at /billing/top-ups.");
  EXPECT_EQ(p.status(), 402);
  EXPECT_EQ(p.code(), "insufficient_balance");
  EXPECT_EQ(p.title(), "Insufficient balance");
  EXPECT_EQ(p.detail(), "Top up at /billing/top-ups.");
  EXPECT_EQ(p.errors_size(), 0);
}

TEST(ProblemTest, CatalogueStatusesMatchTheContract) {
  const std::pair<const char*, int> kExpected[] = {
      {"payload_too_large", 413},
      {"missing_api_key", 401},
      {"invalid_api_key", 401},
      {"api_key_expired", 401},
      {"api_key_revoked", 401},
      {"not_authenticated", 401},
      {"function_not_found", 404},
      {"version_not_found", 404},
      {"not_found", 404},
      {"function_not_added", 403},
      {"forbidden", 403},
      {"csrf_rejected", 403},
      {"invalid_json", 400},
      {"missing_event", 400},
      {"invalid_event", 400},
      {"invalid_env_keys", 400},
      {"missing_env_key", 400},
      {"undeclared_env_key", 400},
      {"unknown_secret", 400},
      {"rate_limited", 429},
      {"too_many_connections", 429},
      {"request_timeout", 408},
      {"headers_too_large", 431},
      {"concurrency_limit", 429},
      {"insufficient_balance", 402},
      {"no_capacity", 503},
      {"service_unavailable", 503},
      {"timeout", 408},
      {"executor_failure", 502},
      {"conflict", 409},
      {"email_taken", 409},
      {"version_exists", 409},
      {"validation_failed", 422},
      {"internal_error", 500},
  };
  for (const auto& [code, status] : kExpected) {
    v1::Problem p = MakeProblem(code, "d");
    EXPECT_EQ(p.status(), status) << code;
    EXPECT_EQ(p.code(), code);
    EXPECT_FALSE(p.title().empty()) << code;
  }
}

TEST(ProblemTest, UnknownCodeBecomesInternalError) {
  v1::Problem p = MakeProblem("no_such_code", "detail kept");
  EXPECT_EQ(p.status(), 500);
  EXPECT_EQ(p.code(), "internal_error");
  EXPECT_EQ(p.title(), "Internal error");
  EXPECT_EQ(p.detail(), "detail kept");
}

TEST(ProblemTest, RenderProblemShape) {
  EXPECT_EQ(RenderProblem(MakeProblem("function_not_found", "Check the id."), "req-1"),
            R"({"type":"urn:toolgate:error:function_not_found","title":"Function not found",)"
            R"("status":404,"detail":"Check the id.","code":"function_not_found",)"
            R"("request_id":"req-1"})");
}

TEST(ProblemTest, RenderUnknownCodeAsInternalError) {
  EXPECT_EQ(RenderProblem(MakeProblem("bogus", ""), "r"),
            R"({"type":"urn:toolgate:error:internal_error","title":"Internal error",)"
            R"("status":500,"detail":"","code":"internal_error","request_id":"r"})");
}

TEST(ProblemTest, ValidationProblemCarriesFieldErrors) {
  v1::Problem p = ValidationProblem("email", "is not an email address");
  AddFieldError(&p, "password", "must have at least 10 characters");
  EXPECT_EQ(p.status(), 422);
  EXPECT_EQ(p.code(), "validation_failed");
  ASSERT_EQ(p.errors_size(), 2);
  EXPECT_EQ(p.errors(0).field(), "email");
  EXPECT_EQ(p.errors(1).message(), "must have at least 10 characters");
  EXPECT_EQ(RenderProblem(p, "r2"),
            R"({"type":"urn:toolgate:error:validation_failed","title":"Validation failed",)"
            R"("status":422,"detail":"Fix the fields listed in errors.",)"
            R"("code":"validation_failed","request_id":"r2","errors":[)"
            R"({"field":"email","message":"is not an email address"},)"
            R"({"field":"password","message":"must have at least 10 characters"}]})");
}

TEST(ProblemTest, RenderEscapesText) {
  v1::Problem p = ValidationProblem("na\"me", "line\nbreak");
  std::string json = RenderProblem(p, "r\\3");
  EXPECT_NE(json.find(R"("field":"na\"me")"), std::string::npos) << json;
  EXPECT_NE(json.find(R"("message":"line\nbreak")"), std::string::npos) << json;
  EXPECT_NE(json.find(R"("request_id":"r\\3")"), std::string::npos) << json;
}

}  // namespace
}  // namespace toolgate::core
