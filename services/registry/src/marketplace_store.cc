#include "toolgate/registry/marketplace_store.h"

#include <algorithm>
#include <charconv>

#include "store_sql.h"
#include "toolgate/base/crypto.h"

namespace toolgate::registry {
namespace {

// The filter a facet leaves out, so that it counts its own values under the other filters.
enum class Facet { kNone, kCategory, kSector, kRuntime, kComputeType, kTag, kCreator, kPricing };

// Listed functions `f` with their latest version `v`, matching filters except the one of
// `except`.
std::string ListedWhere(const MarketFilters& filters, SqlParams& params, Facet except,
                        const std::string& tsquery) {
  std::string where = "f.visibility = 'public'";
  if (!tsquery.empty()) where += " AND f.search @@ " + tsquery;
  auto add = [&](Facet facet, const std::string& value, const std::string& sql_with_param) {
    if (value.empty() || facet == except) return;
    std::string p = params.Add(value);
    std::string clause = sql_with_param;
    for (size_t at; (at = clause.find("?")) != std::string::npos;) clause.replace(at, 1, p);
    where += " AND " + clause;
  };
  add(Facet::kCategory, filters.category, "lower(f.category) = lower(?)");
  add(Facet::kSector, filters.sector, "lower(f.sector) = lower(?)");
  add(Facet::kRuntime, filters.runtime, "v.runtime = ?");
  add(Facet::kComputeType, filters.compute_type, "v.compute_type = ?");
  add(Facet::kTag, filters.tag,
      "EXISTS (SELECT 1 FROM unnest(f.tags) t WHERE lower(t) = lower(?))");
  add(Facet::kCreator, filters.creator, "(f.org_id = ? OR lower(f.org_name) = lower(?))");
  if (!filters.pricing.empty() && except != Facet::kPricing) {
    where +=
        filters.pricing == "free" ? " AND v.price_micro_usd = 0" : " AND v.price_micro_usd > 0";
  }
  return where;
}

// The parsed q ("" without one), whose placeholder is shared by the filter and the rank.
std::string TsQuery(const MarketFilters& filters, SqlParams& params) {
  if (filters.q.empty()) return "";
  return "websearch_to_tsquery('english', " + params.Add(filters.q) + ")";
}

std::string Listed() {
  return std::string("registry.functions f JOIN ") + kLatestVersion + " ON true";
}

// A double exactly, for PostgreSQL to read back as the same float8.
std::string ExactDouble(double value) {
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), value);
  return ec == std::errc() ? std::string(buf, end) : "0";
}

}  // namespace

