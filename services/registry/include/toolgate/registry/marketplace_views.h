// The JSON documents of the marketplace routes (issue 4's API). Pure functions.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "toolgate/registry/card.h"
#include "toolgate/registry/marketplace_store.h"
#include "toolgate/registry/ratings_store.h"
#include "toolgate/registry/snippets.h"

namespace toolgate::registry {

// A card: {function_id, name, description, organization {id, name}, category, sector, tags,
// runtime, compute_type (null while no version is published), egress (the latest version's,
// [] while none), price_micro_usd,
// rating {average, count}, executions, mcp, favorite}.
std::string CardJson(const Card& card);

// {items: [card], next_cursor: string|null} and, when total is given, total.
std::string CardListJson(const std::vector<Card>& cards, const std::optional<std::string>& next,
                         std::optional<int64_t> total);

// {trending: [card], top_rated: [card]}.
std::string HighlightsJson(const std::vector<Card>& trending, const std::vector<Card>& top_rated);

// {category, sector, runtime, compute_type, tags, pricing: [{value, count}], creator:
// [{value, name, count}], total}.
std::string FacetsJson(const Facets& facets);

// A rating: {stars, review, organization {name}, created_at, updated_at}, plus user {id} when it
// is the rating of viewer_user_id (so a page can offer to edit it; other raters stay
// anonymous).
std::string RatingJson(const RatingRecord& rating, const std::string& viewer_user_id);
// {items: [rating], next_cursor}.
std::string RatingListJson(const std::vector<RatingRecord>& ratings,
                           const std::optional<std::string>& next,
                           const std::string& viewer_user_id);

// {curl, python, javascript}.
std::string SnippetsJson(const Snippets& snippets);

}  // namespace toolgate::registry
