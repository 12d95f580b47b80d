// `toolgate-auth create-operator --email E [--password-file F]`: creates a platform operator
// (docs/operations.md "Operators") on auth's database directly, with the service's own PostgreSQL
// credentials, and exits. There is no route for it: whoever may run auth's binary with its
// credentials already controls the platform, and nobody else can become an operator.
// `toolgate admin create` runs it with a `toolgate up` data directory's credentials.
// Not thread-safe (one call per process).
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "toolgate/auth/account_store.h"
#include "toolgate/base/status.h"

namespace toolgate::auth {

struct CreatedOperator {
  Account account;
  std::string password;  // the generated one; empty when it came from a file
};

// A new password for an operator who named no file: 24 random bytes, base64url (32 characters).
std::string GenerateOperatorPassword();

// The password in path: its first line, without the line break. InvalidArgument when the file
// cannot be read or the password breaks CheckPassword.
Result<std::string> ReadPasswordFile(const std::filesystem::path& path);

// Checks email (CheckEmail), hashes password (or a generated one when password_file is empty)
// and creates the operator with an organization of its own. InvalidArgument for a bad email or
// password, Conflict when the email has an account, else the store's failure.
Result<CreatedOperator> CreateOperator(AccountStore& accounts, std::string_view email,
                                       const std::filesystem::path& password_file);

}  // namespace toolgate::auth