Result<CardPage> MarketplaceStore::Search(const MarketQuery& query, const RatingPrior& prior,
                                          const std::string& viewer_user_id) {
  SqlParams params;
  std::string tsquery = TsQuery(query.filters, params);
  const std::string where = ListedWhere(query.filters, params, Facet::kNone, tsquery);
  auto counted =
      pool_.Exec("SELECT count(*) FROM " + Listed() + " WHERE " + where, params.params());
  if (!counted.ok()) return counted.status();

  // The page statement takes the filters' parameters and adds its own.
  const std::string viewer = params.Add(viewer_user_id);
  // Every key is a float8 or a bigint, which PostgreSQL prints exactly, so a cursor compares
  // equal to the key it was made from.
  std::string key, key_type = "float8";
  switch (query.order) {
    case ListOrder::kRelevance:
      // Cover density rank, plus 1 when the name matches: a function named after the query
      // ranks above every one that only mentions it.
      key = "(ts_rank_cd(f.search, " + tsquery + ") + CASE WHEN ts_filter(f.search, '{a}') @@ " +
            tsquery + " THEN 1 ELSE 0 END)::float8";
      break;
    case ListOrder::kRating: {
      // BayesianAverage (rating.h), in SQL so that pages can be cut by it.
      const std::string w = params.Add(std::to_string(prior.weight)) + "::float8";
      const std::string m = params.Add(ExactDouble(prior.mean)) + "::float8";
      key = "CASE WHEN f.rating_count = 0 THEN 0::float8 ELSE (" + w + " * " + m +
            " + f.rating_sum) / (" + w + " + f.rating_count) END";
      break;
    }
    default:
      key = "f.executions";
      key_type = "bigint";
      break;
  }
  std::string after;
  if (query.after) {
    const std::string k = params.Add(query.after->key) + "::" + key_type;
    const std::string id = params.Add(query.after->id) + "::uuid";
    after = " WHERE m.sort_key < " + k + " OR (m.sort_key = " + k + " AND m.fid > " + id + ")";
  }
  const std::string limit = params.Add(std::to_string(query.limit + 1));
  auto rows = pool_.Exec("SELECT m.* FROM (SELECT " + CardColumns(viewer) + ", " + key +
                             " AS sort_key, f.id AS fid FROM " + Listed() + " WHERE " + where +
                             ") m" + after + " ORDER BY m.sort_key DESC, m.fid LIMIT " + limit,
                         params.params());
  if (!rows.ok()) return rows.status();
  CardPage page;
  page.total = counted->Int(0, 0);
  const int n = std::min(rows->size(), query.limit);
  for (int r = 0; r < n; ++r) page.cards.push_back(ReadCard(*rows, r));
  if (Status week = AddWeekStats(pool_, page.cards); !week.ok()) return week;
  if (rows->size() > query.limit) {
    page.next = Position{rows->Str(n - 1, kCardColumns), rows->Str(n - 1, kCardColumns + 1)};
  }
  return page;
}

Result<Facets> MarketplaceStore::CountFacets(const MarketFilters& filters) {
  SqlParams params;
  const std::string tsquery = TsQuery(filters, params);
  struct Branch {
    const char* name;
    Facet facet;
    const char* value;  // SQL of the value, grouped on
    const char* label;  // SQL of the label: the value, or an aggregate
    const char* from;   // joined to the listed functions
    const char* where;  // added to the filters
  };
  static constexpr const char* kPricing =
      "CASE WHEN v.price_micro_usd = 0 THEN 'free' ELSE 'paid' END";
  static constexpr Branch kBranches[] = {
      {"category", Facet::kCategory, "f.category", "f.category", "", ""},
      {"sector", Facet::kSector, "f.sector", "f.sector", "", " AND f.sector <> ''"},
      {"runtime", Facet::kRuntime, "v.runtime", "v.runtime", "", ""},
      {"compute_type", Facet::kComputeType, "v.compute_type", "v.compute_type", "", ""},
      {"tags", Facet::kTag, "t.tag", "t.tag", " CROSS JOIN LATERAL unnest(f.tags) AS t(tag)", ""},
      {"creator", Facet::kCreator, "f.org_id", "max(f.org_name)", "", ""},
      {"pricing", Facet::kPricing, kPricing, kPricing, "", ""},
  };
  std::string sql = "SELECT 'total' AS facet, '' AS value, '' AS label, count(*) AS n FROM " +
                    Listed() + " WHERE " + ListedWhere(filters, params, Facet::kNone, tsquery);
  for (const Branch& b : kBranches) {
    sql += std::string(" UNION ALL (SELECT '") + b.name + "', " + b.value + ", " + b.label +
           ", count(*) FROM " + Listed() + b.from + " WHERE " +
           ListedWhere(filters, params, b.facet, tsquery) + b.where + " GROUP BY " + b.value;
    if (b.facet == Facet::kTag) {
      sql += " ORDER BY count(*) DESC, t.tag LIMIT " + std::to_string(kMaxTagFacets);
    }
    sql += ")";
  }
  auto rows =
      pool_.Exec("SELECT * FROM (" + sql + ") x ORDER BY facet, n DESC, value", params.params());
  if (!rows.ok()) return rows.status();
  Facets facets;
  for (int r = 0; r < rows->size(); ++r) {
    const std::string name = rows->Str(r, 0);
    if (name == "total") {
      facets.total = rows->Int(r, 3);
      continue;
    }
    std::vector<FacetCount>* into = name == "category"       ? &facets.category
                                    : name == "sector"       ? &facets.sector
                                    : name == "runtime"      ? &facets.runtime
                                    : name == "compute_type" ? &facets.compute_type
                                    : name == "tags"         ? &facets.tags
                                    : name == "creator"      ? &facets.creator
                                                             : &facets.pricing;
    into->push_back(FacetCount{rows->Str(r, 1), rows->Str(r, 2), rows->Int(r, 3)});
  }
  return facets;
}

