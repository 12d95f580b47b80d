#include "toolgate/billing/charge.h"

#include <gtest/gtest.h>

#include <tuple>

namespace toolgate::billing {
namespace {

const core::Rates kRates;  // the contract's defaults

v1::InvokeJob Job(const std::string& caller, const std::string& owner, int64_t price,
                  const std::string& compute_type = "CPU") {
  v1::InvokeJob job;
  job.set_execution_id("0b7e6a3c-2f1d-4c55-9a57-3c1f6b0d9e21");
  job.set_edge_reply("_INBOX.edge.1");
  job.set_traceparent("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01");
  job.mutable_principal()->set_org_id(caller);
  job.mutable_principal()->set_key_expires_at_ms(1'900'000'000'000);
  v1::FunctionVersion* f = job.mutable_function();
  f->set_function_id("7f8a9b0c-1d2e-4f30-8a4b-5c6d7e8f9a0b");
  f->set_version("1.2");
  f->set_owner_org_id(owner);
  f->set_runtime(compute_type == "GPU" ? v1::RUNTIME_PYTHON : v1::RUNTIME_LUA);
  f->set_compute_type(compute_type == "GPU" ? v1::COMPUTE_TYPE_GPU : v1::COMPUTE_TYPE_CPU);
  f->set_price_micro_usd(price);
  f->set_timeout_ms(30000);
  f->set_memory_mb(128);
  return job;
}

v1::ExecutionResult Ran(const v1::InvokeJob& job, int64_t runtime_ms) {
  v1::ExecutionResult r;
  *r.mutable_job() = job;
  r.set_handler_ran(true);
  r.set_status_code(500);
  r.set_body("{\"errorType\":\"ValueError\"}");
  r.set_runtime_ms(runtime_ms);
  r.set_memory_used_mb(21);
  r.set_logs("Traceback ...");
  return r;
}

TEST(ChargeTest, TheExecutionRecordKeepsTheChainsHopsInOrder) {
  v1::InvokeJob job = Job("org-a", "org-a", 0);
  for (auto [name, start, duration] :
       {std::tuple{"auth", 1000, 120}, {"registry", 1130, 80}, {"executor.lua", 1400, 5300}}) {
    v1::Hop* hop = job.add_hops();
    hop->set_name(name);
    hop->set_start_unix_us(start);
    hop->set_duration_us(duration);
  }
  Settlement s = SettlementFor(kRates, Ran(job, 5));
  EXPECT_EQ(s.execution.hops_json,
            R"([{"name":"auth","start_unix_us":1000,"duration_us":120},)"
            R"({"name":"registry","start_unix_us":1130,"duration_us":80},)"
            R"({"name":"executor.lua","start_unix_us":1400,"duration_us":5300}])");
  EXPECT_EQ(HopsJson(Job("org-a", "org-a", 0)), "[]");
}

TEST(ChargeTest, OwnFunctionCostsComputeOnly) {
  v1::InvokeJob job = Job("org-a", "org-a", 5000);
  EXPECT_TRUE(CallerOwnsFunction(job));
  EXPECT_EQ(FeeFor(job), 0);
  // 1000 ms × 128 MB / 1024 × 0.0166667 µUSD = 2.08 -> 3.
  Charge c = ChargeFor(kRates, job, 1000);
  EXPECT_EQ(c.compute_micro_usd, 3);
  EXPECT_EQ(c.function_micro_usd, 0);
  EXPECT_EQ(c.total_micro_usd, 3);
  EXPECT_EQ(c.owner_revenue_micro_usd, 0);
}

TEST(ChargeTest, OtherOrganizationsFunctionCostsComputePlusFee) {
  v1::InvokeJob job = Job("org-a", "org-b", 5000);
  EXPECT_FALSE(CallerOwnsFunction(job));
  Charge c = ChargeFor(kRates, job, 1000);
  EXPECT_EQ(c.compute_micro_usd, 3);
  EXPECT_EQ(c.function_micro_usd, 5000);
  EXPECT_EQ(c.total_micro_usd, 5003);
  EXPECT_EQ(c.owner_revenue_micro_usd, 4000);  // 20 % commission
}

TEST(ChargeTest, RevenueIsFlooredAndFollowsTheCommission) {
  v1::InvokeJob job = Job("org-a", "org-b", 3);
  EXPECT_EQ(ChargeFor(kRates, job, 1).owner_revenue_micro_usd, 2);  // 2.4 -> 2
  core::Rates no_commission = kRates;
  no_commission.commission_bp = 0;
  EXPECT_EQ(ChargeFor(no_commission, job, 1).owner_revenue_micro_usd, 3);
}

TEST(ChargeTest, GpuComputeIsPerMillisecond) {
  v1::InvokeJob job = Job("org-a", "org-a", 0, "GPU");
  EXPECT_TRUE(RunsOnGpu(job.function()));
  EXPECT_EQ(ChargeFor(kRates, job, 1000).compute_micro_usd, 1100);
  EXPECT_EQ(ChargeFor(kRates, job, 0).compute_micro_usd, 2);  // billed_ms = 1: 1.1 -> 2
}

TEST(ChargeTest, BillsTheSandboxCpuTimeWhenItExceedsTheWallTime) {
  v1::InvokeJob job = Job("org-a", "org-a", 0, "GPU");
  // Four threads for 250 ms of wall time: 1000 ms of CPU.
  EXPECT_EQ(ChargeFor(kRates, job, 250, 1000).compute_micro_usd, 1100);
  // CPU time below the wall time (a handler waiting) changes nothing.
  EXPECT_EQ(ChargeFor(kRates, job, 1000, 3).compute_micro_usd, 1100);
}

TEST(ChargeTest, HoldIsFeePlusComputeAtTheTimeout) {
  // 30000 ms × 128 MB / 1024 × 0.0166667 = 62.5 -> 63.
  EXPECT_EQ(HoldAmountFor(kRates, Job("org-a", "org-a", 5000)), 63);
  EXPECT_EQ(HoldAmountFor(kRates, Job("org-a", "org-b", 5000)), 5063);
  EXPECT_EQ(HoldAmountFor(kRates, Job("org-a", "org-b", 7, "GPU")), 33007);
}

TEST(ChargeTest, ChargeNeverExceedsTheHold) {
  v1::InvokeJob job = Job("org-a", "org-b", 5000);
  // A run reported a little past its deadline is billed at the timeout.
  EXPECT_EQ(ChargeFor(kRates, job, 30250).total_micro_usd, HoldAmountFor(kRates, job));
  // CPU time of parallel threads past the timeout is capped the same way.
  EXPECT_EQ(ChargeFor(kRates, job, 100, 90000).total_micro_usd, HoldAmountFor(kRates, job));
  EXPECT_LE(ChargeFor(kRates, job, 29999).total_micro_usd, HoldAmountFor(kRates, job));
}

TEST(ChargeTest, LedgerEntriesOfAnotherOrganizationsFunction) {
  v1::InvokeJob job = Job("org-a", "org-b", 5000);
  auto entries = LedgerEntriesFor(job, ChargeFor(kRates, job, 1000));
  ASSERT_EQ(entries.size(), 2u);
  const LedgerEntry& charge = entries[0];
  EXPECT_EQ(charge.type, EntryType::kCharge);
  EXPECT_EQ(charge.org_id, "org-a");
  EXPECT_EQ(charge.execution_id, job.execution_id());
  EXPECT_EQ(charge.function_id, job.function().function_id());
  EXPECT_EQ(charge.version, "1.2");
  EXPECT_EQ(charge.compute_micro_usd, 3);
  EXPECT_EQ(charge.function_micro_usd, 5000);
  EXPECT_EQ(charge.amount_micro_usd, -5003);
  const LedgerEntry& revenue = entries[1];
  EXPECT_EQ(revenue.type, EntryType::kRevenue);
  EXPECT_EQ(revenue.org_id, "org-b");
  EXPECT_EQ(revenue.execution_id, job.execution_id());
  EXPECT_EQ(revenue.compute_micro_usd, 0);
  EXPECT_EQ(revenue.function_micro_usd, 5000);
  EXPECT_EQ(revenue.amount_micro_usd, 4000);
}

TEST(ChargeTest, LedgerEntriesOfOwnFunctionHaveNoRevenue) {
  v1::InvokeJob job = Job("org-a", "org-a", 5000);
  auto entries = LedgerEntriesFor(job, ChargeFor(kRates, job, 1000));
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].type, EntryType::kCharge);
  EXPECT_EQ(entries[0].amount_micro_usd, -3);
}

