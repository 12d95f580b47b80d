#include "toolgate/auth/account_store.h"

#include "toolgate/auth/key_rules.h"
#include "toolgate/base/crypto.h"

namespace toolgate::auth {
namespace {

// Timestamps cross as integer epoch milliseconds: exact, no time zone or format to agree on.
constexpr const char* kInsertSession =
    "INSERT INTO auth.sessions (token_sha256, user_id, org_id, expires_at) "
    "VALUES (decode($1, 'hex'), $2, $3, timestamptz 'epoch' + $4::bigint * interval '1 "
    "millisecond')";

pg::Params SessionParams(const Account& account, const NewSession& session) {
  return {HexEncode(session.token_sha256), account.user_id, account.org_id,
          std::to_string(session.expires_at_ms)};
}

}  // namespace

Result<Account> AccountStore::CreateAccount(std::string_view email, std::string_view password_hash,
                                            std::string_view org_name, const NewSession& session) {
  Account account{NewUuid(), std::string(email), NewUuid(), std::string(org_name)};
  Status s = pool_.Transaction([&](pg::Conn& conn) -> Status {
    auto org = conn.Exec("INSERT INTO auth.organizations (id, name) VALUES ($1, $2)",
                         {account.org_id, account.org_name});
    if (!org.ok()) return org.status();
    auto user = conn.Exec(
        "INSERT INTO auth.users (id, email, password_hash, org_id) VALUES ($1, $2, $3, $4)",
        {account.user_id, account.email, std::string(password_hash), account.org_id});
    if (!user.ok()) return user.status();
    return conn.Exec(kInsertSession, SessionParams(account, session)).status();
  });
  if (!s.ok()) return s;
  return account;
}

Result<Account> AccountStore::CreateOperator(std::string_view email, std::string_view password_hash,
                                             std::string_view org_name) {
  Account account{NewUuid(), std::string(email), NewUuid(), std::string(org_name)};
  Status s = pool_.Transaction([&](pg::Conn& conn) -> Status {
    auto taken =
        conn.Exec("SELECT 1 FROM auth.users WHERE lower(email) = lower($1)", {account.email});
    if (!taken.ok()) return taken.status();
    if (!taken->empty()) return Status::Conflict("an account has this email");
    auto org = conn.Exec("INSERT INTO auth.organizations (id, name) VALUES ($1, $2)",
                         {account.org_id, account.org_name});
    if (!org.ok()) return org.status();
    return conn
        .Exec(
            "INSERT INTO auth.users (id, email, password_hash, org_id, is_operator) "
            "VALUES ($1, $2, $3, $4, true)",
            {account.user_id, account.email, std::string(password_hash), account.org_id})
        .status();
  });
  if (!s.ok()) return s;
  return account;
}

Result<OrganizationLookup> AccountStore::LookupOrganization(std::string_view org_id,
                                                            std::string_view user_id) {
  OrganizationLookup out;
  if (!IsUuid(org_id)) return out;
  auto rows = pool_.Exec(
      "SELECT o.name, coalesce((SELECT email FROM auth.users WHERE $2::text <> '' AND "
      "id::text = lower($2)), '') FROM auth.organizations o WHERE o.id = $1::uuid",
      {std::string(org_id), std::string(user_id)});
  if (!rows.ok()) return rows.status();
  if (rows->empty()) return out;
  out.found = true;
  out.org_name = rows->Str(0, 0);
  out.user_email = rows->Str(0, 1);
  return out;
}

Result<std::optional<AccountCredentials>> AccountStore::FindByEmail(std::string_view email) {
  auto rows = pool_.Exec(
      "SELECT u.id::text, u.email, u.org_id::text, o.name, u.password_hash "
      "FROM auth.users u JOIN auth.organizations o ON o.id = u.org_id "
      "WHERE lower(u.email) = lower($1)",
      {std::string(email)});
  if (!rows.ok()) return rows.status();
  if (rows->empty()) return std::optional<AccountCredentials>();
  return std::optional<AccountCredentials>(AccountCredentials{
      Account{rows->Str(0, 0), rows->Str(0, 1), rows->Str(0, 2), rows->Str(0, 3)},
      rows->Str(0, 4)});
}

Status AccountStore::CreateSession(const Account& account, const NewSession& session) {
  return pool_.Exec(kInsertSession, SessionParams(account, session)).status();
}

Status AccountStore::DeleteSession(std::string_view token_sha256) {
  return pool_
      .Exec("DELETE FROM auth.sessions WHERE token_sha256 = decode($1, 'hex')",
            {HexEncode(token_sha256)})
      .status();
}

Result<std::optional<v1::Principal>> AccountStore::FindSession(std::string_view token_sha256) {
  auto rows = pool_.Exec(
      "SELECT s.user_id::text, s.org_id::text, o.name, u.is_operator "
      "FROM auth.sessions s JOIN auth.organizations o ON o.id = s.org_id "
      "JOIN auth.users u ON u.id = s.user_id "
      "WHERE s.token_sha256 = decode($1, 'hex') AND s.expires_at > now()",
      {HexEncode(token_sha256)});
  if (!rows.ok()) return rows.status();
  if (rows->empty()) return std::optional<v1::Principal>();
  v1::Principal principal = PrincipalForSession(rows->Str(0, 0), rows->Str(0, 1), rows->Str(0, 2));
  // Read with the session every time, not kept in it: an operator demoted in the database stops
  // being one at their next request.
  principal.set_is_operator(rows->Bool(0, 3));
  return std::optional<v1::Principal>(std::move(principal));
}

Result<std::optional<std::string>> AccountStore::UserEmail(std::string_view user_id) {
  auto rows =
      pool_.Exec("SELECT email FROM auth.users WHERE id = $1::uuid", {std::string(user_id)});
  if (!rows.ok()) return rows.status();
  if (rows->empty()) return std::optional<std::string>();
  return std::optional<std::string>(rows->Str(0, 0));
}

Result<int64_t> AccountStore::PurgeExpiredSessions() {
  auto rows = pool_.Exec("DELETE FROM auth.sessions WHERE expires_at <= now()");
  if (!rows.ok()) return rows.status();
  return rows->affected();
}

}  // namespace toolgate::auth
