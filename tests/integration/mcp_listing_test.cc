// The registry's MCP listings through a real system: the edge stores a version's listing on
// tg.registry.mcp_listing once, tg.registry.workspace_tools hands it back with the latest
// version, and every refusal (a second listing, a function that is not MCP, an unknown version
// or function, an array over its bounds) changes nothing. Asked over NATS as the edge asks, with
// the edge's own user, so the bus permissions are part of what is tested.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>

#include "system.h"
#include "toolgate/base/crypto.h"
#include "toolgate/bus/bus.h"
#include "toolgate/core/bus_permissions.h"
#include "toolgate/core/subjects.h"
#include "toolgate/v1/toolgate.pb.h"

namespace toolgate::testing {
namespace {

const auto* const kEnv = ::testing::AddGlobalTestEnvironment(new SharedSystem());

constexpr const char* kHandler = "function service_handler(event) return event end";

class McpListings : public ::testing::Test {
 protected:
  void SetUp() override {
    bus::BusOptions options;
    options.url = g_system->State("nats_url");
    options.user = "edge";
    options.password = g_system->Secret("nats-edge.password");
    options.inbox_prefix = core::InboxPrefix("edge");
    auto connected = bus::Bus::Connect(options);
    ASSERT_TRUE(connected.ok()) << connected.status().ToString();
    edge_ = std::move(*connected);
    account_ = std::make_unique<Account>(*g_system, "Lister");
  }

  // A function (MCP or not) with version 1.0 published; its id.
  std::string Published(bool mcp) {
    std::string fn = account_->CreateFunction(mcp ? "mcp tool" : "plain tool",
                                              mcp ? R"("mcp":true)" : R"("mcp":false)");
    http::HttpResponse r = account_->PublishLua(fn, "1.0", kHandler);
    EXPECT_EQ(r.status, 201) << r.body;
    // The publish answer tells the edge whether to fetch a listing.
    auto doc = Json(r.body);
    bool flag = !mcp;
    EXPECT_EQ(doc.root["mcp"].get_bool().get(flag), simdjson::SUCCESS) << r.body;
    EXPECT_EQ(flag, mcp) << r.body;
    return fn;
  }

