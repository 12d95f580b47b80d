// The marketplace routes on tg.registry.http (issue 4's API, beside the contract's section 6):
//
//   GET  /marketplace                  search, filter, sort and page the public catalogue
//   GET  /marketplace/highlights       trending (executions, last 7 days) and top rated
//   GET  /marketplace/facets           every filter's values and counts
//   PUT|DELETE /favorites/{function_id}, GET /favorites        a signed-in user's favorites
//   PUT  /functions/{id}/rating, GET /functions/{id}/ratings    ratings and reviews
//   GET  /functions/{id}/snippets      the Integrate tab's curl, Python and JavaScript
//
// The marketplace, ratings and snippets answer without authentication too (the catalogue is
// public); a signed-in caller also sees its favorites marked and its own private functions.
#pragma once

#include <string>

#include "toolgate/core/http.h"
#include "toolgate/registry/favorites_store.h"
#include "toolgate/registry/marketplace_store.h"
#include "toolgate/registry/ratings_store.h"
#include "toolgate/registry/store.h"

namespace toolgate::registry {

// How many cards each highlight holds.
inline constexpr int kHighlightCards = 8;
// The base URL of snippets when the request's Host header is missing or unusable.
inline constexpr const char* kFallbackBaseUrl = "http://localhost:8080";

// Who asks, on a route that also answers the public: the principal of a session, or of an API
// key with the manage scope; an empty principal (nobody) otherwise, so that an invoke-only key
// reads as much as the public does.
v1::Principal ViewerOf(const core::Request& r);

class MarketplaceApi {
 public:
  // Every store must outlive the api. Thread-safe.
  MarketplaceApi(RegistryStore& functions, MarketplaceStore& market, FavoritesStore& favorites,
                 RatingsStore& ratings);

  void AddRoutes(core::Router& router);

  v1::HttpResponse Search(const core::Request& r);
  v1::HttpResponse Highlights(const core::Request& r);
  v1::HttpResponse CountFacets(const core::Request& r);
  v1::HttpResponse PutFavorite(const core::Request& r);
  v1::HttpResponse DeleteFavorite(const core::Request& r);
  v1::HttpResponse ListFavorites(const core::Request& r);
  v1::HttpResponse PutRating(const core::Request& r);
  v1::HttpResponse ListRatings(const core::Request& r);
  v1::HttpResponse GetSnippets(const core::Request& r);

 private:
  // The function r.params[0] when it exists and is visible to viewer (public, or of its
  // organization); else *refusal is 404 function_not_found (or 503).
  std::optional<FunctionRecord> VisibleFunction(const core::Request& r, const v1::Principal& viewer,
                                                v1::HttpResponse* refusal);

  RegistryStore& functions_;
  MarketplaceStore& market_;
  FavoritesStore& favorites_;
  RatingsStore& ratings_;
};

}  // namespace toolgate::registry
