#include "toolgate/auth/oauth_store.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "toolgate/base/crypto.h"
#include "toolgate/base/json.h"
#include "toolgate/base/json_writer.h"

namespace toolgate::auth {
namespace {

// Lists cross as JSON arrays: a redirect URI may hold any character but a control one.
std::string JsonArray(const std::vector<std::string>& values) {
  JsonWriter w;
  w.BeginArray();
  for (const auto& v : values) w.String(v);
  w.EndArray();
  return w.Take();
}

std::vector<std::string> FromJsonArray(const std::string& text) {
  std::vector<std::string> out;
  auto doc = ParseJson(text);
  if (!doc.ok()) return out;
  simdjson::dom::array array;
  if (doc->root.get_array().get(array)) return out;
  for (auto element : array) {
    std::string_view s;
    if (!element.get_string().get(s)) out.emplace_back(s);
  }
  return out;
}

constexpr const char* kArrayParam = "ARRAY(SELECT jsonb_array_elements_text(%s::jsonb))";

std::string ArrayParam(const char* placeholder) {
  std::string out = kArrayParam;
  out.replace(out.find("%s"), 2, placeholder);
  return out;
}

pg::Param OptionalText(const std::string& s) {
  return s.empty() ? pg::Param() : pg::Param(s);
}

std::string Hex(std::string_view bytes) {
  return HexEncode(bytes);
}

// What encode(..., 'hex') gave back, as raw bytes.
std::string Unhex(const std::string& hex) {
  std::string raw;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    raw += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
  }
  return raw;
}

// The columns of a Grant, in the order ReadGrant expects (g: oauth_grants, o: organizations).
constexpr const char* kGrantColumns =
    "g.id::text, g.user_id::text, g.org_id::text, o.name, g.client_id, g.client_name, "
    "coalesce(g.logo_uri, ''), g.redirect_uri, g.resource, g.resource_path, "
    "array_to_json(g.scopes)::text, g.refresh_allowed, g.cap_micro_usd, "
    "floor(extract(epoch FROM g.created_at) * 1000)::bigint, g.revoked_at IS NOT NULL";

Grant ReadGrant(const pg::Rows& rows, int row, int first = 0) {
  Grant g;
  int c = first;
  g.id = rows.Str(row, c++);
  g.user_id = rows.Str(row, c++);
  g.org_id = rows.Str(row, c++);
  g.org_name = rows.Str(row, c++);
  g.client_id = rows.Str(row, c++);
  g.client_name = rows.Str(row, c++);
  g.logo_uri = rows.Str(row, c++);
  g.redirect_uri = rows.Str(row, c++);
  g.resource = rows.Str(row, c++);
  g.resource_path = rows.Str(row, c++);
  g.scopes = FromJsonArray(rows.Str(row, c++));
  g.refresh_allowed = rows.Bool(row, c++);
  if (!rows.IsNull(row, c)) g.cap_micro_usd = rows.Int(row, c);
  ++c;
  g.created_at_ms = rows.Int(row, c++);
  g.revoked = rows.Bool(row, c++);
  return g;
}

std::string GrantSelect(const std::string& where) {
  return std::string("SELECT ") + kGrantColumns +
         " FROM auth.oauth_grants g JOIN auth.organizations o ON o.id = g.org_id WHERE " + where;
}

}  // namespace

Result<std::vector<OAuthClient>> LoadPreRegisteredClients(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::InvalidArgument("cannot read " + path);
  std::stringstream text;
  text << in.rdbuf();
  auto doc = ParseJson(text.str());
  simdjson::dom::object root;
  simdjson::dom::array list;
  if (!doc.ok() || doc->root.get_object().get(root) || root["clients"].get_array().get(list)) {
    return Status::InvalidArgument(path + ": expected {\"clients\": [...]}");
  }
  std::vector<OAuthClient> out;
  for (auto element : list) {
    simdjson::dom::object obj;
    if (element.get_object().get(obj))
      return Status::InvalidArgument(path + ": a client is not an object");
    OAuthClient c;
    c.kind = "pre_registered";
    std::string secret_hex;
    if (GetString(obj, "client_id", &c.client_id) != Field::kOk || c.client_id.empty() ||
        c.client_id.size() > 200) {
      return Status::InvalidArgument(path + ": every client needs a client_id");
    }
    const std::string who = path + ": client " + c.client_id + ": ";
    if (GetString(obj, "client_name", &c.client_name) != Field::kOk || c.client_name.empty()) {
      return Status::InvalidArgument(who + "client_name is required");
    }
    GetString(obj, "logo_uri", &c.logo_uri);
    GetString(obj, "client_uri", &c.client_uri);
    if (GetStringArray(obj, "redirect_uris", &c.redirect_uris) != Field::kOk ||
        c.redirect_uris.empty()) {
      return Status::InvalidArgument(who + "redirect_uris is required");
    }
    if (GetStringArray(obj, "grant_types", &c.grant_types) != Field::kOk) {
      c.grant_types = {"authorization_code", "refresh_token"};
    }
    if (GetString(obj, "client_secret_sha256", &secret_hex) == Field::kOk) {
      if (secret_hex.size() != 64 ||
          secret_hex.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos) {
        return Status::InvalidArgument(who + "client_secret_sha256 must be 64 hex digits");
      }
      c.client_secret_sha256 = Unhex(secret_hex);
    }
    if (GetString(obj, "token_endpoint_auth_method", &c.token_endpoint_auth_method) != Field::kOk) {
      c.token_endpoint_auth_method =
          c.client_secret_sha256.empty() ? "none" : "client_secret_basic";
    }
    out.push_back(std::move(c));
  }
  return out;
}

