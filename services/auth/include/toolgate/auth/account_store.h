// AccountStore: organizations, users and sessions in PostgreSQL (schema `auth`).
//
// Session tokens arrive as their SHA-256 (32 raw bytes); the tokens themselves are never stored.
// Every method blocks on PostgreSQL; failures of the database come back as Unavailable or
// Internal. Thread-safe (the pool is).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "toolgate/base/status.h"
#include "toolgate/pg/pg.h"
#include "toolgate/v1/toolgate.pb.h"

namespace toolgate::auth {

struct Account {
  std::string user_id;
  std::string email;  // as typed at signup
  std::string org_id;
  std::string org_name;
};

// An account with its Argon2id password hash, for login.
struct AccountCredentials {
  Account account;
  std::string password_hash;
};

// What billing asks before an operator's credit grant (OrganizationLookupRequest).
struct OrganizationLookup {
  bool found = false;
  std::string org_name;
  std::string user_email;  // empty when no user was asked about or it is unknown
};

// A new session to store with an account.
struct NewSession {
  std::string token_sha256;
  int64_t expires_at_ms = 0;
};

class AccountStore {
 public:
  // pool must outlive the store.
  explicit AccountStore(pg::Pool& pool) : pool_(pool) {}

  // Creates an organization, its first user and a session in one transaction. Conflict when
  // the email is taken, whatever its case; nothing is written then.
  Result<Account> CreateAccount(std::string_view email, std::string_view password_hash,
                                std::string_view org_name, const NewSession& session);
  // Creates a platform operator: a user with is_operator set and an organization of its own
  // (named org_name), without a session (the operator signs in like anyone). The only writer of
  // is_operator; no route calls it. Conflict when the email is taken, whatever its case.
  Result<Account> CreateOperator(std::string_view email, std::string_view password_hash,
                                 std::string_view org_name);
  // Whether org_id names an organization (its name), and the email of user_id when not empty.
  // An org_id that is not a UUID is not found.
  Result<OrganizationLookup> LookupOrganization(std::string_view org_id, std::string_view user_id);
  // The account whose email matches case-insensitively; nullopt when there is none.
  Result<std::optional<AccountCredentials>> FindByEmail(std::string_view email);
  Status CreateSession(const Account& account, const NewSession& session);
  // Deleting a session that does not exist is not an error.
  Status DeleteSession(std::string_view token_sha256);
  // The principal of an unexpired session (is_operator from its user); nullopt when the session
  // is unknown or expired.
  Result<std::optional<v1::Principal>> FindSession(std::string_view token_sha256);
  // The email of a user; nullopt when there is no such user.
  Result<std::optional<std::string>> UserEmail(std::string_view user_id);
  // Removes sessions past their expiry (they are already refused); returns how many.
  Result<int64_t> PurgeExpiredSessions();

 private:
  pg::Pool& pool_;
};

}  // namespace toolgate::auth
