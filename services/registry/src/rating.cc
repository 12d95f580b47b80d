#include "toolgate/registry/rating.h"

#include <algorithm>

#include "request_fields.h"

namespace toolgate::registry {

std::variant<v1::Problem, RatingInput> ParseRatingRequest(std::string_view body) {
  simdjson::dom::object object;
  v1::Problem problem;
  auto doc = ParseObjectBody(body, &object, &problem);
  if (!doc) return problem;
  FieldReader in(object);
  auto stars = in.Int("stars", /*required=*/true, 1, 5);
  auto review = in.String("review", /*required=*/false, 0, kMaxReviewChars);
  if (!in.ok()) return in.problem();
  return RatingInput{static_cast<int>(*stars), review.value_or("")};
}

RatingPrior PriorFrom(int64_t stars_sum, int64_t count) {
  RatingPrior prior;
  if (count > 0) {
    prior.mean =
        std::min(kNeutralStars, static_cast<double>(stars_sum) / static_cast<double>(count));
  }
  return prior;
}

double BayesianAverage(int64_t stars_sum, int64_t count, const RatingPrior& prior) {
  if (count <= 0) return 0;
  return (static_cast<double>(prior.weight) * prior.mean + static_cast<double>(stars_sum)) /
         static_cast<double>(prior.weight + count);
}

std::string FormatAverage(int64_t stars_sum, int64_t count) {
  if (count <= 0) return "0";
  // Hundredths, rounded half up, in integers: 13/3 stars -> 433.
  int64_t hundredths = (stars_sum * 200 + count) / (2 * count);
  std::string out = std::to_string(hundredths / 100);
  int64_t fraction = hundredths % 100;
  if (fraction != 0) {
    out += '.';
    out += static_cast<char>('0' + fraction / 10);
    if (fraction % 10 != 0) out += static_cast<char>('0' + fraction % 10);
  }
  return out;
}

}  // namespace toolgate::registry
