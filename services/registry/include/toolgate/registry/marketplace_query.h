// The query of GET /marketplace and GET /marketplace/facets, validated, and the keyset cursors
// of the registry's lists. Pure functions: no I/O, thread-safe.
//
// Every list is ordered by a sort key and then by an id that breaks ties, and a cursor is the
// position of the last item served: that key (as PostgreSQL prints it, so it compares exactly
// when sent back) and that id. The next page starts strictly after it, so items can neither
// repeat nor be skipped while the keys do not change between pages.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "toolgate/core/http.h"
#include "toolgate/v1/toolgate.pb.h"

namespace toolgate::registry {

// What a list is ordered by; each order names its own cursors, so a cursor of one order is
// refused by another.
enum class ListOrder {
  kRelevance,   // full-text rank, highest first (a query with q)
  kRating,      // Bayesian average rating, highest first
  kExecutions,  // executions, most first
  kFavorites,   // when favorited, newest first
  kRatings,     // when rated, newest first
};

// The marketplace filters; an empty member does not filter. Values are as given except
// runtime (lower case) and compute_type (upper case), which are validated.
struct MarketFilters {
  std::string q;  // PostgreSQL websearch syntax: words, "phrases", OR, -excluded
  std::string category;
  std::string sector;
  std::string runtime;       // "", "python", "javascript" or "lua"
  std::string compute_type;  // "", "CPU" or "GPU"
  std::string tag;
  std::string creator;  // an organization id or name
  std::string pricing;  // "", "free" or "paid"
};

// A keyset position: the sort key of the last item served, and its id.
struct Position {
  std::string key;  // a decimal number: an integer, or a float as PostgreSQL prints it
  std::string id;   // a lower-case UUID
};

struct MarketQuery {
  MarketFilters filters;
  // The order actually used: sort=relevance (the default) orders by executions when there is
  // no q to rank against.
  ListOrder order = ListOrder::kExecutions;
  int limit = 50;
  std::optional<Position> after;  // from ?cursor=
};

// The filters of the request's query (?q=&category=&...). 422 validation_failed naming each
// bad parameter (runtime, compute_type, pricing, or a value over 200 characters).
std::variant<v1::Problem, MarketFilters> ParseMarketFilters(const core::Request& request);

// The filters plus ?sort=relevance|rating|executions, ?limit= and ?cursor=. A cursor issued
// for another order, or not by this service, is a 422 on "cursor".
std::variant<v1::Problem, MarketQuery> ParseMarketQuery(const core::Request& request);

// The opaque cursor for position in a list of that order.
std::string EncodePosition(ListOrder order, const Position& position);
// The position, or nullopt when cursor was not issued for a list of that order (or is
// malformed: a key that is not a number, an id that is not a UUID).
std::optional<Position> DecodePosition(std::string_view cursor, ListOrder order);

// ?cursor= of a list of that order: nullopt when absent, the position when valid, a 422 on
// "cursor" when present but not valid for that order.
std::variant<v1::Problem, std::optional<Position>> ParseCursor(const core::Request& request,
                                                               ListOrder order);

}  // namespace toolgate::registry