TEST(ChargeTest, FreeFunctionOfAnotherOrganizationHasNoRevenue) {
  v1::InvokeJob job = Job("org-a", "org-b", 0);
  EXPECT_EQ(LedgerEntriesFor(job, ChargeFor(kRates, job, 1000)).size(), 1u);
}

TEST(ChargeTest, SettlementOfARunRecordsTheChargeAndTheExecution) {
  v1::InvokeJob job = Job("org-a", "org-b", 5000);
  Settlement s = SettlementFor(kRates, Ran(job, 1000));
  EXPECT_EQ(s.entries.size(), 2u);
  const ExecutionRecord& e = s.execution;
  EXPECT_EQ(e.execution_id, job.execution_id());
  EXPECT_EQ(e.org_id, "org-a");
  EXPECT_EQ(e.owner_org_id, "org-b");
  EXPECT_EQ(e.status_code, 500);  // a handler's 500 is charged
  EXPECT_EQ(e.runtime_ms, 1000);
  EXPECT_EQ(e.memory_used_mb, 21);
  EXPECT_EQ(e.compute_type, "CPU");
  EXPECT_EQ(e.charge.total_micro_usd, 5003);
  EXPECT_EQ(e.trace_id, "0af7651916cd43dd8448eb211c80319c");
  EXPECT_EQ(e.logs, "Traceback ...");
}

