// The rules for accounts and sessions that need no database: what a valid email, password and
// organization name are, how session tokens and their cookies look, and password hashing.
// Every function is thread-safe (InitCrypto() must have run for those that use libsodium).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "toolgate/base/status.h"

namespace toolgate::auth {

inline constexpr int64_t kSessionLifetimeS = 30 * 24 * 3600;  // 30 days
inline constexpr size_t kMinPasswordChars = 10;
// Bounds the work a single signup or login can ask of Argon2id.
inline constexpr size_t kMaxPasswordChars = 1024;
inline constexpr size_t kMaxEmailBytes = 254;  // RFC 5321 path limit
inline constexpr size_t kMaxOrganizationNameChars = 200;

// Each Check* returns nullopt when the value is acceptable, else the message for the
// field error of a 422 answer.
//
// An email is local@domain: the local part 1 to 64 printable ASCII characters without spaces,
// quotes or the specials ()<>[]:;,@\ ; the domain two or more dot-separated labels of letters,
// digits and inner hyphens. Deliberately stricter than RFC 5322 (no quoted local parts, no IP
// literals): what a person types into a signup form.
std::optional<std::string> CheckEmail(std::string_view email);
// At least kMinPasswordChars and at most kMaxPasswordChars characters (UTF-8 code points).
std::optional<std::string> CheckPassword(std::string_view password);
// Not blank, at most kMaxOrganizationNameChars characters, no control characters.
std::optional<std::string> CheckOrganizationName(std::string_view name);

// Number of UTF-8 code points (continuation bytes are not counted).
size_t Utf8Length(std::string_view s);

// A new session token: 32 random bytes, base64url without padding. Only its SHA-256 is stored.
std::string NewSessionToken();
// "tg_session=<token>; Path=/; HttpOnly; SameSite=Lax; Max-Age=<max_age_s>".
std::string SessionCookie(std::string_view token, int64_t max_age_s);
// The cookie that makes a browser forget its session.
std::string ClearedSessionCookie();

// An Argon2id string (libsodium crypto_pwhash_str, interactive limits). Internal when the
// system cannot spare the memory.
Result<std::string> HashPassword(std::string_view password);
// True when password matches hash. A malformed hash is a mismatch.
bool VerifyPassword(std::string_view hash, std::string_view password);
// Spends the time of one VerifyPassword, so that a login for an unknown email costs as much as
// one with a wrong password and does not reveal which emails are registered.
void BurnPasswordCheck(std::string_view password);

}  // namespace toolgate::auth
