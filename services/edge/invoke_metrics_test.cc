#include "invoke_metrics.h"

#include <gtest/gtest.h>

#include "toolgate/core/runtime_names.h"

namespace toolgate::edge {
namespace {

v1::InvokeReply Success(int status, const std::string& runtime, const std::string& version) {
  v1::InvokeReply r;
  r.mutable_result()->set_status_code(status);
  r.mutable_result()->mutable_summary()->set_runtime(
      core::ParseRuntime(runtime).value_or(v1::RUNTIME_UNSPECIFIED));
  r.mutable_result()->mutable_summary()->set_version(version);
  return r;
}

v1::InvokeReply Problem(int status, const std::string& code) {
  v1::InvokeReply r;
  r.mutable_problem()->set_status(status);
  r.mutable_problem()->set_code(code);
  return r;
}

bool Has(const std::string& text, const std::string& line) {
  return text.find("\n" + line + "\n") != std::string::npos;
}

TEST(InvokeMetricsTest, StatusClass) {
  EXPECT_EQ(StatusClass(200), "2xx");
  EXPECT_EQ(StatusClass(402), "4xx");
  EXPECT_EQ(StatusClass(599), "5xx");
  EXPECT_EQ(StatusClass(42), "other");
}

TEST(InvokeMetricsTest, WithoutFunctionLabelsCountsByClassAndRuntime) {
  metrics::Registry registry;
  InvokeMetrics m({}, registry);
  m.Record("fn-a", "", Success(200, "lua", "1"), 200, 0.002);
  m.Record("fn-b", "2", Success(201, "lua", "2"), 201, 0.003);
  m.Record("fn-a", "", Problem(402, "insufficient_funds"), 402, 0.001);
  std::string text = registry.Expose();
  EXPECT_TRUE(Has(text, "toolgate_invocations_total{status_class=\"2xx\",runtime=\"lua\"} 2"))
      << text;
  EXPECT_TRUE(Has(text, "toolgate_invocations_total{status_class=\"4xx\",runtime=\"none\"} 1"));
  EXPECT_TRUE(Has(text, "toolgate_platform_errors_total{code=\"insufficient_funds\"} 1"));
  EXPECT_TRUE(Has(text, "toolgate_invoke_duration_seconds_count{status_class=\"2xx\"} 2"));
  EXPECT_EQ(text.find("fn-a"), std::string::npos);  // tenants' names stay out by default
}

TEST(InvokeMetricsTest, FunctionLabelsAreCapped) {
  metrics::Registry registry;
  InvokeMetrics m({true, 2}, registry);
  m.Record("fn-a", "", Success(200, "python", "3"), 200, 0.01);
  m.Record("fn-b", "", Success(200, "python", "1"), 200, 0.01);
  m.Record("fn-c", "", Success(200, "python", "1"), 200, 0.01);
  std::string text = registry.Expose();
  EXPECT_TRUE(Has(text,
                  "toolgate_invocations_total{function_id=\"fn-a\",version=\"3\",status_class="
                  "\"2xx\",runtime=\"python\"} 1"))
      << text;
  EXPECT_TRUE(Has(text,
                  "toolgate_invocations_total{function_id=\"_overflow\",version=\"_overflow\","
                  "status_class=\"_overflow\",runtime=\"_overflow\"} 2"))
      << text;
}

}  // namespace
}  // namespace toolgate::edge