bool OAuthClient::AllowsRefresh() const {
  return std::find(grant_types.begin(), grant_types.end(), "refresh_token") != grant_types.end();
}

Status OAuthStore::InsertClient(const OAuthClient& c) {
  return pool_
      .Exec(
          "INSERT INTO auth.oauth_clients (client_id, kind, client_name, logo_uri, client_uri, "
          "redirect_uris, grant_types, token_endpoint_auth_method, client_secret_sha256) "
          "VALUES ($1, $2, $3, $4, $5, " +
              ArrayParam("$6") + ", " + ArrayParam("$7") + ", $8, decode($9, 'hex'))",
          {c.client_id, c.kind, c.client_name, OptionalText(c.logo_uri), OptionalText(c.client_uri),
           JsonArray(c.redirect_uris), JsonArray(c.grant_types), c.token_endpoint_auth_method,
           c.client_secret_sha256.empty() ? pg::Param() : pg::Param(Hex(c.client_secret_sha256))})
      .status();
}

Status OAuthStore::UpsertPreRegisteredClient(const OAuthClient& c) {
  return pool_
      .Exec(
          "INSERT INTO auth.oauth_clients (client_id, kind, client_name, logo_uri, client_uri, "
          "redirect_uris, grant_types, token_endpoint_auth_method, client_secret_sha256) "
          "VALUES ($1, 'pre_registered', $2, $3, $4, " +
              ArrayParam("$5") + ", " + ArrayParam("$6") +
              ", $7, decode($8, 'hex')) ON CONFLICT (client_id) DO UPDATE SET "
              "kind = 'pre_registered', client_name = EXCLUDED.client_name, "
              "logo_uri = EXCLUDED.logo_uri, client_uri = EXCLUDED.client_uri, "
              "redirect_uris = EXCLUDED.redirect_uris, grant_types = EXCLUDED.grant_types, "
              "token_endpoint_auth_method = EXCLUDED.token_endpoint_auth_method, "
              "client_secret_sha256 = EXCLUDED.client_secret_sha256",
          {c.client_id, c.client_name, OptionalText(c.logo_uri), OptionalText(c.client_uri),
           JsonArray(c.redirect_uris), JsonArray(c.grant_types), c.token_endpoint_auth_method,
           c.client_secret_sha256.empty() ? pg::Param() : pg::Param(Hex(c.client_secret_sha256))})
      .status();
}

Result<std::optional<OAuthClient>> OAuthStore::FindClient(std::string_view client_id) {
  auto rows = pool_.Exec(
      "SELECT client_id, kind, client_name, coalesce(logo_uri, ''), coalesce(client_uri, ''), "
      "array_to_json(redirect_uris)::text, array_to_json(grant_types)::text, "
      "token_endpoint_auth_method, coalesce(encode(client_secret_sha256, 'hex'), '') "
      "FROM auth.oauth_clients WHERE client_id = $1",
      {std::string(client_id)});
  if (!rows.ok()) return rows.status();
  if (rows->empty()) return std::optional<OAuthClient>();
  OAuthClient c;
  c.client_id = rows->Str(0, 0);
  c.kind = rows->Str(0, 1);
  c.client_name = rows->Str(0, 2);
  c.logo_uri = rows->Str(0, 3);
  c.client_uri = rows->Str(0, 4);
  c.redirect_uris = FromJsonArray(rows->Str(0, 5));
  c.grant_types = FromJsonArray(rows->Str(0, 6));
  c.token_endpoint_auth_method = rows->Str(0, 7);
  c.client_secret_sha256 = Unhex(rows->Str(0, 8));
  return std::optional<OAuthClient>(std::move(c));
}

