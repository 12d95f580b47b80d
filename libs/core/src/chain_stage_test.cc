#include "toolgate/core/chain_stage.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "toolgate/core/problem.h"

namespace toolgate::core {
namespace {

// The bus as the stage sees it: every PublishBatch call, recorded; failing for chosen
// destinations.
struct FakeBus {
  struct Call {
    std::string destination;
    std::vector<bus::Outgoing> messages;
  };
  std::vector<Call> calls;
  std::set<std::string> failing;
  ChainStage::Publish publish() {
    return [this](std::string_view destination, std::vector<bus::Outgoing> messages) {
      calls.push_back({std::string(destination), std::move(messages)});
      if (failing.count(std::string(destination))) return Status::Unavailable("bus down");
      return Status::Ok();
    };
  }
};

bus::Message JobMessage(const std::string& execution_id, const std::string& edge_reply,
                        int64_t key_expires_at_ms = 0) {
  v1::InvokeJob job;
  job.set_execution_id(execution_id);
  job.set_edge_reply(edge_reply);
  job.mutable_principal()->set_key_expires_at_ms(key_expires_at_ms);
  bus::Message m;
  m.subject = "tg.invoke.test";
  m.data = job.SerializeAsString();
  m.traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
  return m;
}

v1::InvokeJob JobOf(const bus::Outgoing& m) {
  v1::InvokeJob job;
  EXPECT_TRUE(job.ParseFromString(m.data));
  return job;
}

v1::InvokeReply AnswerOf(const bus::Outgoing& m) {
  v1::InvokeReply reply;
  EXPECT_TRUE(reply.ParseFromString(m.data));
  return reply;
}

TEST(ChainStageTest, AForwardedJobCarriesItsHopAndTheStagesTrace) {
  FakeBus fake;
  ChainStage stage("secrets", fake.publish());
  stage.Handle(JobMessage("e1", "_INBOX.edge.a.1"), [](v1::InvokeJob& job) {
    job.set_sealed_env("sealed");
    return StageVerdict::Forward("tg.invoke.billing");
  });
  ASSERT_EQ(fake.calls.size(), 1u);
  EXPECT_EQ(fake.calls[0].destination, "tg.invoke.billing");
  ASSERT_EQ(fake.calls[0].messages.size(), 1u);
  const bus::Outgoing& m = fake.calls[0].messages[0];
  EXPECT_EQ(m.subject, "tg.invoke.billing");
  EXPECT_EQ(m.reply, "_INBOX.edge.a.1");  // no responders: the edge learns of it
  v1::InvokeJob job = JobOf(m);
  EXPECT_EQ(job.sealed_env(), "sealed");
  ASSERT_EQ(job.hops_size(), 1);
  EXPECT_EQ(job.hops(0).name(), "secrets");
  EXPECT_EQ(job.traceparent(), m.traceparent);
  // A child of the incoming trace.
  EXPECT_NE(m.traceparent.find("0af7651916cd43dd8448eb211c80319c"), std::string::npos);
}

TEST(ChainStageTest, ARejectedJobIsAnsweredWithTheKeysExpiry) {
  FakeBus fake;
  ChainStage stage("secrets", fake.publish());
  stage.Handle(JobMessage("e1", "_INBOX.edge.a.7", 1893456000000), [](v1::InvokeJob&) {
    return StageVerdict::Reject(MakeProblem("missing_env_key", "API_TOKEN is not mapped."));
  });
  ASSERT_EQ(fake.calls.size(), 1u);
  EXPECT_EQ(fake.calls[0].destination, bus::SiblingDestination("_INBOX.edge.a.7"));
  v1::InvokeReply answer = AnswerOf(fake.calls[0].messages[0]);
  EXPECT_EQ(fake.calls[0].messages[0].subject, "_INBOX.edge.a.7");
  EXPECT_EQ(answer.problem().code(), "missing_env_key");
  EXPECT_EQ(answer.key_expires_at_ms(), 1893456000000);
}

TEST(ChainStageTest, AJobThatCannotBeAnsweredIsDropped) {
  FakeBus fake;
  ChainStage stage("secrets", fake.publish());
  bool decided = false;
  auto decide = [&](v1::InvokeJob&) {
    decided = true;
    return StageVerdict::Forward("x");
  };
  bus::Message garbage;
  garbage.data = "\xff\xff not a job";
  stage.Handle(garbage, decide);
  stage.Handle(JobMessage("e1", ""), decide);  // no reply subject anywhere
  EXPECT_FALSE(decided);
  EXPECT_TRUE(fake.calls.empty());
}

TEST(ChainStageTest, ABatchLeavesAsOneMessagePerDestinationEachJobAnsweredAlone) {
  FakeBus fake;
  ChainStage stage("billing.hold", fake.publish());
  std::vector<StageJob> jobs;
  for (int i = 0; i < 5; ++i) {
    auto job =
        stage.Open(JobMessage("e" + std::to_string(i), "_INBOX.edge.a." + std::to_string(i)));
    ASSERT_TRUE(job);
    jobs.push_back(std::move(*job));
  }
  ChainStage::Outbox out = stage.NewOutbox();
  out.Forward(jobs[0], "tg.exec.cpu.lua", "tg.billing.unserved.e0");
  out.Reject(jobs[1], MakeProblem("insufficient_balance", "Top up."));
  out.Forward(jobs[2], "tg.exec.cpu.lua", "tg.billing.unserved.e2");
  out.Forward(jobs[3], "tg.exec.cpu.python", "tg.billing.unserved.e3");
  out.Reject(jobs[4], MakeProblem("rate_limited", "Slow down."));
  EXPECT_EQ(out.size(), 5u);
  out.Send();
  EXPECT_EQ(out.size(), 0u);
  ASSERT_EQ(fake.calls.size(), 3u);  // two pools, one edge
  EXPECT_EQ(fake.calls[0].destination, "tg.exec.cpu.lua");
  ASSERT_EQ(fake.calls[0].messages.size(), 2u);
  EXPECT_EQ(JobOf(fake.calls[0].messages[0]).execution_id(), "e0");
  EXPECT_EQ(JobOf(fake.calls[0].messages[1]).execution_id(), "e2");
  EXPECT_EQ(fake.calls[0].messages[1].reply, "tg.billing.unserved.e2");
  EXPECT_EQ(fake.calls[1].destination, "tg.exec.cpu.python");
  EXPECT_EQ(fake.calls[2].destination, "_INBOX.edge.a._b");
  ASSERT_EQ(fake.calls[2].messages.size(), 2u);
  EXPECT_EQ(fake.calls[2].messages[0].subject, "_INBOX.edge.a.1");
  EXPECT_EQ(AnswerOf(fake.calls[2].messages[0]).problem().code(), "insufficient_balance");
  EXPECT_EQ(fake.calls[2].messages[1].subject, "_INBOX.edge.a.4");
  EXPECT_EQ(AnswerOf(fake.calls[2].messages[1]).problem().code(), "rate_limited");
}

TEST(ChainStageTest, AForwardThatCannotBeSentUndoesItsWorkAndAnswers503) {
  FakeBus fake;
  fake.failing.insert("tg.exec.cpu.lua");
  ChainStage stage("billing.hold", fake.publish());
  auto a = stage.Open(JobMessage("e1", "_INBOX.edge.a.1", 42));
  auto b = stage.Open(JobMessage("e2", "_INBOX.edge.b.1"));
  auto c = stage.Open(JobMessage("e3", "_INBOX.edge.b.2"));
  ASSERT_TRUE(a && b && c);
  std::vector<std::string> released;
  ChainStage::Outbox out = stage.NewOutbox();
  out.Forward(*a, "tg.exec.cpu.lua", "tg.billing.unserved.e1", [&] { released.push_back("e1"); });
  out.Forward(*b, "tg.exec.cpu.lua", "tg.billing.unserved.e2", [&] { released.push_back("e2"); });
  out.Forward(*c, "tg.exec.cpu.python", "tg.billing.unserved.e3",
              [&] { released.push_back("e3"); });
  out.Send();
  EXPECT_EQ(released, (std::vector<std::string>{"e1", "e2"}));  // e3 left for its executors
  // The lua group failed: each of its callers is answered 503, on its own edge.
  std::map<std::string, v1::InvokeReply> answers;
  for (const auto& call : fake.calls) {
    if (call.destination.rfind("_INBOX.", 0) != 0) continue;
    for (const auto& m : call.messages) answers[m.subject] = AnswerOf(m);
  }
  ASSERT_EQ(answers.size(), 2u);
  EXPECT_EQ(answers["_INBOX.edge.a.1"].problem().code(), "service_unavailable");
  EXPECT_EQ(answers["_INBOX.edge.a.1"].key_expires_at_ms(), 42);
  EXPECT_EQ(answers["_INBOX.edge.b.1"].problem().code(), "service_unavailable");
}

}  // namespace
}  // namespace toolgate::core
