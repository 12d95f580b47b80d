#include "toolgate/registry/rating.h"

#include <gtest/gtest.h>

namespace toolgate::registry {
namespace {

TEST(Rating, PriorIsTheMeanOfEveryRatingAtMostNeutralWithWeightFive) {
  RatingPrior p = PriorFrom(25, 10);
  EXPECT_DOUBLE_EQ(p.mean, 2.5);
  EXPECT_EQ(p.weight, 5);
  EXPECT_DOUBLE_EQ(PriorFrom(45, 10).mean, 3.0);
  EXPECT_DOUBLE_EQ(PriorFrom(0, 0).mean, 0);
}

TEST(Rating, BayesianAveragePullsFewRatingsTowardsThePrior) {
  RatingPrior prior{3.0, 5};
  // (5 × 3 + 5) / (5 + 1)
  EXPECT_DOUBLE_EQ(BayesianAverage(5, 1, prior), 20.0 / 6.0);
  // Many ratings outweigh the prior.
  EXPECT_NEAR(BayesianAverage(4600, 1000, prior), 4.592, 0.001);
  EXPECT_DOUBLE_EQ(BayesianAverage(0, 0, prior), 0);
}

TEST(Rating, OneFiveStarDoesNotBeatManyFourStars) {
  // Generous raters: the marketplace's mean is above 4 stars.
  for (auto [sum, count] : {std::pair<int64_t, int64_t>{5 + 20 * 4, 21},
                            std::pair<int64_t, int64_t>{5 + 3 * 4 + 50 * 5, 54},
                            std::pair<int64_t, int64_t>{5 + 3 * 4 + 10, 9}}) {
    RatingPrior prior = PriorFrom(sum, count);
    EXPECT_LT(BayesianAverage(5, 1, prior), BayesianAverage(80, 20, prior)) << sum << "/" << count;
    EXPECT_LT(BayesianAverage(5, 1, prior), BayesianAverage(12, 3, prior)) << sum << "/" << count;
    // It still beats a single four-star, and a mediocre record.
    EXPECT_GT(BayesianAverage(5, 1, prior), BayesianAverage(4, 1, prior));
    EXPECT_GT(BayesianAverage(5, 1, prior), BayesianAverage(6, 3, prior));
  }
}

TEST(Rating, FormatsTheAverageWithAtMostTwoDecimals) {
  EXPECT_EQ(FormatAverage(0, 0), "0");
  EXPECT_EQ(FormatAverage(5, 1), "5");
  EXPECT_EQ(FormatAverage(9, 2), "4.5");
  EXPECT_EQ(FormatAverage(13, 3), "4.33");
  EXPECT_EQ(FormatAverage(14, 3), "4.67");     // rounded half up
  EXPECT_EQ(FormatAverage(201, 200), "1.01");  // 1.005
  EXPECT_EQ(FormatAverage(401, 100), "4.01");
}

TEST(Rating, ParsesStarsAndAnOptionalReview) {
  auto r = ParseRatingRequest(R"({"stars": 4, "review": "Fast and right."})");
  ASSERT_TRUE(std::holds_alternative<RatingInput>(r));
  EXPECT_EQ(std::get<RatingInput>(r).stars, 4);
  EXPECT_EQ(std::get<RatingInput>(r).review, "Fast and right.");
  auto bare = ParseRatingRequest(R"({"stars": 1, "review": null})");
  ASSERT_TRUE(std::holds_alternative<RatingInput>(bare));
  EXPECT_EQ(std::get<RatingInput>(bare).review, "");
}

TEST(Rating, RefusesBadStarsAndReviews) {
  for (const char* body : {R"({})", R"({"stars": 0})", R"({"stars": 6})", R"({"stars": 4.5})",
                           R"({"stars": "5"})", R"({"stars": 3, "review": 7})"}) {
    auto r = ParseRatingRequest(body);
    ASSERT_TRUE(std::holds_alternative<v1::Problem>(r)) << body;
    EXPECT_EQ(std::get<v1::Problem>(r).status(), 422) << body;
  }
  std::string long_review = R"({"stars": 3, "review": ")" + std::string(2001, 'a') + "\"}";
  EXPECT_TRUE(std::holds_alternative<v1::Problem>(ParseRatingRequest(long_review)));
  auto not_json = ParseRatingRequest("stars=5");
  ASSERT_TRUE(std::holds_alternative<v1::Problem>(not_json));
  EXPECT_EQ(std::get<v1::Problem>(not_json).status(), 400);
}

}  // namespace
}  // namespace toolgate::registry
