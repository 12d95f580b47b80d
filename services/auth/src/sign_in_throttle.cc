#include "toolgate/auth/sign_in_throttle.h"

#include <algorithm>
#include <cctype>

#include "toolgate/base/log.h"

namespace toolgate::auth {

int64_t BackoffMs(int64_t attempts, int threshold, const ThrottlePolicy& policy) {
  if (attempts < threshold) return 0;
  int64_t lock = policy.base_ms;
  for (int64_t i = threshold; i < attempts && lock < policy.max_ms; ++i) lock *= 2;
  return std::min(lock, policy.max_ms);
}

int64_t RetryAfterSeconds(int64_t remaining_ms) {
  return std::max<int64_t>(1, (remaining_ms + 999) / 1000);
}

std::string SignInThrottle::AccountSubject(std::string_view email) {
  std::string out = "account:";
  for (char c : email)
    out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  return out;
}

std::string SignInThrottle::ClientSubject(std::string_view address) {
  return "client:" + std::string(address);
}

std::string SignInThrottle::SignupSubject(std::string_view address) {
  return "signup:" + std::string(address);
}

std::string SignInThrottle::RegistrationSubject(std::string_view address) {
  return "register:" + std::string(address);
}

Result<int64_t> SignInThrottle::LockedFor(const std::vector<std::string>& subjects) {
  int64_t longest = 0;
  for (const auto& subject : subjects) {
    auto rows = pool_.Exec(
        "SELECT GREATEST(0, CEIL(EXTRACT(EPOCH FROM (locked_until - now())) * 1000))::bigint "
        "FROM auth.sign_in_throttle WHERE subject = $1 AND locked_until > now()",
        {subject});
    if (!rows.ok()) return rows.status();
    if (!rows->empty()) longest = std::max(longest, rows->Int(0, 0));
  }
  return longest;
}

Result<int64_t> SignInThrottle::Count(const std::string& subject, int threshold) {
  // One statement: the count and the lock move together, whichever replica writes.
  auto rows = pool_.Exec(
      "INSERT INTO auth.sign_in_throttle AS t (subject, attempts, last_attempt_at) "
      "VALUES ($1, 1, now()) "
      "ON CONFLICT (subject) DO UPDATE SET "
      "  attempts = CASE WHEN t.last_attempt_at < now() - $2::bigint * interval '1 millisecond' "
      "                  THEN 1 ELSE t.attempts + 1 END, "
      "  last_attempt_at = now() "
      "RETURNING attempts",
      {subject, std::to_string(policy_.window_ms)});
  if (!rows.ok()) return rows.status();
  int64_t attempts = rows->Int(0, 0);
  int64_t lock_ms = BackoffMs(attempts, threshold, policy_);
  if (lock_ms > 0) {
    auto locked = pool_.Exec(
        "UPDATE auth.sign_in_throttle SET locked_until = now() + $2::bigint * interval '1 "
        "millisecond' WHERE subject = $1",
        {subject, std::to_string(lock_ms)});
    if (!locked.ok()) return locked.status();
    log::Warn("sign-in throttle: subject locked")
        .Str("subject_kind", subject.substr(0, subject.find(':')))
        .Int("attempts", attempts)
        .Int("lock_ms", lock_ms);
  }
  return attempts;
}

Status SignInThrottle::RecordLoginFailure(std::string_view email, std::string_view client) {
  auto account = Count(AccountSubject(email), policy_.account_failures);
  if (!account.ok()) return account.status();
  auto by_client = Count(ClientSubject(client), policy_.client_failures);
  if (!by_client.ok()) return by_client.status();
  log::Info("login failed")
      .Str("client", std::string(client))
      .Int("account_failures", *account)
      .Int("client_failures", *by_client);
  return Status::Ok();
}

Status SignInThrottle::RecordSignup(std::string_view client) {
  return Count(SignupSubject(client), policy_.client_signups).status();
}

Status SignInThrottle::RecordRegistration(std::string_view client) {
  return Count(RegistrationSubject(client), policy_.client_signups).status();
}

Status SignInThrottle::ClearAccount(std::string_view email) {
  return pool_.Exec("DELETE FROM auth.sign_in_throttle WHERE subject = $1", {AccountSubject(email)})
      .status();
}

Status SignInThrottle::Prune() {
  return pool_
      .Exec(
          "DELETE FROM auth.sign_in_throttle "
          "WHERE last_attempt_at < now() - $1::bigint * interval '1 millisecond' "
          "AND (locked_until IS NULL OR locked_until < now())",
          {std::to_string(policy_.window_ms)})
      .status();
}

}  // namespace toolgate::auth
