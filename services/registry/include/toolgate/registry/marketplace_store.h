// MarketplaceStore: the marketplace's reads over registry.* (full-text search, filters, facets,
// highlights). A function is listed when it is public and has a published version; a card shows
// its latest version's runtime and compute type.
//
// Failures: Unavailable when PostgreSQL cannot be reached, Internal otherwise. Thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "toolgate/pg/pg.h"
#include "toolgate/registry/card.h"
#include "toolgate/registry/marketplace_query.h"
#include "toolgate/registry/rating.h"

namespace toolgate::registry {

// One value of a filter and how many listed functions have it.
struct FacetCount {
  std::string value;  // what to send back as the filter
  std::string label;  // what to show: the organization's name for creator, else value
  int64_t count = 0;
};

// The values of every filter, each counted under all the other filters (and q), so a count
// says how many results choosing that value would give.
struct Facets {
  std::vector<FacetCount> category, sector, runtime, compute_type, tags, creator, pricing;
  int64_t total = 0;  // listed functions matching every filter
};

// A listed function with ratings, for ranking by Bayesian average.
struct RatedFunction {
  std::string function_id;
  int64_t stars_sum = 0;
  int64_t count = 0;
};

// Most tag values a facet lists (the most frequent).
inline constexpr int kMaxTagFacets = 100;

class MarketplaceStore {
 public:
  // pool must outlive the store.
  explicit MarketplaceStore(pg::Pool& pool) : pool_(pool) {}

  // One page of the listed functions matching query, in its order, with the total of matches.
  // prior ranks ListOrder::kRating. favorite is set from viewer_user_id's favorites ("" for
  // nobody).
  Result<CardPage> Search(const MarketQuery& query, const RatingPrior& prior,
                          const std::string& viewer_user_id);
  Result<Facets> CountFacets(const MarketFilters& filters);
  // The listed functions most executed over the last 7 UTC days (today included), most first;
  // those not run in that time are left out.
  Result<std::vector<Card>> Trending(int limit, const std::string& viewer_user_id);
  // The prior of Bayesian averages: PriorFrom the ratings of every listed function.
  Result<RatingPrior> Prior();
  // Every listed function that has ratings.
  Result<std::vector<RatedFunction>> RatedFunctions();
  // The cards of those of ids that are listed, in the order of ids.
  Result<std::vector<Card>> Cards(const std::vector<std::string>& ids,
                                  const std::string& viewer_user_id);

 private:
  pg::Pool& pool_;
};

}  // namespace toolgate::registry
