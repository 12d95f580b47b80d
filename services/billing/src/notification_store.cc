#include "toolgate/billing/notification_store.h"

#include <algorithm>
#include <utility>

#include "toolgate/base/time.h"

namespace toolgate::billing {
namespace {

// The columns every read answers, in this order.
constexpr const char* kColumns =
    "url, array_to_string(events, ','), secret, "
    "(extract(epoch from created_at) * 1000)::bigint, "
    "(extract(epoch from updated_at) * 1000)::bigint";

std::vector<std::string> SplitEvents(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < text.size()) {
    const size_t comma = text.find(',', start);
    out.push_back(text.substr(start, comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

// Event names hold no comma (NotificationEventTypes), so a comma joins them for PostgreSQL's
// string_to_array.
std::string JoinEvents(const std::vector<std::string>& events) {
  std::string out;
  for (const std::string& e : events) {
    if (!out.empty()) out += ',';
    out += e;
  }
  return out;
}

NotificationEndpoint EndpointAt(const std::string& org_id, const pg::Rows& rows, int row) {
  NotificationEndpoint e;
  e.org_id = org_id;
  e.url = rows.Str(row, 0);
  e.events = SplitEvents(rows.Str(row, 1));
  e.secret = rows.Str(row, 2);
  e.created_at_ms = rows.Int(row, 3);
  e.updated_at_ms = rows.Int(row, 4);
  return e;
}

}  // namespace

const std::vector<std::string>& NotificationEventTypes() {
  static const std::vector<std::string> kTypes = {std::string(kBudgetThresholdEvent)};
  return kTypes;
}

bool NotificationEndpoint::Subscribes(std::string_view event) const {
  return std::find(events.begin(), events.end(), event) != events.end();
}

Result<std::optional<NotificationEndpoint>> NotificationStore::Get(const std::string& org_id) {
  auto rows = pool_.Exec(
      std::string("SELECT ") + kColumns + " FROM billing.notification_endpoints WHERE org_id = $1",
      {org_id});
  if (!rows.ok()) return rows.status();
  if (rows->empty()) return std::optional<NotificationEndpoint>();
  return std::optional<NotificationEndpoint>(EndpointAt(org_id, *rows, 0));
}

Result<NotificationStore::PutOutcome> NotificationStore::Put(const std::string& org_id,
                                                             const std::string& url,
                                                             const std::vector<std::string>& events,
                                                             const std::string& new_secret) {
  // xmax is 0 on a row this statement inserted, not on one it updated.
  auto rows = pool_.Exec(
      std::string("INSERT INTO billing.notification_endpoints (org_id, url, events, secret) "
                  "VALUES ($1, $2, string_to_array($3, ','), $4) ON CONFLICT (org_id) DO UPDATE "
                  "SET url = excluded.url, events = excluded.events, updated_at = now() "
                  "RETURNING ") +
          kColumns + ", (xmax = 0)",
      {org_id, url, JoinEvents(events), new_secret});
  if (!rows.ok()) return rows.status();
  if (rows->empty()) return Status::Internal("notification endpoint not stored");
  PutOutcome out;
  out.endpoint = EndpointAt(org_id, *rows, 0);
  out.created = rows->Str(0, 5) == "t";
  return out;
}

Result<bool> NotificationStore::Delete(const std::string& org_id) {
  auto rows = pool_.Exec(
      "DELETE FROM billing.notification_endpoints WHERE org_id = $1 RETURNING org_id", {org_id});
  if (!rows.ok()) return rows.status();
  return !rows->empty();
}

Result<std::optional<NotificationEndpoint>> NotificationStore::RotateSecret(
    const std::string& org_id, const std::string& new_secret) {
  auto rows = pool_.Exec(std::string("UPDATE billing.notification_endpoints SET secret = $2, "
                                     "updated_at = now() WHERE org_id = $1 RETURNING ") +
                             kColumns,
                         {org_id, new_secret});
  if (!rows.ok()) return rows.status();
  if (rows->empty()) return std::optional<NotificationEndpoint>();
  return std::optional<NotificationEndpoint>(EndpointAt(org_id, *rows, 0));
}

NotificationEndpointCache::NotificationEndpointCache(NotificationStore& store, Options options)
    : store_(store), options_(options), cache_(options.capacity) {}

Result<std::optional<NotificationEndpoint>> NotificationEndpointCache::Get(
    const std::string& org_id) {
  const int64_t now = MonotonicUs() / 1000;
  if (auto cached = cache_.Get(org_id, now)) return **cached;
  const uint64_t generation = cache_.generation();
  auto loaded = store_.Get(org_id);
  if (!loaded.ok()) return loaded.status();
  cache_.Put(org_id, std::make_shared<const std::optional<NotificationEndpoint>>(*loaded),
             now + options_.ttl_ms, generation);
  return loaded;
}

void NotificationEndpointCache::Invalidate(const std::string& org_id) {
  cache_.Erase(org_id);
}

}  // namespace toolgate::billing
