// Ratings: validating PUT /functions/{id}/rating, and ranking by a Bayesian average so that a
// function with one five-star rating does not outrank one with many four-star ratings. Pure
// functions: no I/O, thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

#include "toolgate/v1/toolgate.pb.h"

namespace toolgate::registry {

inline constexpr size_t kMaxReviewChars = 2'000;

// A validated PUT /functions/{id}/rating body.
struct RatingInput {
  int stars = 0;       // 1..5
  std::string review;  // "" when absent or null
};

// 400 invalid_json for a body that is not a JSON object; 422 when stars is not an integer
// from 1 to 5 or review is not a string of at most kMaxReviewChars characters.
std::variant<v1::Problem, RatingInput> ParseRatingRequest(std::string_view body);

// What a function's average is pulled towards until it has ratings of its own: `weight`
// imaginary ratings of `mean` stars.
struct RatingPrior {
  double mean = 0;
  int64_t weight = 5;
};

// The prior from every rating in the marketplace: their mean, but at most 3 stars (the middle
// of the scale), with weight 5; mean 0 when there is none. The cap is what keeps one five-star
// rating from winning: were the prior the plain mean, then once that mean passed 4 stars a
// function rated 4 by hundreds would sit below it, and a single 5 would outrank it.
inline constexpr double kNeutralStars = 3.0;
RatingPrior PriorFrom(int64_t stars_sum, int64_t count);

// (weight × mean + stars_sum) / (weight + count): the average of the function's ratings and
// the prior's imaginary ones. 0 for a function without ratings, so unrated functions rank last.
double BayesianAverage(int64_t stars_sum, int64_t count, const RatingPrior& prior);

// The plain average as a JSON number with at most two decimals ("4.33", "4.5", "5"); "0"
// without ratings.
std::string FormatAverage(int64_t stars_sum, int64_t count);

}  // namespace toolgate::registry
