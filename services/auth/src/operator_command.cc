#include "toolgate/auth/operator_command.h"

#include <fstream>

#include "toolgate/auth/account_rules.h"
#include "toolgate/base/crypto.h"

namespace toolgate::auth {

std::string GenerateOperatorPassword() {
  return Base64UrlEncode(RandomBytes(24));
}

Result<std::string> ReadPasswordFile(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::string password;
  if (!in || !std::getline(in, password)) {
    return Status::InvalidArgument("cannot read the password file " + path.string());
  }
  if (!password.empty() && password.back() == '\r') password.pop_back();
  if (auto error = CheckPassword(password)) {
    return Status::InvalidArgument("the password in " + path.string() + " " + *error);
  }
  return password;
}

Result<CreatedOperator> CreateOperator(AccountStore& accounts, std::string_view email,
                                       const std::filesystem::path& password_file) {
  if (auto error = CheckEmail(email)) return Status::InvalidArgument("--email " + *error);
  CreatedOperator out;
  std::string password;
  if (password_file.empty()) {
    out.password = GenerateOperatorPassword();
    password = out.password;
  } else {
    auto read = ReadPasswordFile(password_file);
    if (!read.ok()) return read.status();
    password = *read;
  }
  auto hash = HashPassword(password);
  if (!hash.ok()) return hash.status();
  // Its own organization, since every user has one: the operator's API keys and calls stay
  // apart from every customer's.
  auto account = accounts.CreateOperator(email, *hash, "Operators");
  if (!account.ok()) return account.status();
  out.account = *account;
  return out;
}

}  // namespace toolgate::auth
