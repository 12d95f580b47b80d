#include "toolgate/registry/ratings_store.h"

#include <algorithm>

#include "store_sql.h"

namespace toolgate::registry {
namespace {

constexpr const char* kRatingColumns =
    "function_id::text, user_id, org_name, stars, review, " TG_EPOCH_MS(
        "created_at") ", " TG_EPOCH_MS("updated_at");

RatingRecord ReadRating(const pg::Rows& rows, int r) {
  RatingRecord rating;
  rating.function_id = rows.Str(r, 0);
  rating.user_id = rows.Str(r, 1);
  rating.org_name = rows.Str(r, 2);
  rating.stars = static_cast<int>(rows.Int(r, 3));
  rating.review = rows.Str(r, 4);
  rating.created_at_ms = rows.Int(r, 5);
  rating.updated_at_ms = rows.Int(r, 6);
  return rating;
}

}  // namespace

Result<bool> RatingsStore::HasRun(const std::string& org_id, const std::string& function_id) {
  auto rows = pool_.Exec("SELECT 1 FROM registry.runs WHERE org_id = $1 AND function_id = $2",
                         {org_id, function_id});
  if (!rows.ok()) return rows.status();
  return !rows->empty();
}

Result<RatingsStore::PutResult> RatingsStore::Put(const std::string& function_id,
                                                  const v1::Principal& rater,
                                                  const RatingInput& input) {
  PutResult out;
  Status s = pool_.Transaction([&](pg::Conn& conn) -> Status {
    // The function's row lock orders concurrent ratings of it, so the totals recomputed below
    // see every rating committed before.
    auto locked =
        conn.Exec("SELECT 1 FROM registry.functions WHERE id = $1 FOR UPDATE", {function_id});
    if (!locked.ok()) return locked.status();
    if (locked->empty()) return Status::NotFound("no such function");
    auto existing =
        conn.Exec("SELECT 1 FROM registry.ratings WHERE function_id = $1 AND user_id = $2",
                  {function_id, rater.user_id()});
    if (!existing.ok()) return existing.status();
    out.created = existing->empty();
    auto rows = conn.Exec(
        std::string("INSERT INTO registry.ratings (function_id, user_id, org_id, org_name, "
                    "stars, review) VALUES ($1, $2, $3, $4, $5, $6) "
                    "ON CONFLICT (function_id, user_id) DO UPDATE SET org_id = EXCLUDED.org_id, "
                    "org_name = EXCLUDED.org_name, stars = EXCLUDED.stars, "
                    "review = EXCLUDED.review, updated_at = now() RETURNING ") +
            kRatingColumns,
        {function_id, rater.user_id(), rater.org_id(), rater.org_name(),
         std::to_string(input.stars), input.review});
    if (!rows.ok()) return rows.status();
    out.rating = ReadRating(*rows, 0);
    auto totals = conn.Exec(
        "UPDATE registry.functions SET (rating_sum, rating_count) = "
        "(SELECT coalesce(sum(stars), 0), count(*) FROM registry.ratings WHERE function_id = $1) "
        "WHERE id = $1",
        {function_id});
    return totals.status();
  });
  if (!s.ok()) return s;
  return out;
}

Result<RatingPage> RatingsStore::List(const std::string& function_id, int limit,
                                      const std::optional<Position>& after) {
  SqlParams params;
  const std::string fn = params.Add(function_id);
  std::string keyset;
  if (after) {
    const std::string k = params.Add(after->key) + "::bigint";
    const std::string user = params.Add(after->id);
    keyset = " AND (" TG_EPOCH_US("created_at") " < " + k +
             " OR (" TG_EPOCH_US("created_at") " = " + k + " AND user_id COLLATE \"C\" > " + user +
             "))";
  }
  const std::string n = params.Add(std::to_string(limit + 1));
  auto rows = pool_.Exec(std::string("SELECT ") + kRatingColumns + ", " TG_EPOCH_US("created_at") +
                             " FROM registry.ratings WHERE function_id = " + fn + keyset +
                             " ORDER BY created_at DESC, user_id COLLATE \"C\" LIMIT " + n,
                         params.params());
  if (!rows.ok()) return rows.status();
  RatingPage page;
  const int shown = std::min(rows->size(), limit);
  for (int r = 0; r < shown; ++r) page.items.push_back(ReadRating(*rows, r));
  if (rows->size() > limit) {
    page.next = Position{rows->Str(shown - 1, 7), rows->Str(shown - 1, 1)};
  }
  return page;
}

}  // namespace toolgate::registry
