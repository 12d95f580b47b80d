#include "toolgate/registry/marketplace_api.h"

#include <algorithm>

#include "toolgate/base/crypto.h"
#include "toolgate/core/function_model.h"
#include "toolgate/core/problem.h"
#include "toolgate/registry/marketplace_views.h"
#include "toolgate/registry/snippets.h"

namespace toolgate::registry {
namespace {

v1::HttpResponse FunctionNotFound(const std::string& id) {
  return core::ProblemResponse("function_not_found", "No function " + id + " is visible to you.");
}

// The refusal for an API key without a user, on routes that belong to a person.
std::optional<v1::HttpResponse> RequireUser(const core::Request& r) {
  if (!r.principal().user_id().empty()) return std::nullopt;
  return core::ProblemResponse("user_session_required",
                               "Favorites and ratings belong to a person: sign in, or use a key "
                               "created by a signed-in user.");
}

std::optional<std::string> Cursor(ListOrder order, const std::optional<Position>& next) {
  if (!next) return std::nullopt;
  return EncodePosition(order, *next);
}

}  // namespace

v1::Principal ViewerOf(const core::Request& r) {
  if (!r.http.authenticated()) return v1::Principal();
  const v1::Principal& p = r.principal();
  if (p.key_id().empty()) return p;  // a session
  for (const auto& scope : p.scopes()) {
    if (scope == "manage") return p;
  }
  return v1::Principal();
}

MarketplaceApi::MarketplaceApi(RegistryStore& functions, MarketplaceStore& market,
                               FavoritesStore& favorites, RatingsStore& ratings)
    : functions_(functions), market_(market), favorites_(favorites), ratings_(ratings) {}

void MarketplaceApi::AddRoutes(core::Router& router) {
  constexpr bool kPublic = false;  // require_auth
  router.Add(
      "GET", "/marketplace", [this](const core::Request& r) { return Search(r); }, kPublic);
  router.Add(
      "GET", "/marketplace/highlights", [this](const core::Request& r) { return Highlights(r); },
      kPublic);
  router.Add(
      "GET", "/marketplace/facets", [this](const core::Request& r) { return CountFacets(r); },
      kPublic);
  router.Add("PUT", "/favorites/{function_id}",
             [this](const core::Request& r) { return PutFavorite(r); });
  router.Add("DELETE", "/favorites/{function_id}",
             [this](const core::Request& r) { return DeleteFavorite(r); });
  router.Add("GET", "/favorites", [this](const core::Request& r) { return ListFavorites(r); });
  router.Add("PUT", "/functions/{id}/rating",
             [this](const core::Request& r) { return PutRating(r); });
  router.Add(
      "GET", "/functions/{id}/ratings", [this](const core::Request& r) { return ListRatings(r); },
      kPublic);
  router.Add(
      "GET", "/functions/{id}/snippets", [this](const core::Request& r) { return GetSnippets(r); },
      kPublic);
}

std::optional<FunctionRecord> MarketplaceApi::VisibleFunction(const core::Request& r,
                                                              const v1::Principal& viewer,
                                                              v1::HttpResponse* refusal) {
  const std::string& id = r.params[0];
  auto found = functions_.GetFunction(NormalizeFunctionId(id));
  if (!found.ok()) {
    *refusal = core::Unavailable(found.status());
    return std::nullopt;
  }
  // Private functions of other organizations do not exist for the caller (no existence
  // leak), as on the invoke path. Organization ids are never empty, so nobody owns nothing.
  if (!found->has_value() ||
      ((*found)->visibility != "public" && (*found)->org_id != viewer.org_id())) {
    *refusal = FunctionNotFound(id);
    return std::nullopt;
  }
  return std::move(**found);
}

v1::HttpResponse MarketplaceApi::Search(const core::Request& r) {
  auto parsed = ParseMarketQuery(r);
  if (auto* problem = std::get_if<v1::Problem>(&parsed)) return core::ProblemResponse(*problem);
  const auto& query = std::get<MarketQuery>(parsed);
  RatingPrior prior;
  if (query.order == ListOrder::kRating) {
    auto got = market_.Prior();
    if (!got.ok()) return core::Unavailable(got.status());
    prior = *got;
  }
  auto page = market_.Search(query, prior, ViewerOf(r).user_id());
  if (!page.ok()) return core::Unavailable(page.status());
  return core::JsonResponse(
      200, CardListJson(page->cards, Cursor(query.order, page->next), page->total));
}

v1::HttpResponse MarketplaceApi::Highlights(const core::Request& r) {
  const std::string viewer = ViewerOf(r).user_id();
  auto trending = market_.Trending(kHighlightCards, viewer);
  if (!trending.ok()) return core::Unavailable(trending.status());
  auto rated = market_.RatedFunctions();
  if (!rated.ok()) return core::Unavailable(rated.status());
  auto prior = market_.Prior();
  if (!prior.ok()) return core::Unavailable(prior.status());
  // Highest Bayesian average first; more ratings, then the id, break ties.
  std::vector<std::pair<double, const RatedFunction*>> ranked;
  for (const auto& f : *rated)
    ranked.emplace_back(BayesianAverage(f.stars_sum, f.count, *prior), &f);
  std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
    if (a.first != b.first) return a.first > b.first;
    if (a.second->count != b.second->count) return a.second->count > b.second->count;
    return a.second->function_id < b.second->function_id;
  });
  std::vector<std::string> ids;
  for (size_t i = 0; i < ranked.size() && i < static_cast<size_t>(kHighlightCards); ++i) {
    ids.push_back(ranked[i].second->function_id);
  }
  auto top = market_.Cards(ids, viewer);
  if (!top.ok()) return core::Unavailable(top.status());
  return core::JsonResponse(200, HighlightsJson(*trending, *top));
}

