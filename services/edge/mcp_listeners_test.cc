#include "mcp_listeners.h"

#include <gtest/gtest.h>

namespace toolgate::edge {
namespace {

struct Recorded {
  std::vector<std::string> events;
  int ended = 0;
};

WorkspaceListeners::Listener Of(const std::string& org, const std::string& id, Recorded* r,
                                std::unordered_set<std::string> functions = {}) {
  WorkspaceListeners::Listener l;
  l.org_id = org;
  l.subscription_id_json = id;
  l.tools = true;
  l.function_ids = std::move(functions);
  l.send = [r](std::string json) { r->events.push_back(std::move(json)); };
  l.end = [r] { ++r->ended; };
  return l;
}

TEST(WorkspaceListenersTest, AChangeReachesTheListenersItConcerns) {
  WorkspaceListeners listeners(4, 100);
  Recorded a, b;
  listeners.Add(Of("org-a", "1", &a, {"fn-1"}));
  WorkspaceListeners::Listener all = Of("org-b", R"("s")", &b);
  all.prompts = true;
  listeners.Add(std::move(all));

  listeners.FunctionChanged("fn-1");
  EXPECT_EQ(a.events, std::vector<std::string>{WorkspaceListeners::ListChanged("tools", "1")});
  EXPECT_TRUE(b.events.empty());  // another organization's function
  EXPECT_EQ(a.events[0], R"({"jsonrpc":"2.0","method":"notifications/tools/list_changed",)"
                         R"("params":{"_meta":{"io.modelcontextprotocol/subscriptionId":1}}})");

  listeners.WorkspaceChanged("org-b");
  EXPECT_EQ(b.events.size(), 2u);  // tools and prompts, as it asked
  EXPECT_EQ(a.events.size(), 1u);
}

TEST(WorkspaceListenersTest, BoundedPerOrganizationAndInAll) {
  WorkspaceListeners listeners(2, 3);
  Recorded r1, r2, r3, r4;
  listeners.Add(Of("org-a", "1", &r1));
  listeners.Add(Of("org-a", "2", &r2));
  listeners.Add(Of("org-a", "3", &r3));  // the organization's oldest makes room
  EXPECT_EQ(r1.ended, 1);
  EXPECT_EQ(listeners.size(), 2u);
  listeners.Add(Of("org-b", "4", &r4));
  Recorded r5;
  listeners.Add(Of("org-c", "5", &r5));  // past the total: the oldest of all
  EXPECT_EQ(r2.ended, 1);
  EXPECT_EQ(listeners.size(), 3u);
}

TEST(WorkspaceListenersTest, EndingIsGracefulAndOnce) {
  WorkspaceListeners listeners(4, 100);
  Recorded r;
  uint64_t id = listeners.Add(Of("org-a", "1", &r));
  listeners.End(id);
  listeners.End(id);
  EXPECT_EQ(r.ended, 1);
  listeners.WorkspaceChanged("org-a");
  EXPECT_TRUE(r.events.empty());
}

}  // namespace
}  // namespace toolgate::edge