Status OAuthStore::InsertRequest(const PendingRequest& r) {
  return pool_
      .Exec(
          "INSERT INTO auth.oauth_requests (id, client_id, client_kind, client_name, logo_uri, "
          "client_uri, redirect_uri, state, code_challenge, resource, resource_path, scopes, "
          "refresh_allowed, issuer, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, "
          "$10, $11, " +
              ArrayParam("$12") +
              ", $13::boolean, $14, timestamptz 'epoch' + $15::bigint * interval '1 "
              "millisecond')",
          {r.id, r.client_id, r.client_kind, r.client_name, OptionalText(r.logo_uri),
           OptionalText(r.client_uri), r.redirect_uri, OptionalText(r.state), r.code_challenge,
           r.resource, r.resource_path, JsonArray(r.scopes),
           std::string(r.refresh_allowed ? "true" : "false"), r.issuer,
           std::to_string(r.expires_at_ms)})
      .status();
}

Result<std::optional<PendingRequest>> OAuthStore::FindRequest(std::string_view id) {
  auto rows = pool_.Exec(
      "SELECT id, client_id, client_kind, client_name, coalesce(logo_uri, ''), "
      "coalesce(client_uri, ''), redirect_uri, coalesce(state, ''), code_challenge, resource, "
      "resource_path, array_to_json(scopes)::text, refresh_allowed, issuer, "
      "floor(extract(epoch FROM expires_at) * 1000)::bigint FROM auth.oauth_requests "
      "WHERE id = $1 AND answered_at IS NULL AND expires_at > now()",
      {std::string(id)});
  if (!rows.ok()) return rows.status();
  if (rows->empty()) return std::optional<PendingRequest>();
  PendingRequest r;
  int c = 0;
  r.id = rows->Str(0, c++);
  r.client_id = rows->Str(0, c++);
  r.client_kind = rows->Str(0, c++);
  r.client_name = rows->Str(0, c++);
  r.logo_uri = rows->Str(0, c++);
  r.client_uri = rows->Str(0, c++);
  r.redirect_uri = rows->Str(0, c++);
  r.state = rows->Str(0, c++);
  r.code_challenge = rows->Str(0, c++);
  r.resource = rows->Str(0, c++);
  r.resource_path = rows->Str(0, c++);
  r.scopes = FromJsonArray(rows->Str(0, c++));
  r.refresh_allowed = rows->Bool(0, c++);
  r.issuer = rows->Str(0, c++);
  r.expires_at_ms = rows->Int(0, c++);
  return std::optional<PendingRequest>(std::move(r));
}

Result<bool> OAuthStore::AnswerRequest(std::string_view id) {
  auto rows = pool_.Exec(
      "UPDATE auth.oauth_requests SET answered_at = now() "
      "WHERE id = $1 AND answered_at IS NULL AND expires_at > now()",
      {std::string(id)});
  if (!rows.ok()) return rows.status();
  return rows->affected() == 1;
}

Result<std::optional<Grant>> OAuthStore::Approve(std::string_view request_id,
                                                 std::string_view user_id, std::string_view org_id,
                                                 std::optional<int64_t> cap,
                                                 std::string_view code_sha256,
                                                 int64_t code_expires_at_ms) {
  std::optional<Grant> grant;
  const std::string grant_id = NewUuid();
  Status t = pool_.Transaction([&](pg::Conn& conn) -> Status {
    auto answered = conn.Exec(
        "UPDATE auth.oauth_requests SET answered_at = now() "
        "WHERE id = $1 AND answered_at IS NULL AND expires_at > now() "
        "RETURNING client_id, redirect_uri, code_challenge",
        {std::string(request_id)});
    if (!answered.ok()) return answered.status();
    if (answered->empty()) return Status::Ok();
    const std::string client_id = answered->Str(0, 0);
    const std::string redirect_uri = answered->Str(0, 1);
    const std::string challenge = answered->Str(0, 2);
    auto inserted = conn.Exec(
        "INSERT INTO auth.oauth_grants (id, user_id, org_id, client_id, client_name, logo_uri, "
        "redirect_uri, resource, resource_path, scopes, refresh_allowed, cap_micro_usd) "
        "SELECT $2::uuid, $3::uuid, $4::uuid, client_id, client_name, logo_uri, redirect_uri, "
        "resource, resource_path, scopes, refresh_allowed, $5::bigint "
        "FROM auth.oauth_requests WHERE id = $1",
        {std::string(request_id), grant_id, std::string(user_id), std::string(org_id),
         cap ? pg::Param(std::to_string(*cap)) : pg::Param()});
    if (!inserted.ok()) return inserted.status();
    auto code = conn.Exec(
        "INSERT INTO auth.oauth_codes (code_sha256, grant_id, client_id, redirect_uri, "
        "code_challenge, expires_at) VALUES (decode($1, 'hex'), $2::uuid, $3, $4, $5, "
        "timestamptz 'epoch' + $6::bigint * interval '1 millisecond')",
        {Hex(code_sha256), grant_id, client_id, redirect_uri, challenge,
         std::to_string(code_expires_at_ms)});
    if (!code.ok()) return code.status();
    auto rows = conn.Exec(GrantSelect("g.id = $1::uuid"), {grant_id});
    if (!rows.ok()) return rows.status();
    if (!rows->empty()) grant = ReadGrant(*rows, 0);
    return Status::Ok();
  });
  if (!t.ok()) return t;
  return grant;
}

