// RatingsStore: ratings of functions (registry.ratings), one per user and function, and the
// record of which organizations have run which functions (registry.runs), which decides who
// may rate.
//
// Failures: Unavailable when PostgreSQL cannot be reached, Internal otherwise. Thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "toolgate/pg/pg.h"
#include "toolgate/registry/marketplace_query.h"
#include "toolgate/registry/rating.h"
#include "toolgate/v1/toolgate.pb.h"

namespace toolgate::registry {

struct RatingRecord {
  std::string function_id;
  std::string user_id;
  std::string org_name;  // the rater's organization when it last rated
  int stars = 0;
  std::string review;
  int64_t created_at_ms = 0;
  int64_t updated_at_ms = 0;
};

struct RatingPage {
  std::vector<RatingRecord> items;
  std::optional<Position> next;  // nullopt on the last page
};

class RatingsStore {
 public:
  // pool must outlive the store.
  explicit RatingsStore(pg::Pool& pool) : pool_(pool) {}

  // Whether an execution of function_id by org_id has been recorded.
  Result<bool> HasRun(const std::string& org_id, const std::string& function_id);

  struct PutResult {
    RatingRecord rating;
    bool created = false;  // false: it replaced the user's earlier rating
  };
  // Sets rater's rating of function_id (an existing function) and the function's rating
  // totals, in one transaction. rater must have a user_id.
  Result<PutResult> Put(const std::string& function_id, const v1::Principal& rater,
                        const RatingInput& input);

  // One page of function_id's ratings, newest first by when each was first given (an edit
  // keeps its place, so paging is stable).
  Result<RatingPage> List(const std::string& function_id, int limit,
                          const std::optional<Position>& after);

 private:
  pg::Pool& pool_;
};

}  // namespace toolgate::registry
