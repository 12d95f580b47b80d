// SignInThrottle: exponential backoff for password guessing and mass sign-up.
//
// Failed logins are counted per account (the e-mail as typed, lower-cased, whether or not an
// account has it, so a lock-out says nothing about which e-mails exist) and per client address
// (as the edge reports it); sign-ups are counted per client address. Once a subject reaches its
// threshold, every further attempt within the window locks it for
// BackoffMs(attempts) from that attempt: base, 2 x base, 4 x base ... up to max. A locked
// subject is refused (429 rate_limited with Retry-After) before any password is checked, so
// the right password is refused too until the lock passes. A subject's count starts over once
// window_ms has passed since its last counted attempt; a successful login clears its account's
// count (not the address's, so one good account cannot launder guesses at others).
//
// The counts live in PostgreSQL (auth.sign_in_throttle) and are compared against PostgreSQL's
// clock, so every auth replica sees the same locks. Thread-safe; the pool must outlive it.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "toolgate/base/status.h"
#include "toolgate/pg/pg.h"

namespace toolgate::auth {

struct ThrottlePolicy {
  int account_failures = 5;  // failed logins per account before the first lock
  int client_failures = 30;  // failed logins per client address before the first lock
  int client_signups = 30;   // sign-ups per client address before the first lock
  int64_t base_ms = 1000;    // the first lock
  int64_t max_ms = 15 * 60 * 1000;
  int64_t window_ms = 60 * 60 * 1000;
};

// How long a subject is locked after its attempts-th counted attempt, given its threshold:
// 0 below the threshold, then base_ms doubling per attempt, capped at max_ms. Pure.
int64_t BackoffMs(int64_t attempts, int threshold, const ThrottlePolicy& policy);

// Whole seconds for Retry-After: remaining_ms rounded up, at least 1. Pure.
int64_t RetryAfterSeconds(int64_t remaining_ms);

class SignInThrottle {
 public:
  SignInThrottle(pg::Pool& pool, ThrottlePolicy policy) : pool_(pool), policy_(policy) {}

  static std::string AccountSubject(std::string_view email);
  static std::string ClientSubject(std::string_view address);
  static std::string SignupSubject(std::string_view address);
  // OAuth client registrations (POST /oauth/register, open to anyone) per client address: as
  // cheap to make by the thousand as sign-ups, so counted like them.
  static std::string RegistrationSubject(std::string_view address);

  // Milliseconds until the longest lock among subjects ends; 0 when none is locked.
  // Unavailable when PostgreSQL is.
  Result<int64_t> LockedFor(const std::vector<std::string>& subjects);
  // Counts a failed login against the account and the client.
  Status RecordLoginFailure(std::string_view email, std::string_view client);
  // Counts a sign-up against the client.
  Status RecordSignup(std::string_view client);
  // Counts an OAuth client registration against the client (threshold client_signups).
  Status RecordRegistration(std::string_view client);
  // A successful login: the account's count starts over.
  Status ClearAccount(std::string_view email);
  // Deletes the rows that no longer count: window passed since the last attempt, no lock.
  Status Prune();
  // Attempts refused while locked, since start (for the logs).
  int64_t refused() const { return refused_.load(); }
  void CountRefusal() { ++refused_; }

  const ThrottlePolicy& policy() const { return policy_; }

 private:
  // Counts one attempt against subject and locks it when over threshold. Returns the count.
  Result<int64_t> Count(const std::string& subject, int threshold);

  pg::Pool& pool_;
  const ThrottlePolicy policy_;
  std::atomic<int64_t> refused_{0};
};

}  // namespace toolgate::auth