TEST(ChargeTest, SettlementRemembersTheGrantACallWasMadeWith) {
  v1::InvokeJob job = Job("org-a", "org-b", 5000);
  Settlement with_key = SettlementFor(kRates, Ran(job, 10));
  EXPECT_EQ(with_key.execution.grant_id, "");
  EXPECT_EQ(with_key.execution.client_name, "");

  job.mutable_principal()->set_grant_id("5F0C2B7E-9A41-4D3C-8E2B-1A0F4C3D2E1F");
  job.mutable_principal()->set_client_name("Claude\xff");
  Settlement with_grant = SettlementFor(kRates, Ran(job, 10));
  EXPECT_EQ(with_grant.execution.grant_id, "5f0c2b7e-9a41-4d3c-8e2b-1a0f4c3d2e1f");
  EXPECT_EQ(with_grant.execution.client_name, "Claude\xEF\xBF\xBD");  // as PostgreSQL takes text
  // The budget and the ledger key a grant alike; a call refused before running records it too.
  v1::ExecutionResult timed_out;
  *timed_out.mutable_job() = job;
  EXPECT_EQ(SettlementFor(kRates, timed_out).execution.grant_id, with_grant.execution.grant_id);

  // An id that is not a UUID is never written to the uuid column (the hold refuses such calls).
  job.mutable_principal()->set_grant_id("not-a-grant");
  Settlement malformed = SettlementFor(kRates, Ran(job, 10));
  EXPECT_EQ(malformed.execution.grant_id, "");
  EXPECT_EQ(malformed.execution.client_name, "");
}

TEST(ChargeTest, SettlementRecordsEgressRequestsWithoutPathsAndTheReplyTheirBytes) {
  v1::InvokeJob job = Job("org-a", "org-b", 5000);
  v1::ExecutionResult r = Ran(job, 1000);
  v1::EgressRequest* allowed = r.add_egress();
  allowed->set_method("GET");
  allowed->set_host("api.x.com");
  allowed->set_port(443);
  allowed->set_address("93.184.216.34");
  allowed->set_status(200);
  allowed->set_bytes_sent(100);
  allowed->set_bytes_received(900);
  allowed->set_ms(12);
  v1::EgressRequest* refused = r.add_egress();
  refused->set_method("CONNECT");
  refused->set_host("10.0.0.5");
  refused->set_port(443);
  refused->set_refused("private address");
  r.set_egress_bytes(1000);
  Settlement s = SettlementFor(kRates, r);
  EXPECT_EQ(s.execution.egress_json,
            R"([{"method":"GET","host":"api.x.com","port":443,"address":"93.184.216.34",)"
            R"("status":200,"bytes_sent":100,"bytes_received":900,"ms":12,"refused":null},)"
            R"({"method":"CONNECT","host":"10.0.0.5","port":443,"address":null,"status":0,)"
            R"("bytes_sent":0,"bytes_received":0,"ms":0,"refused":"private address"}])");
  EXPECT_EQ(s.execution.egress_bytes, 1000);
  EXPECT_EQ(ReplyFor(r, s.execution.charge).result().summary().egress_bytes(), 1000);
  EXPECT_EQ(SettlementFor(kRates, Ran(job, 1000)).execution.egress_json, "[]");
}

