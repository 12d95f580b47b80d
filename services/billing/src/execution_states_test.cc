#include "toolgate/billing/execution_states.h"

#include <gtest/gtest.h>

#include "toolgate/base/json.h"
#include "toolgate/billing/charge.h"
#include "toolgate/billing/execution_api.h"
#include "toolgate/billing/invoke_stage.h"
#include "toolgate/core/problem.h"

namespace toolgate::billing {
namespace {

TEST(ExecutionStatusTest, NamesRoundTrip) {
  for (ExecutionStatus s :
       {ExecutionStatus::kQueued, ExecutionStatus::kRunning, ExecutionStatus::kSucceeded,
        ExecutionStatus::kFailed, ExecutionStatus::kTimedOut, ExecutionStatus::kCancelled}) {
    EXPECT_EQ(ExecutionStatusOfName(ExecutionStatusName(s)), s);
  }
  EXPECT_EQ(ExecutionStatusName(ExecutionStatus::kTimedOut), "timed_out");
  EXPECT_FALSE(ExecutionStatusOfName("done").has_value());
  EXPECT_FALSE(IsFinal(ExecutionStatus::kQueued));
  EXPECT_FALSE(IsFinal(ExecutionStatus::kRunning));
  EXPECT_TRUE(IsFinal(ExecutionStatus::kCancelled));
}

TEST(ExecutionStatusTest, FinalStatusOfAResult) {
  v1::ExecutionResult r;
  r.set_handler_ran(true);
  r.set_status_code(404);
  EXPECT_EQ(FinalStatusOf(r), ExecutionStatus::kSucceeded);  // the handler's own answer
  r.set_status_code(500);
  EXPECT_EQ(FinalStatusOf(r), ExecutionStatus::kFailed);
  r.set_cancelled(true);
  EXPECT_EQ(FinalStatusOf(r), ExecutionStatus::kCancelled);
  v1::ExecutionResult unrun;
  *unrun.mutable_problem() = core::MakeProblem("timeout", "ran past");
  EXPECT_EQ(FinalStatusOf(unrun), ExecutionStatus::kTimedOut);
  *unrun.mutable_problem() = core::MakeProblem("executor_failure", "lost");
  EXPECT_EQ(FinalStatusOf(unrun), ExecutionStatus::kFailed);
}

v1::ExecutionResult RanResult(bool async, const std::string& key) {
  v1::ExecutionResult r;
  v1::InvokeJob* job = r.mutable_job();
  job->set_execution_id("e1");
  job->mutable_principal()->set_org_id("org");
  job->mutable_function()->set_function_id("f");
  job->mutable_function()->set_version("1.0");
  job->mutable_function()->set_compute_type(v1::COMPUTE_TYPE_CPU);
  job->mutable_function()->set_memory_mb(128);
  job->mutable_hold()->set_amount_micro_usd(900);
  job->mutable_hold()->set_function_micro_usd(100);
  job->set_respond_async(async);
  job->set_idempotency_key(key);
  r.set_handler_ran(true);
  r.set_status_code(200);
  r.set_body("{\"ok\":true}");
  r.set_runtime_ms(5);
  return r;
}

TEST(ExecutionStatusTest, SettlementKeepsTheOutcomeOfAsynchronousAndKeyedCallsOnly) {
  core::Rates rates;
  Settlement plain = SettlementFor(rates, RanResult(false, ""));
  EXPECT_FALSE(plain.state.has_value());
  for (const auto& [async, key] : {std::pair{true, std::string()}, {false, std::string("k")}}) {
    Settlement s = SettlementFor(rates, RanResult(async, key));
    ASSERT_TRUE(s.state.has_value());
    EXPECT_EQ(s.state->execution_id, "e1");
    EXPECT_EQ(s.state->status, ExecutionStatus::kSucceeded);
    v1::InvokeReply reply;
    ASSERT_TRUE(reply.ParseFromString(s.state->reply));
    ASSERT_TRUE(reply.has_result());
    EXPECT_EQ(reply.result().body(), "{\"ok\":true}");
    // The most compute a call of the version may cost: its hold less the fee.
    EXPECT_EQ(reply.result().summary().max_compute_micro_usd(), 800);
  }
}

TEST(ExecutionStatusTest, RepeatAnswersTheFirstOutcomeOrItsStatus) {
  ExecutionState running;
  running.execution_id = "e1";
  running.status = ExecutionStatus::kRunning;
  v1::InvokeReply r = RepeatReply(running);
  EXPECT_TRUE(r.replayed());
  ASSERT_TRUE(r.has_accepted());
  EXPECT_EQ(r.accepted().execution_id(), "e1");
  EXPECT_EQ(r.accepted().status(), "running");

  ExecutionState done = running;
  done.status = ExecutionStatus::kSucceeded;
  done.reply.emplace();
  done.reply->mutable_result()->set_status_code(201);
  r = RepeatReply(done);
  EXPECT_TRUE(r.replayed());
  ASSERT_TRUE(r.has_result());
  EXPECT_EQ(r.result().status_code(), 201);
}

TEST(ExecutionStatusTest, StatusJsonShowsTheStateAndItsResult) {
  ExecutionState queued;
  queued.execution_id = "e1";
  queued.function_id = "f";
  queued.version = "1.0";
  queued.async = true;
  queued.created_ms = 1'801'353'600'000;
  auto doc = ParseJson(ExecutionStatusJson(queued, std::nullopt, false));
  ASSERT_TRUE(doc.ok());
  EXPECT_EQ(std::string_view(doc->root["status"]), "queued");
  EXPECT_TRUE(doc->root["result"].is_null());
  EXPECT_TRUE(doc->root["started_at"].is_null());
  EXPECT_EQ(std::string_view(doc->root["created_at"]), "2027-01-31T00:00:00Z");

  ExecutionState failed = queued;
  failed.status = ExecutionStatus::kFailed;
  failed.finished_ms = queued.created_ms + 1000;
  failed.reply.emplace();
  *failed.reply->mutable_problem() = core::MakeProblem("execution_lost", "lost");
  doc = ParseJson(ExecutionStatusJson(failed, std::nullopt, false));
  ASSERT_TRUE(doc.ok());
  EXPECT_EQ(std::string_view(doc->root["status"]), "failed");
  EXPECT_EQ(std::string_view(doc->root["error"]["code"]), "execution_lost");
  EXPECT_TRUE(doc->root["result"].is_null());

  ExecutionState ok = failed;
  ok.status = ExecutionStatus::kSucceeded;
  ok.reply.emplace();
  ok.reply->mutable_result()->set_status_code(200);
  ok.reply->mutable_result()->set_body("hi");
  doc = ParseJson(ExecutionStatusJson(ok, std::nullopt, false));
  ASSERT_TRUE(doc.ok());
  EXPECT_EQ(int64_t(doc->root["result"]["statusCode"]), 200);
  EXPECT_EQ(std::string_view(doc->root["result"]["body"]), "hi");

  // A synchronous call known only from its record: finished, from its status code.
  ExecutionItem item;
  item.record.execution_id = "e2";
  item.record.status_code = 408;
  item.created_ms = queued.created_ms;
  doc = ParseJson(ExecutionStatusJson(std::nullopt, item, false));
  ASSERT_TRUE(doc.ok());
  EXPECT_EQ(std::string_view(doc->root["status"]), "timed_out");
  EXPECT_FALSE(bool(doc->root["async"]));
}

}  // namespace
}  // namespace toolgate::billing
