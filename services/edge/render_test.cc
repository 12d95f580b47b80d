#include "render.h"

#include <gtest/gtest.h>

#include "toolgate/base/json.h"
#include "toolgate/core/problem.h"

namespace toolgate::edge {
namespace {

std::string HeaderOf(const HttpAnswer& a, const std::string& name) {
  for (const auto& [k, v] : a.headers) {
    if (k == name) return v;
  }
  return {};
}

TEST(RenderTest, SuccessEnvelopeCarriesHandlerStatusAndSummary) {
  v1::InvokeReply reply;
  auto* r = reply.mutable_result();
  r->set_status_code(201);
  r->set_body("{\"ok\":true}");
  auto* s = r->mutable_summary();
  s->set_runtime_ms(3);
  s->set_memory_used_mb(2);
  s->set_compute_type(v1::COMPUTE_TYPE_CPU);
  s->set_execution_id("e1");
  s->set_egress_bytes(4096);
  s->mutable_cost()->set_compute_micro_usd(7);
  s->mutable_cost()->set_function_micro_usd(100);
  s->mutable_cost()->set_total_micro_usd(107);
  HttpAnswer a = RenderInvokeReply(reply, "rid", 0);
  EXPECT_EQ(a.status, 201);
  EXPECT_EQ(a.content_type, "application/json");
  auto doc = ParseJson(a.body);
  ASSERT_TRUE(doc.ok());
  EXPECT_EQ(int64_t(doc->root["statusCode"]), 201);
  EXPECT_EQ(std::string_view(doc->root["body"]), "{\"ok\":true}");
  EXPECT_EQ(int64_t(doc->root["summary"]["cost"]["total_micro_usd"]), 107);
  EXPECT_EQ(std::string_view(doc->root["summary"]["execution_id"]), "e1");
  EXPECT_EQ(std::string_view(doc->root["summary"]["compute_type"]), "CPU");
  EXPECT_EQ(int64_t(doc->root["summary"]["egress_bytes"]), 4096);
  EXPECT_EQ(HeaderOf(a, "X-Toolgate-Cost"), "107");
}

// The charge in a header: 0 for what is never charged, none where the outcome is unknown.
TEST(RenderTest, CostHeaderSaysWhatTheCallWasCharged) {
  v1::InvokeReply refused;
  *refused.mutable_problem() = core::MakeProblem("insufficient_balance", "top up");
  EXPECT_EQ(HeaderOf(RenderInvokeReply(refused, "rid", 0), "X-Toolgate-Cost"), "0");
  v1::InvokeReply unknown;
  *unknown.mutable_problem() = core::MakeProblem("upstream_timeout", "no answer");
  EXPECT_EQ(HeaderOf(RenderInvokeReply(unknown, "rid", 0), "X-Toolgate-Cost"), "");
}

// What is left after a call: the available balance, and the tightest limit's remainder with its
// name; neither when billing did not say (an older billing, no limit).
TEST(RenderTest, BalanceHeadersSayWhatIsLeft) {
  v1::InvokeReply reply;
  auto* s = reply.mutable_result()->mutable_summary();
  reply.mutable_result()->set_status_code(200);
  s->mutable_cost()->set_total_micro_usd(107);
  HttpAnswer bare = RenderInvokeReply(reply, "rid", 0);
  EXPECT_EQ(HeaderOf(bare, "X-Toolgate-Balance"), "");
  EXPECT_EQ(HeaderOf(bare, "X-Toolgate-Budget-Remaining"), "");
  s->set_available_after_micro_usd(0);
  s->set_budget_remaining_micro_usd(393);
  s->set_budget_limit("key_daily");
  HttpAnswer a = RenderInvokeReply(reply, "rid", 0);
  EXPECT_EQ(HeaderOf(a, "X-Toolgate-Balance"), "0");
  EXPECT_EQ(HeaderOf(a, "X-Toolgate-Budget-Remaining"), "393; limit=key_daily");
}

TEST(RenderTest, AnEstimateSaysWhatTheCallWouldHold) {
  v1::InvokeReply reply;
  auto* e = reply.mutable_estimate();
  e->set_max_hold_micro_usd(1010);
  e->set_function_micro_usd(1000);
  e->set_max_compute_micro_usd(10);
  e->set_available_micro_usd(500000);
  HttpAnswer a = RenderEstimateReply(reply, "rid", 0);
  EXPECT_EQ(a.status, 200);
  EXPECT_EQ(
      a.body,
      R"({"max_hold_micro_usd":1010,"function_micro_usd":1000,"max_compute_micro_usd":10,)"
      R"("available_micro_usd":500000,"budget_remaining_micro_usd":null,"budget_limit":null})");
  EXPECT_EQ(HeaderOf(a, "X-Toolgate-Cost"), "");
  e->set_budget_remaining_micro_usd(20000);
  e->set_budget_limit("org_monthly");
  EXPECT_NE(RenderEstimateReply(reply, "rid", 0)
                .body.find(R"("budget_remaining_micro_usd":20000,"budget_limit":"org_monthly")"),
            std::string::npos);
  // The call's own refusal, with its Retry-After; nothing about a charge.
  v1::InvokeReply refused;
  *refused.mutable_problem() = core::MakeProblem("rate_limited", "slow down");
  refused.mutable_problem()->set_retry_after_s(3);
  HttpAnswer r = RenderEstimateReply(refused, "rid", 0);
  EXPECT_EQ(r.status, 429);
  EXPECT_EQ(HeaderOf(r, "Retry-After"), "3");
  EXPECT_EQ(HeaderOf(r, "X-Toolgate-Cost"), "");
  // Anything else from the chain is not an estimate.
  v1::InvokeReply odd;
  odd.mutable_result()->set_status_code(200);
  EXPECT_EQ(RenderEstimateReply(odd, "rid", 0).status, 500);
}

TEST(RenderTest, ProblemWithRetryAfter) {
  v1::InvokeReply reply;
  *reply.mutable_problem() = core::MakeProblem("rate_limited", "slow down");
  reply.mutable_problem()->set_retry_after_s(2);
  HttpAnswer a = RenderInvokeReply(reply, "rid", 0);
  EXPECT_EQ(a.status, 429);
  EXPECT_EQ(a.content_type, "application/problem+json");
  EXPECT_EQ(HeaderOf(a, "Retry-After"), "2");
  auto doc = ParseJson(a.body);
  ASSERT_TRUE(doc.ok());
  EXPECT_EQ(std::string_view(doc->root["code"]), "rate_limited");
  EXPECT_EQ(std::string_view(doc->root["request_id"]), "rid");
}

TEST(RenderTest, A429Or503WithoutAWaitStillSaysWhenToComeBack) {
  for (const char* code : {"service_unavailable", "concurrency_limit", "no_capacity"}) {
    HttpAnswer a = RenderProblem(core::MakeProblem(code, "later"), "rid");
    EXPECT_EQ(HeaderOf(a, "Retry-After"), "1") << code;
  }
  EXPECT_EQ(HeaderOf(RenderProblem(core::MakeProblem("not_found", "no"), "rid"), "Retry-After"),
            "");
}

TEST(RenderTest, ExpiryHeaderOnlyWithinFourteenDays) {
  v1::InvokeReply reply;
  reply.mutable_result()->set_status_code(200);
  const int64_t day = 24LL * 3600 * 1000;
  int64_t now = 1'800'000'000'000;
  reply.set_key_expires_at_ms(now + 14 * day);
  EXPECT_EQ(HeaderOf(RenderInvokeReply(reply, "r", now), "X-Api-Key-Expires-At"),
            "2027-01-29T08:00:00Z");
  reply.set_key_expires_at_ms(now + 15 * day);
  EXPECT_EQ(HeaderOf(RenderInvokeReply(reply, "r", now), "X-Api-Key-Expires-At"), "");
}

TEST(RenderTest, AManagementResponseMayNameItsContentTypeOnce) {
  v1::HttpResponse response;
  response.set_status(200);
  response.set_body("date,calls\r\n");
  (*response.mutable_headers())["Content-Type"] = "text/csv; charset=utf-8";
  (*response.mutable_headers())["Content-Disposition"] = "attachment; filename=\"e.csv\"";
  HttpAnswer a = RenderHttpResponse(response, "r");
  EXPECT_EQ(a.content_type, "text/csv; charset=utf-8");
  EXPECT_EQ(HeaderOf(a, "Content-Type"), "");  // not a second time among the others
  EXPECT_EQ(HeaderOf(a, "Content-Disposition"), "attachment; filename=\"e.csv\"");
  // A problem stays problem+json whatever the service named.
  response.mutable_problem()->set_status(503);
  EXPECT_EQ(RenderHttpResponse(response, "r").content_type, "application/problem+json");
}

TEST(RenderTest, ManagementResponseCookiesAndNoContent) {
  v1::HttpResponse response;
  response.set_status(204);
  response.add_set_cookies("tg_session=; Max-Age=0");
  HttpAnswer a = RenderHttpResponse(response, "r");
  EXPECT_EQ(a.status, 204);
  EXPECT_TRUE(a.content_type.empty());
  EXPECT_EQ(HeaderOf(a, "Set-Cookie"), "tg_session=; Max-Age=0");
}

TEST(RenderTest, AcceptedCallIs202WithItsStatusAtLocation) {
  v1::InvokeReply reply;
  reply.mutable_accepted()->set_execution_id("e-1");
  reply.mutable_accepted()->set_status("queued");
  HttpAnswer a = RenderInvokeReply(reply, "req", 0);
  EXPECT_EQ(a.status, 202);
  EXPECT_EQ(a.body,
            R"({"execution_id":"e-1","status":"queued","status_url":"/api/v1/executions/e-1"})");
  bool location = false, cost = false, replayed = false;
  for (const auto& [name, value] : a.headers) {
    if (name == "Location") location = value == "/api/v1/executions/e-1";
    if (name == "X-Toolgate-Cost") cost = true;
    if (name == "Idempotent-Replayed") replayed = true;
  }
  EXPECT_TRUE(location);
  EXPECT_FALSE(cost);  // nothing has run yet
  EXPECT_FALSE(replayed);
  reply.set_replayed(true);
  a = RenderInvokeReply(reply, "req", 0);
  replayed = false;
  for (const auto& [name, value] : a.headers)
    replayed |= name == "Idempotent-Replayed" && value == "true";
  EXPECT_TRUE(replayed);
}

}  // namespace
}  // namespace toolgate::edge
