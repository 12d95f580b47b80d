#include "toolgate/registry/marketplace_query.h"

#include <cctype>
#include <charconv>
#include <cstdint>

#include "request_fields.h"
#include "toolgate/base/crypto.h"
#include "toolgate/core/problem.h"

namespace toolgate::registry {
namespace {

constexpr size_t kMaxFilterChars = 200;

std::string_view OrderName(ListOrder order) {
  switch (order) {
    case ListOrder::kRelevance:
      return "relevance";
    case ListOrder::kRating:
      return "rating";
    case ListOrder::kExecutions:
      return "executions";
    case ListOrder::kFavorites:
      return "favorites";
    case ListOrder::kRatings:
      return "ratings";
  }
  return "";
}

// The key of a position in a list of that order: an integer (executions, times in
// microseconds) or a finite float as PostgreSQL prints it ("0.1", "1.25e-05").
bool IsKey(std::string_view s, ListOrder order) {
  if (s.empty() || s.size() > 32) return false;
  if (order == ListOrder::kRelevance || order == ListOrder::kRating) {
    if (s.find_first_not_of("0123456789.eE+-") != std::string_view::npos) return false;
    double value = 0;
    auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
    return ec == std::errc() && ptr == s.data() + s.size();
  }
  int64_t value = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  return ec == std::errc() && ptr == s.data() + s.size();
}

// One 422 problem with a field error per bad query parameter.
class QueryErrors {
 public:
  void Add(std::string_view field, std::string_view message) {
    if (problem_.errors_size() == 0) {
      problem_ =
          core::MakeProblem("validation_failed", "Fix the query parameters listed in errors.");
    }
    core::AddFieldError(&problem_, field, message);
  }
  bool ok() const { return problem_.errors_size() == 0; }
  const v1::Problem& problem() const { return problem_; }

 private:
  v1::Problem problem_;
};

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string Upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

MarketFilters ReadFilters(const core::Request& r, QueryErrors& errors) {
  MarketFilters f;
  struct Text {
    const char* name;
    std::string* out;
  };
  for (const Text& t : {Text{"q", &f.q}, Text{"category", &f.category}, Text{"sector", &f.sector},
                        Text{"tag", &f.tag}, Text{"creator", &f.creator}}) {
    *t.out = r.Query(t.name);
    if (CharCount(*t.out) > kMaxFilterChars || t.out->find('\0') != std::string::npos) {
      errors.Add(t.name, "must be at most 200 characters");
      t.out->clear();
    }
  }
  f.runtime = Lower(r.Query("runtime"));
  if (!f.runtime.empty() && f.runtime != "python" && f.runtime != "javascript" &&
      f.runtime != "lua") {
    errors.Add("runtime", "must be one of python, javascript, lua");
  }
  f.compute_type = Upper(r.Query("compute_type"));
  if (!f.compute_type.empty() && f.compute_type != "CPU" && f.compute_type != "GPU") {
    errors.Add("compute_type", "must be one of CPU, GPU");
  }
  f.pricing = Lower(r.Query("pricing"));
  if (!f.pricing.empty() && f.pricing != "free" && f.pricing != "paid") {
    errors.Add("pricing", "must be one of free, paid");
  }
  return f;
}

}  // namespace

std::variant<v1::Problem, MarketFilters> ParseMarketFilters(const core::Request& request) {
  QueryErrors errors;
  MarketFilters filters = ReadFilters(request, errors);
  if (!errors.ok()) return errors.problem();
  return filters;
}

std::variant<v1::Problem, MarketQuery> ParseMarketQuery(const core::Request& request) {
  QueryErrors errors;
  MarketQuery query;
  query.filters = ReadFilters(request, errors);

  std::string sort = Lower(request.Query("sort", "relevance"));
  if (sort == "relevance") {
    query.order = query.filters.q.empty() ? ListOrder::kExecutions : ListOrder::kRelevance;
  } else if (sort == "rating") {
    query.order = ListOrder::kRating;
  } else if (sort == "executions") {
    query.order = ListOrder::kExecutions;
  } else {
    errors.Add("sort", "must be one of relevance, rating, executions");
  }

  v1::HttpResponse limit_problem;
  if (auto limit = core::ParseLimit(request, &limit_problem)) {
    query.limit = *limit;
  } else {
    errors.Add("limit", "must be an integer from 1 to 200");
  }

  if (errors.ok()) {
    auto cursor = ParseCursor(request, query.order);
    if (auto* problem = std::get_if<v1::Problem>(&cursor)) return *problem;
    query.after = std::get<std::optional<Position>>(cursor);
  }
  if (!errors.ok()) return errors.problem();
  return query;
}

std::string EncodePosition(ListOrder order, const Position& position) {
  return core::EncodeCursor(std::string(OrderName(order)) + "|" + position.key + "|" + position.id);
}

std::optional<Position> DecodePosition(std::string_view cursor, ListOrder order) {
  auto text = core::DecodeCursor(cursor);
  if (!text) return std::nullopt;
  std::string_view rest = *text;
  std::string_view name = OrderName(order);
  if (rest.substr(0, name.size()) != name || rest.substr(name.size(), 1) != "|") {
    return std::nullopt;
  }
  rest.remove_prefix(name.size() + 1);
  size_t bar = rest.find('|');
  if (bar == std::string_view::npos) return std::nullopt;
  Position p{std::string(rest.substr(0, bar)), std::string(rest.substr(bar + 1))};
  if (!IsKey(p.key, order) || !IsUuid(p.id) || Lower(p.id) != p.id) return std::nullopt;
  return p;
}

std::variant<v1::Problem, std::optional<Position>> ParseCursor(const core::Request& request,
                                                               ListOrder order) {
  std::string cursor = request.Query("cursor");
  if (cursor.empty()) return std::optional<Position>();
  auto position = DecodePosition(cursor, order);
  if (!position) {
    return core::ValidationProblem(
        "cursor", "is not a cursor of this list and order; start again without it");
  }
  return position;
}

}  // namespace toolgate::registry
