#include "toolgate/auth/key_store.h"

#include <algorithm>
#include <charconv>

#include "toolgate/base/crypto.h"

namespace toolgate::auth {
namespace {

// Scopes cross as one comma-separated string; scope names never contain a comma.
std::vector<std::string> SplitScopes(std::string_view joined) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < joined.size()) {
    size_t comma = joined.find(',', start);
    if (comma == std::string_view::npos) comma = joined.size();
    out.emplace_back(joined.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

std::string JoinScopes(const std::vector<std::string>& scopes) {
  std::string out;
  for (const auto& s : scopes) {
    if (!out.empty()) out += ',';
    out += s;
  }
  return out;
}

// The columns of a KeyListing, in the order ReadListing expects; timestamps as epoch ms.
constexpr const char* kListingColumns =
    "id::text, name, prefix, array_to_string(scopes, ','), "
    "floor(extract(epoch FROM expires_at) * 1000)::bigint, "
    "floor(extract(epoch FROM created_at) * 1000)::bigint, "
    "floor(extract(epoch FROM last_used_at) * 1000)::bigint, "
    "revoked_at IS NOT NULL";

KeyListing ReadListing(const pg::Rows& rows, int row) {
  KeyListing k;
  k.id = rows.Str(row, 0);
  k.name = rows.Str(row, 1);
  k.prefix = rows.Str(row, 2);
  k.scopes = SplitScopes(rows.Str(row, 3));
  k.expires_at_ms = rows.Int(row, 4);
  k.created_at_ms = rows.Int(row, 5);
  if (!rows.IsNull(row, 6)) k.last_used_at_ms = rows.Int(row, 6);
  k.revoked = rows.Bool(row, 7);
  return k;
}

// A list position is "<created_at in epoch microseconds>_<id>", the keyset of the ordering.
struct Position {
  std::string created_at_us;
  std::string id;
};

std::optional<Position> ParsePosition(std::string_view text) {
  size_t sep = text.find('_');
  if (sep == std::string_view::npos) return std::nullopt;
  std::string_view us = text.substr(0, sep), id = text.substr(sep + 1);
  int64_t value = 0;
  auto [end, ec] = std::from_chars(us.data(), us.data() + us.size(), value);
  if (ec != std::errc() || end != us.data() + us.size() || !IsUuid(id)) return std::nullopt;
  return Position{std::string(us), std::string(id)};
}

}  // namespace

Result<std::optional<KeyRecord>> KeyStore::FindByHash(std::string_view key_sha256) {
  // An API key, or an OAuth access token (docs/oauth.md): both are presented the same way and
  // looked up by their hash; a token carries its grant's organization, scopes and binding.
  auto rows = pool_.Exec(
      "SELECT k.id::text, k.org_id::text, o.name, coalesce(k.user_id::text, ''), "
      "array_to_string(k.scopes, ','), floor(extract(epoch FROM k.expires_at) * 1000)::bigint, "
      "k.revoked_at IS NOT NULL, '', '', '', 0::bigint "
      "FROM auth.api_keys k JOIN auth.organizations o ON o.id = k.org_id "
      "WHERE k.key_sha256 = decode($1, 'hex') "
      "UNION ALL "
      "SELECT '', g.org_id::text, o.name, g.user_id::text, array_to_string(g.scopes, ','), "
      "floor(extract(epoch FROM t.expires_at) * 1000)::bigint, "
      "t.revoked_at IS NOT NULL OR g.revoked_at IS NOT NULL, g.id::text, g.client_name, "
      "g.resource_path, coalesce(g.cap_micro_usd, 0) "
      "FROM auth.oauth_tokens t JOIN auth.oauth_grants g ON g.id = t.grant_id "
      "JOIN auth.organizations o ON o.id = g.org_id "
      "WHERE t.token_sha256 = decode($1, 'hex') AND t.kind = 'access'",
      {HexEncode(key_sha256)});
  if (!rows.ok()) return rows.status();
  if (rows->empty()) return std::optional<KeyRecord>();
  KeyRecord r;
  r.key_id = rows->Str(0, 0);
  r.org_id = rows->Str(0, 1);
  r.org_name = rows->Str(0, 2);
  r.user_id = rows->Str(0, 3);
  r.scopes = SplitScopes(rows->Str(0, 4));
  r.expires_at_ms = rows->Int(0, 5);
  r.revoked = rows->Bool(0, 6);
  r.grant_id = rows->Str(0, 7);
  r.client_name = rows->Str(0, 8);
  r.resource_path = rows->Str(0, 9);
  r.grant_cap_micro_usd = rows->Int(0, 10);
  return std::optional<KeyRecord>(std::move(r));
}

Result<KeyListing> KeyStore::Insert(const NewKey& key) {
  auto rows = pool_.Exec(
      std::string("INSERT INTO auth.api_keys "
                  "(id, org_id, user_id, name, prefix, key_sha256, scopes, expires_at) "
                  "VALUES ($1, $2, $3, $4, $5, decode($6, 'hex'), string_to_array($7, ','), "
                  "timestamptz 'epoch' + $8::bigint * interval '1 millisecond') RETURNING ") +
          kListingColumns,
      {NewUuid(), key.org_id, key.user_id.empty() ? pg::Param() : pg::Param(key.user_id), key.name,
       key.prefix, HexEncode(key.key_sha256), JoinScopes(key.scopes),
       std::to_string(key.expires_at_ms)});
  if (!rows.ok()) return rows.status();
  return ReadListing(*rows, 0);
}

Result<KeyPage> KeyStore::List(std::string_view org_id, int limit, std::string_view after) {
  pg::Params params = {std::string(org_id), std::nullopt, std::nullopt, std::to_string(limit + 1)};
  if (!after.empty()) {
    auto position = ParsePosition(after);
    if (!position) return Status::InvalidArgument("unknown list position");
    params[1] = position->created_at_us;
    params[2] = position->id;
  }
  // One row beyond the page tells whether another page follows.
  auto rows = pool_.Exec(
      std::string("SELECT ") + kListingColumns +
          ", (extract(epoch FROM created_at) * 1000000)::bigint "
          "FROM auth.api_keys WHERE org_id = $1::uuid AND ($2::bigint IS NULL OR "
          "(created_at, id) < (timestamptz 'epoch' + $2::bigint * interval '1 microsecond', "
          "$3::uuid)) ORDER BY created_at DESC, id DESC LIMIT $4::int",
      params);
  if (!rows.ok()) return rows.status();
  KeyPage page;
  int n = std::min(rows->size(), limit);
  for (int i = 0; i < n; ++i) page.items.push_back(ReadListing(*rows, i));
  if (rows->size() > limit) {
    page.next_after = rows->Str(n - 1, 8) + "_" + page.items.back().id;
  }
  return page;
}

Result<std::optional<std::string>> KeyStore::Revoke(std::string_view org_id,
                                                    std::string_view key_id) {
  auto rows = pool_.Exec(
      "UPDATE auth.api_keys SET revoked_at = coalesce(revoked_at, now()) "
      "WHERE id = $1::uuid AND org_id = $2::uuid RETURNING encode(key_sha256, 'base64')",
      {std::string(key_id), std::string(org_id)});
  if (!rows.ok()) return rows.status();
  if (rows->empty()) return std::optional<std::string>();
  std::string sha256;
  if (!Base64Decode(rows->Str(0, 0), &sha256)) {
    return Status::Internal("api_keys.key_sha256 did not round-trip through base64");
  }
  return std::optional<std::string>(std::move(sha256));
}

Status KeyStore::TouchLastUsed(const std::unordered_map<std::string, int64_t>& last_used_ms) {
  if (last_used_ms.empty()) return Status::Ok();
  // Two array literals; the ids are UUIDs read from this schema and the times integers, so
  // neither can carry a brace, comma or quote.
  std::string ids = "{", times = "{";
  for (const auto& [id, ms] : last_used_ms) {
    if (ids.size() > 1) {
      ids += ',';
      times += ',';
    }
    ids += id;
    times += std::to_string(ms);
  }
  ids += '}';
  times += '}';
  return pool_
      .Exec(
          "UPDATE auth.api_keys k "
          "SET last_used_at = greatest(k.last_used_at, "
          "timestamptz 'epoch' + u.ms * interval '1 millisecond') "
          "FROM unnest($1::uuid[], $2::bigint[]) AS u(id, ms) WHERE k.id = u.id",
          {ids, times})
      .status();
}

}  // namespace toolgate::auth