Result<Redemption> OAuthStore::RedeemCode(std::string_view code_sha256) {
  Redemption out;
  auto rows =
      pool_.Exec(std::string("WITH c AS (UPDATE auth.oauth_codes SET used_at = now() "
                             "WHERE code_sha256 = decode($1, 'hex') AND used_at IS NULL "
                             "RETURNING grant_id, client_id, redirect_uri, code_challenge, "
                             "expires_at <= now() AS expired) "
                             "SELECT c.client_id, c.redirect_uri, c.code_challenge, c.expired, ") +
                     kGrantColumns +
                     " FROM c JOIN auth.oauth_grants g ON g.id = c.grant_id "
                     "JOIN auth.organizations o ON o.id = g.org_id",
                 {Hex(code_sha256)});
  if (!rows.ok()) return rows.status();
  if (!rows->empty()) {
    out.outcome = Redemption::Outcome::kRedeemed;
    out.client_id = rows->Str(0, 0);
    out.redirect_uri = rows->Str(0, 1);
    out.code_challenge = rows->Str(0, 2);
    out.expired = rows->Bool(0, 3);
    out.grant = ReadGrant(*rows, 0, 4);
    return out;
  }
  auto used =
      pool_.Exec(GrantSelect("g.id = (SELECT grant_id FROM auth.oauth_codes WHERE code_sha256 = "
                             "decode($1, 'hex'))"),
                 {Hex(code_sha256)});
  if (!used.ok()) return used.status();
  if (!used->empty()) {
    out.outcome = Redemption::Outcome::kReused;
    out.grant = ReadGrant(*used, 0);
  }
  return out;
}

Status OAuthStore::InsertTokens(std::string_view grant_id, const NewTokens& t) {
  auto access = pool_.Exec(
      "INSERT INTO auth.oauth_tokens (token_sha256, grant_id, kind, expires_at) VALUES "
      "(decode($1, 'hex'), $2::uuid, 'access', timestamptz 'epoch' + $3::bigint * interval '1 "
      "millisecond')",
      {Hex(t.access_sha256), std::string(grant_id), std::to_string(t.access_expires_at_ms)});
  if (!access.ok()) return access.status();
  if (t.refresh_sha256.empty()) return Status::Ok();
  return pool_
      .Exec(
          "INSERT INTO auth.oauth_tokens (token_sha256, grant_id, kind, expires_at) VALUES "
          "(decode($1, 'hex'), $2::uuid, 'refresh', timestamptz 'epoch' + $3::bigint * "
          "interval '1 millisecond')",
          {Hex(t.refresh_sha256), std::string(grant_id), std::to_string(t.refresh_expires_at_ms)})
      .status();
}

Result<Rotation> OAuthStore::RotateRefresh(std::string_view refresh_sha256) {
  Rotation out;
  auto rows =
      pool_.Exec(std::string("WITH t AS (UPDATE auth.oauth_tokens SET rotated_at = now() "
                             "WHERE token_sha256 = decode($1, 'hex') AND kind = 'refresh' "
                             "AND rotated_at IS NULL AND revoked_at IS NULL AND expires_at > now() "
                             "RETURNING grant_id) SELECT ") +
                     kGrantColumns +
                     " FROM t JOIN auth.oauth_grants g ON g.id = t.grant_id "
                     "JOIN auth.organizations o ON o.id = g.org_id",
                 {Hex(refresh_sha256)});
  if (!rows.ok()) return rows.status();
  if (!rows->empty()) {
    out.grant = ReadGrant(*rows, 0);
    out.outcome = out.grant.revoked ? Rotation::Outcome::kUnknown : Rotation::Outcome::kRotated;
    return out;
  }
  // Presented again after its rotation: someone else holds the family's tokens.
  auto reused =
      pool_.Exec(GrantSelect("g.id = (SELECT grant_id FROM auth.oauth_tokens WHERE token_sha256 = "
                             "decode($1, 'hex') AND kind = 'refresh' AND rotated_at IS NOT NULL)"),
                 {Hex(refresh_sha256)});
  if (!reused.ok()) return reused.status();
  if (!reused->empty()) {
    out.outcome = Rotation::Outcome::kReused;
    out.grant = ReadGrant(*reused, 0);
  }
  return out;
}

