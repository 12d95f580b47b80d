#include "toolgate/registry/marketplace_query.h"

#include <gtest/gtest.h>

namespace toolgate::registry {
namespace {

constexpr const char* kId = "6f1c2b9e-3d4a-4b5c-8d7e-9f0a1b2c3d4e";

v1::HttpRequest Query(std::initializer_list<std::pair<const char*, std::string>> params) {
  v1::HttpRequest http;
  for (const auto& [k, v] : params) (*http.mutable_query())[k] = v;
  return http;
}

std::vector<std::string> ErrorFields(const v1::Problem& p) {
  std::vector<std::string> out;
  for (const auto& e : p.errors()) out.push_back(e.field());
  return out;
}

TEST(MarketCursor, RoundTripsEveryOrderExactly) {
  for (auto [order, key] : {std::pair{ListOrder::kRelevance, std::string("1.0607927358150482")},
                            std::pair{ListOrder::kRating, std::string("4.25e-05")},
                            std::pair{ListOrder::kExecutions, std::string("42")},
                            std::pair{ListOrder::kFavorites, std::string("1800000000123456")},
                            std::pair{ListOrder::kRatings, std::string("-5")}}) {
    std::string cursor = EncodePosition(order, Position{key, kId});
    auto back = DecodePosition(cursor, order);
    ASSERT_TRUE(back.has_value()) << key;
    EXPECT_EQ(back->key, key);
    EXPECT_EQ(back->id, kId);
  }
}

TEST(MarketCursor, BelongsToItsOrder) {
  std::string cursor = EncodePosition(ListOrder::kExecutions, Position{"42", kId});
  EXPECT_FALSE(DecodePosition(cursor, ListOrder::kRating).has_value());
  EXPECT_FALSE(DecodePosition(cursor, ListOrder::kFavorites).has_value());
}

TEST(MarketCursor, RefusesWhatItDidNotIssue) {
  EXPECT_FALSE(DecodePosition("not-a-cursor", ListOrder::kExecutions).has_value());
  // Well-formed envelopes around bad positions: keys that would not cast, ids not UUIDs.
  for (const char* bad : {"executions|1.5|6f1c2b9e-3d4a-4b5c-8d7e-9f0a1b2c3d4e",
                          "executions|x|6f1c2b9e-3d4a-4b5c-8d7e-9f0a1b2c3d4e",
                          "executions||6f1c2b9e-3d4a-4b5c-8d7e-9f0a1b2c3d4e", "executions|42|nope",
                          "executions|42", "executions|42|6F1C2B9E-3D4A-4B5C-8D7E-9F0A1B2C3D4E"}) {
    EXPECT_FALSE(DecodePosition(core::EncodeCursor(bad), ListOrder::kExecutions).has_value())
        << bad;
  }
  EXPECT_FALSE(
      DecodePosition(core::EncodeCursor("rating|inf|" + std::string(kId)), ListOrder::kRating)
          .has_value());
  EXPECT_FALSE(
      DecodePosition(core::EncodeCursor("rating|nan|" + std::string(kId)), ListOrder::kRating)
          .has_value());
}

TEST(MarketQuery, DefaultsToRelevanceWhichOrdersByExecutionsWithoutQ) {
  auto http = Query({});
  auto parsed = ParseMarketQuery(core::Request{http, {}});
  ASSERT_TRUE(std::holds_alternative<MarketQuery>(parsed));
  const auto& q = std::get<MarketQuery>(parsed);
  EXPECT_EQ(q.order, ListOrder::kExecutions);
  EXPECT_EQ(q.limit, 50);
  EXPECT_FALSE(q.after.has_value());

  auto with_q = Query({{"q", "weather"}});
  auto ranked = ParseMarketQuery(core::Request{with_q, {}});
  EXPECT_EQ(std::get<MarketQuery>(ranked).order, ListOrder::kRelevance);
}

TEST(MarketQuery, NormalisesAndValidatesFilters) {
  auto http = Query({{"runtime", "Python"},
                     {"compute_type", "gpu"},
                     {"pricing", "PAID"},
                     {"sort", "rating"},
                     {"limit", "7"},
                     {"category", "Data"}});
  auto parsed = ParseMarketQuery(core::Request{http, {}});
  ASSERT_TRUE(std::holds_alternative<MarketQuery>(parsed));
  const auto& q = std::get<MarketQuery>(parsed);
  EXPECT_EQ(q.filters.runtime, "python");
  EXPECT_EQ(q.filters.compute_type, "GPU");
  EXPECT_EQ(q.filters.pricing, "paid");
  EXPECT_EQ(q.filters.category, "Data");
  EXPECT_EQ(q.order, ListOrder::kRating);
  EXPECT_EQ(q.limit, 7);
}

TEST(MarketQuery, NamesEveryBadParameter) {
  auto http = Query({{"runtime", "cobol"},
                     {"compute_type", "TPU"},
                     {"pricing", "cheap"},
                     {"sort", "name"},
                     {"limit", "0"},
                     {"tag", std::string(201, 'x')}});
  auto parsed = ParseMarketQuery(core::Request{http, {}});
  ASSERT_TRUE(std::holds_alternative<v1::Problem>(parsed));
  const auto& p = std::get<v1::Problem>(parsed);
  EXPECT_EQ(p.status(), 422);
  EXPECT_EQ(ErrorFields(p), (std::vector<std::string>{"tag", "runtime", "compute_type", "pricing",
                                                      "sort", "limit"}));
}

TEST(MarketQuery, RefusesACursorOfAnotherSort) {
  auto http = Query(
      {{"sort", "rating"}, {"cursor", EncodePosition(ListOrder::kExecutions, Position{"3", kId})}});
  auto parsed = ParseMarketQuery(core::Request{http, {}});
  ASSERT_TRUE(std::holds_alternative<v1::Problem>(parsed));
  EXPECT_EQ(ErrorFields(std::get<v1::Problem>(parsed)), (std::vector<std::string>{"cursor"}));

  auto same = Query({{"sort", "executions"},
                     {"cursor", EncodePosition(ListOrder::kExecutions, Position{"3", kId})}});
  auto ok = ParseMarketQuery(core::Request{same, {}});
  ASSERT_TRUE(std::holds_alternative<MarketQuery>(ok));
  EXPECT_EQ(std::get<MarketQuery>(ok).after->key, "3");
}

}  // namespace
}  // namespace toolgate::registry
