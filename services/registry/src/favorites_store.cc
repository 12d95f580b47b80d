#include "toolgate/registry/favorites_store.h"

#include <algorithm>

#include "store_sql.h"

namespace toolgate::registry {

Status FavoritesStore::Add(const std::string& user_id, const std::string& function_id) {
  auto rows = pool_.Exec(
      "INSERT INTO registry.favorites (user_id, function_id) VALUES ($1, $2) "
      "ON CONFLICT (user_id, function_id) DO NOTHING",
      {user_id, function_id});
  return rows.status();
}

Status FavoritesStore::Remove(const std::string& user_id, const std::string& function_id) {
  auto rows = pool_.Exec("DELETE FROM registry.favorites WHERE user_id = $1 AND function_id = $2",
                         {user_id, function_id});
  return rows.status();
}

Result<CardPage> FavoritesStore::List(const std::string& user_id, const std::string& org_id,
                                      int limit, const std::optional<Position>& after) {
  SqlParams params;
  const std::string user = params.Add(user_id);
  const std::string org = params.Add(org_id);
  std::string keyset;
  if (after) {
    const std::string k = params.Add(after->key) + "::bigint";
    const std::string id = params.Add(after->id) + "::uuid";
    keyset = " AND (" TG_EPOCH_US("fav.created_at") " < " + k +
             " OR (" TG_EPOCH_US("fav.created_at") " = " + k + " AND f.id > " + id + "))";
  }
  const std::string n = params.Add(std::to_string(limit + 1));
  auto rows = pool_.Exec("SELECT " + CardColumns(user) + ", " TG_EPOCH_US("fav.created_at") +
                             ", f.id::text FROM registry.favorites fav "
                             "JOIN registry.functions f ON f.id = fav.function_id LEFT JOIN " +
                             kLatestVersion + " ON true WHERE fav.user_id = " + user +
                             " AND (f.visibility = 'public' OR f.org_id = " + org + ")" + keyset +
                             " ORDER BY fav.created_at DESC, f.id LIMIT " + n,
                         params.params());
  if (!rows.ok()) return rows.status();
  CardPage page;
  const int shown = std::min(rows->size(), limit);
  for (int r = 0; r < shown; ++r) page.cards.push_back(ReadCard(*rows, r));
  if (Status week = AddWeekStats(pool_, page.cards); !week.ok()) return week;
  if (rows->size() > limit) {
    page.next =
        Position{rows->Str(shown - 1, kCardColumns), rows->Str(shown - 1, kCardColumns + 1)};
  }
  return page;
}

}  // namespace toolgate::registry
