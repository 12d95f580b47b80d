#include "toolgate/registry/marketplace_views.h"

#include <gtest/gtest.h>

#include "toolgate/base/json.h"

namespace toolgate::registry {
namespace {

Card Sample() {
  Card c;
  c.function_id = "6f1c2b9e-3d4a-4b5c-8d7e-9f0a1b2c3d4e";
  c.name = "Weather";
  c.description = "Forecasts";
  c.org_id = "org-1";
  c.org_name = "Acme";
  c.category = "Data";
  c.sector = "Travel";
  c.tags = {"weather"};
  c.runtime = "lua";
  c.compute_type = "CPU";
  c.price_micro_usd = 2500;
  c.rating_sum = 13;
  c.rating_count = 3;
  c.executions = 42;
  c.favorite = true;
  return c;
}

TEST(MarketplaceViews, CardHasEveryField) {
  auto doc = ParseJson(CardJson(Sample()));
  ASSERT_TRUE(doc.ok());
  simdjson::dom::object o = doc->root.get_object();
  EXPECT_EQ(std::string_view(o["organization"]["name"].get_string()), "Acme");
  EXPECT_EQ(std::string_view(o["runtime"].get_string()), "lua");
  EXPECT_DOUBLE_EQ(double(o["rating"]["average"]), 4.33);
  EXPECT_EQ(int64_t(o["rating"]["count"]), 3);
  EXPECT_EQ(int64_t(o["executions"]), 42);
  EXPECT_EQ(int64_t(o["price_micro_usd"]), 2500);
  EXPECT_TRUE(bool(o["favorite"]));
  EXPECT_FALSE(bool(o["mcp"]));
  EXPECT_EQ(o["tags"].get_array().size(), 1u);
}

TEST(MarketplaceViews, CardWithoutAVersionHasNullRuntime) {
  Card c = Sample();
  c.runtime.clear();
  c.compute_type.clear();
  auto doc = ParseJson(CardJson(c));
  ASSERT_TRUE(doc.ok());
  EXPECT_TRUE(doc->root["runtime"].is_null());
  EXPECT_TRUE(doc->root["compute_type"].is_null());
}

TEST(MarketplaceViews, CardShowsTheLatestVersionsEgress) {
  Card c = Sample();
  EXPECT_EQ(ToJson(ParseJson(CardJson(c))->root["egress"]), "[]");
  c.egress = {"api.open-meteo.com", "*"};
  EXPECT_EQ(ToJson(ParseJson(CardJson(c))->root["egress"]), R"(["api.open-meteo.com","*"])");
}

TEST(MarketplaceViews, ListCarriesCursorAndTotal) {
  auto doc = ParseJson(CardListJson({Sample()}, std::string("abc"), 7));
  ASSERT_TRUE(doc.ok());
  EXPECT_EQ(doc->root["items"].get_array().size(), 1u);
  EXPECT_EQ(std::string_view(doc->root["next_cursor"].get_string()), "abc");
  EXPECT_EQ(int64_t(doc->root["total"]), 7);
  auto last = ParseJson(CardListJson({}, std::nullopt, std::nullopt));
  ASSERT_TRUE(last.ok());
  EXPECT_TRUE(last->root["next_cursor"].is_null());
  EXPECT_TRUE(last->root["total"].error() == simdjson::NO_SUCH_FIELD);
}

TEST(MarketplaceViews, OnlyTheViewersOwnRatingNamesItsUser) {
  RatingRecord mine{"f", "user-1", "Acme", 4, "Good", 1'800'000'000'000, 1'800'000'000'000};
  RatingRecord theirs{"f", "user-2", "Other", 2, "", 1'800'000'000'000, 1'800'000'000'000};
  auto doc = ParseJson(RatingListJson({mine, theirs}, std::nullopt, "user-1"));
  ASSERT_TRUE(doc.ok());
  auto items = doc->root["items"].get_array();
  EXPECT_EQ(std::string_view(items.at(0)["user"]["id"].get_string()), "user-1");
  EXPECT_TRUE(items.at(1)["user"].error() == simdjson::NO_SUCH_FIELD);
  EXPECT_EQ(std::string_view(items.at(1)["organization"]["name"].get_string()), "Other");
  EXPECT_EQ(std::string_view(items.at(0)["created_at"].get_string()), "2027-01-15T08:00:00Z");
  auto anonymous = ParseJson(RatingJson(mine, ""));
  ASSERT_TRUE(anonymous.ok());
  EXPECT_TRUE(anonymous->root["user"].error() == simdjson::NO_SUCH_FIELD);
}

TEST(MarketplaceViews, FacetsNameCreators) {
  Facets f;
  f.category = {{"Data", "Data", 3}};
  f.creator = {{"org-1", "Acme", 2}};
  f.pricing = {{"free", "free", 5}};
  f.total = 5;
  auto doc = ParseJson(FacetsJson(f));
  ASSERT_TRUE(doc.ok());
  EXPECT_EQ(std::string_view(doc->root["creator"].at(0)["name"].get_string()), "Acme");
  EXPECT_TRUE(doc->root["category"].at(0)["name"].error() == simdjson::NO_SUCH_FIELD);
  EXPECT_EQ(int64_t(doc->root["category"].at(0)["count"]), 3);
  EXPECT_EQ(doc->root["tags"].get_array().size(), 0u);
  EXPECT_EQ(int64_t(doc->root["total"]), 5);
}

}  // namespace
}  // namespace toolgate::registry