v1::HttpResponse MarketplaceApi::CountFacets(const core::Request& r) {
  auto parsed = ParseMarketFilters(r);
  if (auto* problem = std::get_if<v1::Problem>(&parsed)) return core::ProblemResponse(*problem);
  auto facets = market_.CountFacets(std::get<MarketFilters>(parsed));
  if (!facets.ok()) return core::Unavailable(facets.status());
  return core::JsonResponse(200, FacetsJson(*facets));
}

v1::HttpResponse MarketplaceApi::PutFavorite(const core::Request& r) {
  if (auto refusal = RequireUser(r)) return *refusal;
  v1::HttpResponse refusal;
  auto function = VisibleFunction(r, r.principal(), &refusal);
  if (!function) return refusal;
  Status s = favorites_.Add(r.principal().user_id(), function->id);
  if (!s.ok()) return core::Unavailable(s);
  return core::NoContent();
}

v1::HttpResponse MarketplaceApi::DeleteFavorite(const core::Request& r) {
  if (auto refusal = RequireUser(r)) return *refusal;
  const std::string id = NormalizeFunctionId(r.params[0]);
  if (!IsUuid(id)) return FunctionNotFound(r.params[0]);
  // Idempotent, and allowed for a function that has since become private: a user can always
  // take a heart back.
  Status s = favorites_.Remove(r.principal().user_id(), id);
  if (!s.ok()) return core::Unavailable(s);
  return core::NoContent();
}

v1::HttpResponse MarketplaceApi::ListFavorites(const core::Request& r) {
  if (auto refusal = RequireUser(r)) return *refusal;
  v1::HttpResponse problem;
  auto limit = core::ParseLimit(r, &problem);
  if (!limit) return problem;
  auto cursor = ParseCursor(r, ListOrder::kFavorites);
  if (auto* bad = std::get_if<v1::Problem>(&cursor)) return core::ProblemResponse(*bad);
  auto page = favorites_.List(r.principal().user_id(), r.principal().org_id(), *limit,
                              std::get<std::optional<Position>>(cursor));
  if (!page.ok()) return core::Unavailable(page.status());
  return core::JsonResponse(
      200, CardListJson(page->cards, Cursor(ListOrder::kFavorites, page->next), std::nullopt));
}

v1::HttpResponse MarketplaceApi::PutRating(const core::Request& r) {
  if (auto refusal = RequireUser(r)) return *refusal;
  v1::HttpResponse refusal;
  auto function = VisibleFunction(r, r.principal(), &refusal);
  if (!function) return refusal;
  auto parsed = ParseRatingRequest(r.http.body());
  if (auto* problem = std::get_if<v1::Problem>(&parsed)) return core::ProblemResponse(*problem);
  const v1::Principal& rater = r.principal();
  if (function->org_id == rater.org_id()) {
    return core::ProblemResponse("forbidden",
                                 "Your organization owns this function; ratings come from the "
                                 "organizations that use it.");
  }
  auto has_run = ratings_.HasRun(rater.org_id(), function->id);
  if (!has_run.ok()) return core::Unavailable(has_run.status());
  if (!*has_run) {
    return core::ProblemResponse("forbidden",
                                 "Your organization has not run this function yet; run it at "
                                 "least once, then rate it.");
  }
  auto put = ratings_.Put(function->id, rater, std::get<RatingInput>(parsed));
  if (put.status().code() == Status::Code::kNotFound) return FunctionNotFound(r.params[0]);
  if (!put.ok()) return core::Unavailable(put.status());
  return core::JsonResponse(put->created ? 201 : 200, RatingJson(put->rating, rater.user_id()));
}

v1::HttpResponse MarketplaceApi::ListRatings(const core::Request& r) {
  const v1::Principal viewer = ViewerOf(r);
  v1::HttpResponse refusal;
  auto function = VisibleFunction(r, viewer, &refusal);
  if (!function) return refusal;
  v1::HttpResponse problem;
  auto limit = core::ParseLimit(r, &problem);
  if (!limit) return problem;
  auto cursor = ParseCursor(r, ListOrder::kRatings);
  if (auto* bad = std::get_if<v1::Problem>(&cursor)) return core::ProblemResponse(*bad);
  auto page = ratings_.List(function->id, *limit, std::get<std::optional<Position>>(cursor));
  if (!page.ok()) return core::Unavailable(page.status());
  return core::JsonResponse(
      200, RatingListJson(page->items, Cursor(ListOrder::kRatings, page->next), viewer.user_id()));
}

v1::HttpResponse MarketplaceApi::GetSnippets(const core::Request& r) {
  v1::HttpResponse refusal;
  auto function = VisibleFunction(r, ViewerOf(r), &refusal);
  if (!function) return refusal;
  const std::string asked = r.Query("version");
  std::string version = asked;
  if (version.empty()) {
    auto versions = functions_.ListVersions(function->id);
    if (!versions.ok()) return core::Unavailable(versions.status());
    if (versions->empty()) {
      return core::ProblemResponse("version_not_found",
                                   "No version of this function is published yet.");
    }
    version = versions->front().version;
  }
  auto found = functions_.GetVersion(function->id, version);
  if (!found.ok()) return core::Unavailable(found.status());
  if (!found->has_value()) {
    return core::ProblemResponse("version_not_found",
                                 "Version " + version + " of this function is not published.");
  }
  const VersionRecord& v = **found;
  auto host = r.http.headers().find("host");
  SnippetRequest request{
      BaseUrlFor(host == r.http.headers().end() ? "" : host->second, kFallbackBaseUrl),
      function->id, asked, core::FirstExampleEvent(v.examples_json), v.declared_keys};
  return core::JsonResponse(200, SnippetsJson(RenderSnippets(request)));
}

}  // namespace toolgate::registry
