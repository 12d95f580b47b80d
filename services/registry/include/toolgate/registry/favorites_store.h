// FavoritesStore: each user's favorite functions (registry.favorites). Favorites belong to the
// user, not to the organization.
//
// Failures: Unavailable when PostgreSQL cannot be reached, Internal otherwise. Thread-safe.
#pragma once

#include <optional>
#include <string>

#include "toolgate/pg/pg.h"
#include "toolgate/registry/card.h"
#include "toolgate/registry/marketplace_query.h"

namespace toolgate::registry {

class FavoritesStore {
 public:
  // pool must outlive the store.
  explicit FavoritesStore(pg::Pool& pool) : pool_(pool) {}

  // Makes function_id (an existing function) a favorite of user_id; adding it again keeps the
  // first time it was added.
  Status Add(const std::string& user_id, const std::string& function_id);
  // Forgets it; removing what is not a favorite is not an error.
  Status Remove(const std::string& user_id, const std::string& function_id);
  // One page of user_id's favorites that are still visible to org_id (public, or its own),
  // most recently added first; every card has favorite set.
  Result<CardPage> List(const std::string& user_id, const std::string& org_id, int limit,
                        const std::optional<Position>& after);

 private:
  pg::Pool& pool_;
};

}  // namespace toolgate::registry