  // The problem code of the registry's answer ("" when stored).
  std::string Set(const std::string& fn, const std::string& version, const v1::McpListing& l) {
    v1::McpListingSet set;
    set.set_function_id(fn);
    set.set_version(version);
    *set.mutable_listing() = l;
    auto answer = edge_->Request(core::kMcpListingSubject, set.SerializeAsString(), 10'000);
    if (!answer.ok()) return answer.status().ToString();
    v1::McpListingSetReply reply;
    if (!reply.ParseFromString(answer->data)) return "unparsable reply";
    last_problem_ = reply.problem();
    return reply.has_problem() ? reply.problem().code() : "";
  }

  // The workspace tool fn as the registry lists it to the edge.
  v1::WorkspaceTool Tool(const std::string& fn) {
    v1::WorkspaceToolsRequest request;
    request.set_org_id(account_->org_id());
    auto answer = edge_->Request(core::kWorkspaceToolsSubject, request.SerializeAsString(), 10'000);
    v1::WorkspaceToolsReply reply;
    if (!answer.ok() || !reply.ParseFromString(answer->data) || reply.has_problem()) {
      ADD_FAILURE() << "workspace tools: "
                    << (answer.ok() ? reply.problem().detail() : answer.status().ToString());
      return {};
    }
    for (const v1::WorkspaceTool& t : reply.tools()) {
      if (t.function_id() == fn) return t;
    }
    ADD_FAILURE() << fn << " is not listed";
    return {};
  }

  // What the function_changed subscription reads: set before it subscribes, and declared before
  // edge_ so that they outlive the connection that delivers to it.
  std::string watched_;
  std::atomic<bool> changed_{false};
  std::unique_ptr<Account> account_;
  v1::Problem last_problem_;
  std::unique_ptr<bus::Bus> edge_;
};

v1::McpListing Listing(const std::string& tool_name) {
  v1::McpListing l;
  l.set_tools_json(R"([{"name":")" + tool_name + R"(","inputSchema":{"type":"object"}}])");
  l.set_resources_json(R"([{"uri":"mem://notes","name":"notes"}])");
  l.set_resource_templates_json("[]");
  l.set_prompts_json("");  // none
  return l;
}

// The string at pointer in a listing array's JSON ("" when absent).
std::string At(const std::string& json, const char* pointer) {
  auto doc = Json(json);
  std::string_view out;
  if (doc.root.at_pointer(pointer).get_string().get(out) != simdjson::SUCCESS) return "";
  return std::string(out);
}

size_t Entries(const std::string& json) {
  auto doc = Json(json);
  simdjson::dom::array array;
  if (doc.root.get_array().get(array) != simdjson::SUCCESS) return 999;
  return array.size();
}

TEST_F(McpListings, StoredOnceAndListedWithTheLatestVersion) {
  std::string fn = Published(true);
  EXPECT_FALSE(Tool(fn).has_listing());

  watched_ = fn;
  ASSERT_TRUE(edge_
                  ->Subscribe(core::kFunctionChangedSubject, "",
                              [this](bus::Message&& m) {
                                v1::FunctionChanged event;
                                if (event.ParseFromString(m.data) &&
                                    event.function_id() == watched_) {
                                  changed_ = true;
                                }
                              })
                  .ok());
  // The subscription is the server's before the listing is set, so the event cannot pass it.
  ASSERT_TRUE(edge_->Flush(10'000).ok());
  ASSERT_EQ(Set(fn, "1.0", Listing("echo")), "") << last_problem_.detail();
  // Every edge drops its cached view, as after the publish itself.
  EXPECT_TRUE(WaitUntil([&] { return changed_.load(); }, 10'000, "function_changed for " + fn));

  v1::WorkspaceTool tool = Tool(fn);
  ASSERT_TRUE(tool.has_listing());
  EXPECT_EQ(tool.version(), "1.0");
  EXPECT_EQ(At(tool.listing().tools_json(), "/0/name"), "echo");
  EXPECT_EQ(At(tool.listing().resources_json(), "/0/uri"), "mem://notes");
  EXPECT_EQ(Entries(tool.listing().resource_templates_json()), 0u);
  EXPECT_EQ(Entries(tool.listing().prompts_json()), 0u);  // "" was stored as []

  // A second listing is refused and the first stays.
  EXPECT_EQ(Set(fn, "1.0", Listing("other")), "conflict");
  EXPECT_EQ(At(Tool(fn).listing().tools_json(), "/0/name"), "echo");

  // The workspace lists the latest version, which has no listing of its own yet.
  ASSERT_EQ(account_->PublishLua(fn, "1.1", kHandler).status, 201);
  tool = Tool(fn);
  EXPECT_EQ(tool.version(), "1.1");
  EXPECT_FALSE(tool.has_listing());
  ASSERT_EQ(Set(fn, "1.1", Listing("echo2")), "") << last_problem_.detail();
  EXPECT_EQ(At(Tool(fn).listing().tools_json(), "/0/name"), "echo2");
}

TEST_F(McpListings, AFunctionThatIsNotMcpHasNone) {
  std::string fn = Published(false);
  EXPECT_EQ(Set(fn, "1.0", Listing("echo")), "bad_request");
  EXPECT_FALSE(Tool(fn).has_listing());
}

TEST_F(McpListings, UnknownVersionsAndFunctionsAreRefused) {
  std::string fn = Published(true);
  EXPECT_EQ(Set(fn, "2.0", Listing("echo")), "version_not_found");
  EXPECT_EQ(Set(fn, "1.0.0", Listing("echo")), "version_not_found");  // not the text published
  EXPECT_EQ(Set(NewUuid(), "1.0", Listing("echo")), "function_not_found");
  EXPECT_EQ(Set("not-a-uuid", "1.0", Listing("echo")), "function_not_found");
  EXPECT_EQ(Set(fn, "", Listing("echo")), "bad_request");
  EXPECT_FALSE(Tool(fn).has_listing());
}

TEST_F(McpListings, ArraysOverTheirBoundsAreRefusedAndNothingIsStored) {
  std::string fn = Published(true);
  v1::McpListing l = Listing("echo");
  std::string many = "[{}";
  for (int i = 1; i < 501; ++i) many += ",{}";
  l.set_prompts_json(many + "]");
  EXPECT_EQ(Set(fn, "1.0", l), "validation_failed");
  ASSERT_EQ(last_problem_.errors_size(), 1);
  EXPECT_EQ(last_problem_.errors(0).field(), "listing.prompts_json");

  l = Listing("echo");
  l.set_resources_json(R"([{"uri":")" + std::string(256 * 1024, 'x') + R"("}])");
  EXPECT_EQ(Set(fn, "1.0", l), "validation_failed");
  ASSERT_EQ(last_problem_.errors_size(), 1);
  EXPECT_EQ(last_problem_.errors(0).field(), "listing.resources_json");

  l = Listing("echo");
  l.set_tools_json(R"({"tools":[]})");
  EXPECT_EQ(Set(fn, "1.0", l), "validation_failed");
  // PostgreSQL's jsonb refuses what simdjson accepts: \u0000 inside a string.
  l = Listing("echo");
  l.set_tools_json(R"([{"name":"a\u0000b"}])");
  EXPECT_EQ(Set(fn, "1.0", l), "bad_request");
  EXPECT_FALSE(Tool(fn).has_listing());

  // None of the refusals took the version's one listing.
  EXPECT_EQ(Set(fn, "1.0", Listing("echo")), "") << last_problem_.detail();
  EXPECT_TRUE(Tool(fn).has_listing());
}

}  // namespace
}  // namespace toolgate::testing