TEST(ChargeTest, SettlementOfATimeoutChargesNothing) {
  v1::ExecutionResult r;
  *r.mutable_job() = Job("org-a", "org-b", 5000);
  r.set_handler_ran(false);
  r.mutable_problem()->set_status(408);
  r.mutable_problem()->set_code("timeout");
  r.set_runtime_ms(30000);
  Settlement s = SettlementFor(kRates, r);
  EXPECT_TRUE(s.entries.empty());
  EXPECT_EQ(s.execution.status_code, 408);
  EXPECT_EQ(s.execution.charge.total_micro_usd, 0);
  EXPECT_EQ(s.execution.charge.compute_micro_usd, 0);
  EXPECT_EQ(s.execution.charge.function_micro_usd, 0);

  v1::InvokeReply reply = ReplyFor(r, s.execution.charge);
  ASSERT_TRUE(reply.has_problem());
  EXPECT_EQ(reply.problem().status(), 408);
  EXPECT_EQ(reply.problem().code(), "timeout");
}

// What a timeout spends of its organization's allowance is what a charge would have billed;
// nothing else spends any.
TEST(ChargeTest, OnlyATimeoutSpendsSandboxTimeUncharged) {
  v1::ExecutionResult timeout;
  *timeout.mutable_job() = Job("org-a", "org-a", 0);  // timeout_ms 30000
  timeout.set_handler_ran(false);
  timeout.mutable_problem()->set_status(408);
  timeout.mutable_problem()->set_code("timeout");
  timeout.set_runtime_ms(30004);
  EXPECT_EQ(UnchargedTimeoutMs(timeout), 30000);  // capped at the timeout, as a charge is
  timeout.set_runtime_ms(29000);
  timeout.set_cpu_ms(29500);  // threads in parallel: the CPU time counts
  EXPECT_EQ(UnchargedTimeoutMs(timeout), 29500);
  timeout.set_runtime_ms(0);
  timeout.set_cpu_ms(0);
  EXPECT_EQ(UnchargedTimeoutMs(timeout), 1);

  v1::ExecutionResult failed = timeout;
  failed.mutable_problem()->set_status(502);
  failed.mutable_problem()->set_code("executor_failure");
  failed.set_runtime_ms(20000);
  EXPECT_EQ(UnchargedTimeoutMs(failed), 0);
  EXPECT_EQ(UnchargedTimeoutMs(Ran(Job("org-a", "org-a", 0), 30000)), 0);  // charged
}

TEST(ChargeTest, ReplyCarriesResultSummaryAndCost) {
  v1::InvokeJob job = Job("org-a", "org-b", 5000);
  v1::ExecutionResult r = Ran(job, 1000);
  v1::InvokeReply reply = ReplyFor(r, ChargeFor(kRates, job, 1000));
  ASSERT_TRUE(reply.has_result());
  EXPECT_EQ(reply.key_expires_at_ms(), 1'900'000'000'000);
  EXPECT_EQ(reply.result().status_code(), 500);
  EXPECT_EQ(reply.result().body(), r.body());
  const v1::Summary& s = reply.result().summary();
  EXPECT_EQ(s.runtime_ms(), 1000);
  EXPECT_EQ(s.memory_used_mb(), 21);
  EXPECT_EQ(s.compute_type(), v1::COMPUTE_TYPE_CPU);
  EXPECT_EQ(s.execution_id(), job.execution_id());
  EXPECT_EQ(s.cost().compute_micro_usd(), 3);
  EXPECT_EQ(s.cost().function_micro_usd(), 5000);
  EXPECT_EQ(s.cost().total_micro_usd(), 5003);
}

TEST(ChargeTest, SanitizeTextKeepsValidUtf8AndRepairsTheRest) {
  EXPECT_EQ(SanitizeText("plain\ntext"), "plain\ntext");
  EXPECT_EQ(SanitizeText("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80"),
            "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80");
  EXPECT_EQ(SanitizeText(std::string("a\0b", 3)), "ab");
  EXPECT_EQ(SanitizeText("a\xFF"
                         "b"),
            "a\xEF\xBF\xBD"
            "b");
  EXPECT_EQ(SanitizeText("\xC0\xAF"), "\xEF\xBF\xBD\xEF\xBF\xBD");  // overlong '/'
  EXPECT_EQ(SanitizeText("\xED\xA0\x80"),                           // a surrogate
            "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(SanitizeText("\xE2\x82"), "\xEF\xBF\xBD\xEF\xBF\xBD");  // truncated
}

}  // namespace
}  // namespace toolgate::billing
