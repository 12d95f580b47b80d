#include "mcp_listing.h"

#include <gtest/gtest.h>

#include "fake_mcp_backend.h"
#include "toolgate/base/json.h"

namespace toolgate::edge {
namespace {

std::string Method(const v1::InvokeJob& job) {
  auto doc = ParseJson(job.event_json());
  simdjson::dom::object obj;
  std::string method;
  if (doc.ok() && doc->root.get_object().get(obj) == simdjson::SUCCESS) {
    GetString(obj, "method", &method);
  }
  return method;
}

class McpListingTest : public ::testing::Test {
 protected:
  McpListingTest() {
    backend_.handler = [](const v1::InvokeJob& job) {
      const std::string method = Method(job);
      const bool second_page = job.event_json().find(R"("cursor":"p2")") != std::string::npos;
      if (method == "tools/list" && !second_page) {
        return HandlerAnswer(200, R"({"jsonrpc":"2.0","id":"toolgate-listing","result":)"
                                  R"({"tools":[{"name":"a"}],"nextCursor":"p2"}})");
      }
      if (method == "tools/list") {
        return HandlerAnswer(200, R"({"jsonrpc":"2.0","id":"toolgate-listing","result":)"
                                  R"({"tools":[{"name":"b"}]}})");
      }
      if (method == "resources/list") {
        return HandlerAnswer(200, R"({"jsonrpc":"2.0","id":"toolgate-listing","result":)"
                                  R"({"resources":[{"uri":"test://r","name":"r"}]}})");
      }
      return HandlerAnswer(200, R"({"jsonrpc":"2.0","id":"toolgate-listing","error":)"
                                R"({"code":-32601,"message":"no"}})");
    };
  }

  std::optional<bool> Fill() {
    std::optional<bool> stored;
    filler_.Fill("fn-1", "1.0.0", {"key-hash", ""}, "req-1", "", [&](bool s) { stored = s; });
    return stored;
  }

  FakeMcpBackend backend_;
  McpListingFiller filler_{backend_};
};

TEST_F(McpListingTest, ListsEveryMethodAsThePublisherAndStoresTheListing) {
  EXPECT_EQ(Fill(), true);
  ASSERT_EQ(backend_.stored_listings.size(), 1u);
  const v1::McpListingSet& set = backend_.stored_listings[0];
  EXPECT_EQ(set.function_id(), "fn-1");
  EXPECT_EQ(set.version(), "1.0.0");
  EXPECT_EQ(set.listing().tools_json(), R"([{"name":"a"},{"name":"b"}])");  // both pages
  EXPECT_EQ(set.listing().resources_json(), R"([{"uri":"test://r","name":"r"}])");
  EXPECT_EQ(set.listing().resource_templates_json(), "[]");  // -32601: lists nothing
  EXPECT_EQ(set.listing().prompts_json(), "[]");
  ASSERT_EQ(backend_.jobs.size(), 5u);
  for (const v1::InvokeJob& job : backend_.jobs) {
    EXPECT_EQ(job.api_key_sha256(), "key-hash");
    EXPECT_EQ(job.function_id(), "fn-1");
    EXPECT_EQ(job.version(), "1.0.0");
    EXPECT_FALSE(job.stream_notices());
  }
}

TEST_F(McpListingTest, AFailedRunStoresNothing) {
  auto template_handler = backend_.handler;
  backend_.handler = [template_handler](const v1::InvokeJob& job) {
    if (Method(job) == "prompts/list") {
      v1::InvokeReply reply;
      reply.mutable_problem()->set_status(402);
      reply.mutable_problem()->set_code("insufficient_balance");
      return reply;
    }
    return template_handler(job);
  };
  EXPECT_EQ(Fill(), false);
  EXPECT_TRUE(backend_.stored_listings.empty());
}

TEST_F(McpListingTest, AnAnswerThatIsNotAListStoresNothing) {
  backend_.handler = [](const v1::InvokeJob&) { return HandlerAnswer(200, "plain text"); };
  EXPECT_EQ(Fill(), false);
  EXPECT_TRUE(backend_.stored_listings.empty());
}

TEST_F(McpListingTest, PagesAreBounded) {
  backend_.handler = [](const v1::InvokeJob& job) {
    if (Method(job) != "tools/list") {
      return HandlerAnswer(200, R"({"jsonrpc":"2.0","id":"toolgate-listing","result":)"
                                R"({"resources":[],"resourceTemplates":[],"prompts":[]}})");
    }
    // A handler that always has another page.
    return HandlerAnswer(200, R"({"jsonrpc":"2.0","id":"toolgate-listing","result":)"
                              R"({"tools":[{"name":"t"}],"nextCursor":"again"}})");
  };
  EXPECT_EQ(Fill(), true);
  size_t tool_pages = 0;
  for (const v1::InvokeJob& job : backend_.jobs) tool_pages += Method(job) == "tools/list";
  EXPECT_EQ(tool_pages, static_cast<size_t>(McpListingFiller::kMaxListPages));
}

TEST_F(McpListingTest, ARefusedStoreIsReported) {
  backend_.store_listing_reply.mutable_problem()->set_code("conflict");
  EXPECT_EQ(Fill(), false);
  EXPECT_EQ(backend_.stored_listings.size(), 1u);
}

}  // namespace
}  // namespace toolgate::edge