Result<std::vector<Card>> MarketplaceStore::Trending(int limit, const std::string& viewer_user_id) {
  auto rows = pool_.Exec(
      "SELECT " + CardColumns("$1") +
          " FROM (SELECT function_id, sum(executions) AS recent FROM registry.daily_executions "
          "  WHERE day > (now() AT TIME ZONE 'UTC')::date - 7 GROUP BY function_id) t "
          "JOIN registry.functions f ON f.id = t.function_id JOIN " +
          kLatestVersion +
          " ON true WHERE f.visibility = 'public' "
          "ORDER BY t.recent DESC, f.executions DESC, f.id LIMIT $2",
      {viewer_user_id, std::to_string(limit)});
  if (!rows.ok()) return rows.status();
  std::vector<Card> out;
  for (int r = 0; r < rows->size(); ++r) out.push_back(ReadCard(*rows, r));
  if (Status week = AddWeekStats(pool_, out); !week.ok()) return week;
  return out;
}

Result<RatingPrior> MarketplaceStore::Prior() {
  auto rows = pool_.Exec(
      "SELECT coalesce(sum(f.rating_sum), 0)::bigint, coalesce(sum(f.rating_count), 0)::bigint "
      "FROM " +
      Listed() + " WHERE f.visibility = 'public' AND f.rating_count > 0");
  if (!rows.ok()) return rows.status();
  return PriorFrom(rows->Int(0, 0), rows->Int(0, 1));
}

Result<std::vector<RatedFunction>> MarketplaceStore::RatedFunctions() {
  auto rows = pool_.Exec("SELECT f.id::text, f.rating_sum, f.rating_count FROM " + Listed() +
                         " WHERE f.visibility = 'public' AND f.rating_count > 0");
  if (!rows.ok()) return rows.status();
  std::vector<RatedFunction> out;
  for (int r = 0; r < rows->size(); ++r) {
    out.push_back(RatedFunction{rows->Str(r, 0), rows->Int(r, 1), rows->Int(r, 2)});
  }
  return out;
}

Result<std::vector<Card>> MarketplaceStore::Cards(const std::vector<std::string>& ids,
                                                  const std::string& viewer_user_id) {
  // UUIDs need no quoting inside a PostgreSQL array literal.
  std::string array = "{";
  for (const auto& id : ids) {
    if (!IsUuid(id)) continue;
    if (array.size() > 1) array += ',';
    array += id;
  }
  array += '}';
  auto rows = pool_.Exec("SELECT " + CardColumns("$1") +
                             " FROM unnest($2::uuid[]) WITH ORDINALITY AS i(id, n) "
                             "JOIN registry.functions f ON f.id = i.id JOIN " +
                             kLatestVersion + " ON true WHERE f.visibility = 'public' ORDER BY i.n",
                         {viewer_user_id, array});
  if (!rows.ok()) return rows.status();
  std::vector<Card> out;
  for (int r = 0; r < rows->size(); ++r) out.push_back(ReadCard(*rows, r));
  if (Status week = AddWeekStats(pool_, out); !week.ok()) return week;
  return out;
}

}  // namespace toolgate::registry
