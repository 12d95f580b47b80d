// The rules MarketplaceApi decides before reading any store: the stores here point at a
// PostgreSQL that does not exist, so a test that reached one would get 503, not its answer.
#include "toolgate/registry/marketplace_api.h"

#include <gtest/gtest.h>

namespace toolgate::registry {
namespace {

class MarketplaceApiRules : public ::testing::Test {
 protected:
  MarketplaceApiRules()
      : pool_("host=127.0.0.1 port=1 connect_timeout=1", 1),
        functions_(pool_),
        market_(pool_),
        favorites_(pool_),
        ratings_(pool_),
        api_(functions_, market_, favorites_, ratings_) {}

  // A request by an API key of org-1 that no user created.
  v1::HttpRequest KeyWithoutUser(std::vector<std::string> scopes = {"invoke", "manage"}) {
    v1::HttpRequest http;
    http.set_authenticated(true);
    http.mutable_principal()->set_org_id("org-1");
    http.mutable_principal()->set_key_id("key-1");
    for (auto& s : scopes) http.mutable_principal()->add_scopes(s);
    return http;
  }

  pg::Pool pool_;
  RegistryStore functions_;
  MarketplaceStore market_;
  FavoritesStore favorites_;
  RatingsStore ratings_;
  MarketplaceApi api_;
};

constexpr const char* kId = "6f1c2b9e-3d4a-4b5c-8d7e-9f0a1b2c3d4e";

TEST_F(MarketplaceApiRules, FavoritesAndRatingsNeedAUser) {
  v1::HttpRequest http = KeyWithoutUser();
  core::Request r{http, {kId}};
  for (const v1::HttpResponse& answer :
       {api_.PutFavorite(r), api_.DeleteFavorite(r), api_.PutRating(r)}) {
    EXPECT_EQ(answer.status(), 403);
    EXPECT_EQ(answer.problem().code(), "user_session_required");
  }
  core::Request list{http, {}};
  EXPECT_EQ(api_.ListFavorites(list).problem().code(), "user_session_required");
}

TEST_F(MarketplaceApiRules, ViewerIsASessionOrAManageKey) {
  v1::HttpRequest manage = KeyWithoutUser();
  manage.mutable_principal()->set_user_id("user-1");
  EXPECT_EQ(ViewerOf(core::Request{manage, {}}).user_id(), "user-1");

  v1::HttpRequest invoke_only = KeyWithoutUser({"invoke"});
  invoke_only.mutable_principal()->set_user_id("user-1");
  EXPECT_TRUE(ViewerOf(core::Request{invoke_only, {}}).org_id().empty());

  v1::HttpRequest session;
  session.set_authenticated(true);
  session.mutable_principal()->set_org_id("org-1");
  session.mutable_principal()->set_user_id("user-1");
  EXPECT_EQ(ViewerOf(core::Request{session, {}}).org_id(), "org-1");

  v1::HttpRequest anonymous;
  EXPECT_TRUE(ViewerOf(core::Request{anonymous, {}}).org_id().empty());
}

TEST_F(MarketplaceApiRules, BadQueriesAreRefusedBeforeAnyRead) {
  v1::HttpRequest http;
  (*http.mutable_query())["sort"] = "newest";
  EXPECT_EQ(api_.Search(core::Request{http, {}}).status(), 422);
  (*http.mutable_query())["sort"] = "rating";
  (*http.mutable_query())["pricing"] = "cheap";
  EXPECT_EQ(api_.CountFacets(core::Request{http, {}}).status(), 422);
}

}  // namespace
}  // namespace toolgate::registry
