// SQL pieces shared by the registry's stores: reading cards, building parameter lists,
// reading arrays. Internal to the registry library.
#pragma once

#include <string>
#include <string_view>

#include "toolgate/pg/pg.h"
#include "toolgate/registry/card.h"

// Timestamps are read as epoch milliseconds; the views format them (RFC 3339).
#define TG_EPOCH_MS(column) "floor(extract(epoch FROM " column ") * 1000)::bigint"
// A timestamp as epoch microseconds, its full precision: the exact key of a keyset position.
#define TG_EPOCH_US(column) "(extract(epoch FROM " column ") * 1000000)::bigint"

namespace toolgate::registry {

// The latest version of function f as `v` (runtime, compute_type, price_micro_usd: what a call
// on "latest" costs, egress): write "JOIN " (listed functions only) or "LEFT JOIN " before it and
// " ON true" after it.
inline constexpr const char* kLatestVersion =
    "LATERAL (SELECT runtime, compute_type, price_micro_usd, egress FROM registry.versions "
    "WHERE function_id = f.id "
    "ORDER BY p1 DESC, p2 DESC, p3 DESC, p4 DESC LIMIT 1) v";

// The select list of a card over `f` and `v`; viewer_param is the placeholder ("$3") of the
// user whose favorites set `favorite`. kCardColumns columns.
std::string CardColumns(std::string_view viewer_param);
inline constexpr int kCardColumns = 17;

// The card in row r, columns 0 to kCardColumns - 1.
Card ReadCard(const pg::Rows& rows, int r);

// Collects the parameters of a statement built piece by piece: Add returns the placeholder.
class SqlParams {
 public:
  std::string Add(std::string value) {
    params_.emplace_back(std::move(value));
    return "$" + std::to_string(params_.size());
  }
  const pg::Params& params() const { return params_; }

 private:
  pg::Params params_;
};

// Reads a JSON array of strings (array_to_json(...)::text); [] when malformed.
std::vector<std::string> StringsFromJson(const std::string& text);

}  // namespace toolgate::registry