Result<std::optional<std::vector<std::string>>> OAuthStore::RevokeGrant(std::string_view grant_id,
                                                                        std::string_view org_id) {
  std::optional<std::vector<std::string>> hashes;
  Status s = pool_.Transaction([&](pg::Conn& conn) -> Status {
    auto grant = conn.Exec(
        "UPDATE auth.oauth_grants SET revoked_at = coalesce(revoked_at, now()) "
        "WHERE id = $1::uuid AND ($2::uuid IS NULL OR org_id = $2::uuid) RETURNING id",
        {std::string(grant_id), org_id.empty() ? pg::Param() : pg::Param(std::string(org_id))});
    if (!grant.ok()) return grant.status();
    if (grant->empty()) return Status::Ok();
    auto tokens = conn.Exec(
        "UPDATE auth.oauth_tokens SET revoked_at = coalesce(revoked_at, now()) "
        "WHERE grant_id = $1::uuid RETURNING kind, encode(token_sha256, 'hex'), "
        "expires_at > now()",
        {std::string(grant_id)});
    if (!tokens.ok()) return tokens.status();
    hashes.emplace();
    for (int i = 0; i < tokens->size(); ++i) {
      if (tokens->Str(i, 0) != "access" || !tokens->Bool(i, 2)) continue;
      hashes->push_back(Unhex(tokens->Str(i, 1)));
    }
    return Status::Ok();
  });
  if (!s.ok()) return s;
  return hashes;
}

Result<std::optional<OAuthStore::TokenOwner>> OAuthStore::FindToken(std::string_view token_sha256) {
  auto rows = pool_.Exec(
      "SELECT t.kind, t.grant_id::text, g.client_id FROM auth.oauth_tokens t "
      "JOIN auth.oauth_grants g ON g.id = t.grant_id WHERE t.token_sha256 = decode($1, 'hex')",
      {Hex(token_sha256)});
  if (!rows.ok()) return rows.status();
  if (rows->empty()) return std::optional<TokenOwner>();
  return std::optional<TokenOwner>(TokenOwner{rows->Str(0, 0), rows->Str(0, 1), rows->Str(0, 2)});
}

Result<bool> OAuthStore::RevokeAccessToken(std::string_view token_sha256) {
  auto rows = pool_.Exec(
      "UPDATE auth.oauth_tokens SET revoked_at = now() WHERE token_sha256 = decode($1, 'hex') "
      "AND kind = 'access' AND revoked_at IS NULL AND expires_at > now()",
      {Hex(token_sha256)});
  if (!rows.ok()) return rows.status();
  return rows->affected() == 1;
}

Result<std::vector<Grant>> OAuthStore::ListGrants(std::string_view org_id,
                                                  std::string_view user_id) {
  auto rows = pool_.Exec(GrantSelect("g.org_id = $1::uuid AND g.user_id = $2::uuid "
                                     "ORDER BY g.created_at DESC, g.id DESC LIMIT 200"),
                         {std::string(org_id), std::string(user_id)});
  if (!rows.ok()) return rows.status();
  std::vector<Grant> out;
  for (int i = 0; i < rows->size(); ++i) out.push_back(ReadGrant(*rows, i));
  return out;
}

Result<int64_t> OAuthStore::PurgeExpired() {
  int64_t removed = 0;
  for (const char* sql :
       {"DELETE FROM auth.oauth_requests WHERE expires_at < now() - interval '1 day'",
        "DELETE FROM auth.oauth_codes WHERE expires_at < now() - interval '1 day'",
        "DELETE FROM auth.oauth_tokens WHERE expires_at < now() - interval '1 day'"}) {
    auto rows = pool_.Exec(sql);
    if (!rows.ok()) return rows.status();
    removed += rows->affected();
  }
  return removed;
}

}  // namespace toolgate::auth
