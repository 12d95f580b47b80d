#include "toolgate/core/bus_permissions.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace toolgate::core {
namespace {

const BusUser& User(std::string_view name) {
  const BusUser* u = FindBusUser(name);
  EXPECT_NE(u, nullptr) << name;
  static const BusUser kNone;
  return u ? *u : kNone;
}

// Each hop of the invoke chain and of settlement: the sender may publish, the receiver may
// subscribe.
TEST(BusPermissions, EveryHopIsAllowed) {
  struct Hop {
    const char* from;
    const char* to;
    const char* subject;
  };
  for (const Hop& hop : std::vector<Hop>{
           {"edge", "secrets", "tg.invoke.secrets"},
           {"edge", "billing", "tg.invoke.billing"},
           {"edge", "auth", "tg.auth.key_lookup"},
           {"edge", "auth", "tg.auth.keys_used"},
           {"edge", "registry", "tg.registry.function_view"},
           {"auth", "edge", "tg.events.key_revoked"},
           {"registry", "edge", "tg.events.function_changed"},
           {"registry", "edge", "tg.events.workspace_changed"},
           {"secrets", "billing", "tg.invoke.billing"},
           {"billing", "executor", "tg.exec.cpu.lua"},
           {"billing", "executor", "tg.exec.gpu.python"},
           {"executor", "billing", "tg.billing.settle.0b6c"},
           {"executor", "registry", "tg.registry.code"},
           {"billing", "executor", "_INBOX.executor.settle.nuid1.acks"},
           {"billing", "executor", "_INBOX.executor.settle.nuid1.3"},
           {"registry", "executor", "_INBOX.executor.nuid1.4"},
           {"auth", "launcher", "_INBOX.launcher.nuid3.1"},
           {"executor", "launcher", "_INBOX.launcher.nuid3.1"},
           {"billing", "registry", "tg.events.execution"},
           {"executor", "edge", "_INBOX.edge.nuid2.5"},
           {"billing", "edge", "_INBOX.edge.nuid2.5"},
           {"auth", "edge", "_INBOX.edge.nuid2.5"},
           {"registry", "edge", "_INBOX.edge.nuid2.5"},
           {"secrets", "edge", "_INBOX.edge.nuid2.5"},
           {"edge", "auth", "tg.auth.authenticate"},
           {"edge", "billing", "tg.billing.http"},
           {"edge", "registry", "tg.registry.workspace_tools"},
           {"edge", "registry", "tg.registry.mcp_listing"},
           {"edge", "edge", "tg.events.mcp_session_ended"},
           {"edge", "edge", "tg.edge.mcp_sessions_ended"},
           {"auth", "auth", "tg.events.key_revoked"},
           {"registry", "registry", "tg.events.function_changed"},
           {"secrets", "secrets", "tg.events.secret_changed"},
           {"launcher", "billing", "tg.health.billing"},
           {"billing", "auth", "tg.auth.organization_lookup"},
           {"auth", "billing", "_INBOX.billing.nuid4.1"},
           {"edge", "billing", "tg.billing.compute_medians"},
           {"billing", "registry", "tg.registry.function_view"},
           {"registry", "billing", "_INBOX.billing.nuid4.2"},
       }) {
    EXPECT_TRUE(MayPublish(User(hop.from), hop.subject)) << hop.from << " -> " << hop.subject;
    EXPECT_TRUE(MaySubscribe(User(hop.to), hop.subject)) << hop.to << " <- " << hop.subject;
  }
}

TEST(BusPermissions, OnlyTheEdgeReadsTheEdgesInbox) {
  for (const auto& u : BusUsers()) {
    EXPECT_EQ(MaySubscribe(u, "_INBOX.edge.nuid.1"), u.name == "edge") << u.name;
    EXPECT_EQ(MaySubscribe(u, "_INBOX.>"), false) << u.name;
  }
}

TEST(BusPermissions, OnlyBillingAcksSettlements) {
  for (const auto& u : BusUsers()) {
    EXPECT_EQ(MayPublish(u, "_INBOX.executor.settle.nuid.acks"), u.name == "billing") << u.name;
    EXPECT_EQ(MayPublish(u, "_INBOX.executor.settle.nuid.7"), u.name == "billing") << u.name;
  }
  // The registry answers the executor's code requests, and nothing of the settler's.
  EXPECT_TRUE(MayPublish(User("registry"), "_INBOX.executor.nuid.7"));
  EXPECT_FALSE(MaySubscribe(User("executor"), "tg.billing.settle.e1"));
}

// Billing's JetStream queue (bus/jet_stream.h): the API, acks and the queue's subjects are
// billing's alone; replies and fetched messages come to its inbox.
TEST(BusPermissions, OnlyBillingUsesJetStream) {
  for (const auto& u : BusUsers()) {
    for (const char* subject :
         {"$JS.API.STREAM.CREATE.TG_ASYNC", "$JS.API.CONSUMER.MSG.NEXT.TG_ASYNC.dispatch",
          "$JS.ACK.TG_ASYNC.dispatch.1.2.2.1700000000000000000.0", "tg.async.queue.e1"}) {
      EXPECT_EQ(MayPublish(u, subject), u.name == "billing") << u.name << " -> " << subject;
    }
  }
  EXPECT_TRUE(MaySubscribe(User("billing"), "_INBOX.billing.nuid5"));
  EXPECT_TRUE(MaySubscribe(User("billing"), "_INBOX.billing.nuid5.*"));
  EXPECT_FALSE(MayPublish(User("billing"), "$JS.EVENT.ADVISORY.API"));
}

TEST(BusPermissions, AStageCannotTakeAnotherStagesQueue) {
  const char* queues[][2] = {
      {"auth", "tg.auth.key_lookup"},          {"registry", "tg.registry.function_view"},
      {"registry", "tg.registry.mcp_listing"}, {"secrets", "tg.invoke.secrets"},
      {"billing", "tg.invoke.billing"},        {"executor", "tg.exec.cpu.python"},
      {"billing", "tg.billing.settle.x"}};
  for (const auto& u : BusUsers()) {
    for (const auto& [owner, subject] : queues) {
      EXPECT_EQ(MaySubscribe(u, subject), u.name == owner) << u.name << " on " << subject;
    }
  }
}

TEST(BusPermissions, InboxPrefixIsPerUser) {
  EXPECT_EQ(InboxPrefix("edge"), "_INBOX.edge");
  for (const auto& u : BusUsers()) {
    EXPECT_TRUE(MaySubscribe(u, InboxPrefix(u.name) + ".nuid.1")) << u.name;
    // Nobody forges replies to itself (the executor its settlement acks, say).
    EXPECT_FALSE(MayPublish(u, InboxPrefix(u.name) + ".nuid.1")) << u.name;
  }
}

TEST(BusPermissions, RenderingNamesEveryUserWithItsPassword) {
  std::string conf = NatsAuthorization([](const std::string& u) { return "\"pw-" + u + "\""; });
  for (const auto& u : BusUsers()) {
    EXPECT_NE(conf.find("{user: \"" + u.name + "\", password: \"pw-" + u.name + "\""),
              std::string::npos)
        << u.name;
  }
  EXPECT_NE(conf.find("subscribe: {allow: [\"tg.exec.*.*\", \"tg.exec.cancel\", "
                      "\"tg.health.executor\", \"_INBOX.executor.>\"]}"),
            std::string::npos);
  // Only the edge answers requests it did not list: one allow_responses in the table.
  size_t first = conf.find("allow_responses: true");
  EXPECT_NE(first, std::string::npos);
  EXPECT_EQ(conf.find("allow_responses: true", first + 1), std::string::npos);
}

// deploy/nats.conf carries the same table, with passwords from the server's environment.
TEST(BusPermissions, DeployConfigIsTheRendering) {
  std::ifstream in(std::string(TOOLGATE_SOURCE_DIR) + "/deploy/nats.conf");
  std::stringstream ss;
  ss << in.rdbuf();
  std::string expected = NatsAuthorization([](const std::string& u) {
    std::string var;
    for (char c : u) var += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return "$NATS_PASSWORD_" + var;
  });
  EXPECT_NE(ss.str().find(expected), std::string::npos) << "deploy/nats.conf must contain:\n"
                                                        << expected;
  EXPECT_NE(ss.str().find("\nmax_payload: " + std::to_string(kNatsMaxPayloadBytes) + "\n"),
            std::string::npos)
      << "deploy/nats.conf must allow the launcher's max_payload";
  // Billing's queue (bus/jet_stream.h) needs JetStream, as in the launcher's configuration.
  EXPECT_NE(ss.str().find("\njetstream {\n  store_dir: "), std::string::npos)
      << "deploy/nats.conf must enable JetStream";
}

}  // namespace
}  // namespace toolgate::core
