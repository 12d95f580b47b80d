#include "toolgate/auth/account_rules.h"

#include <sodium.h>

#include "toolgate/base/crypto.h"
#include "toolgate/base/strings.h"

namespace toolgate::auth {
namespace {

bool IsAsciiAlnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

bool IsLocalPartChar(char c) {
  if (c <= ' ' || c >= 0x7f) return false;  // controls, space, DEL and every non-ASCII byte
  for (char special : std::string_view("()<>[]:;,@\\\"")) {
    if (c == special) return false;
  }
  return true;
}

bool IsDomainLabel(std::string_view label) {
  if (label.empty() || label.size() > 63 || label.front() == '-' || label.back() == '-') {
    return false;
  }
  for (char c : label) {
    if (!IsAsciiAlnum(c) && c != '-') return false;
  }
  return true;
}

bool IsValidDomain(std::string_view domain) {
  if (domain.size() > 253) return false;
  int labels = 0;
  size_t start = 0;
  for (;;) {
    size_t dot = domain.find('.', start);
    std::string_view label =
        domain.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    if (!IsDomainLabel(label)) return false;
    ++labels;
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return labels >= 2;
}

}  // namespace

size_t Utf8Length(std::string_view s) {
  size_t n = 0;
  for (unsigned char c : s) {
    if ((c & 0xc0) != 0x80) ++n;
  }
  return n;
}

std::optional<std::string> CheckEmail(std::string_view email) {
  if (email.empty()) return "is required";
  if (email.size() > kMaxEmailBytes) return "must be at most 254 characters";
  size_t at = email.find('@');
  if (at == std::string_view::npos || email.find('@', at + 1) != std::string_view::npos) {
    return "must be an email address like name@example.com";
  }
  std::string_view local = email.substr(0, at), domain = email.substr(at + 1);
  if (local.empty() || local.size() > 64 || local.front() == '.' || local.back() == '.' ||
      local.find("..") != std::string_view::npos) {
    return "must be an email address like name@example.com";
  }
  for (char c : local) {
    if (!IsLocalPartChar(c)) return "must be an email address like name@example.com";
  }
  if (!IsValidDomain(domain)) return "must be an email address like name@example.com";
  return std::nullopt;
}

std::optional<std::string> CheckPassword(std::string_view password) {
  size_t chars = Utf8Length(password);
  if (chars < kMinPasswordChars) return "must be at least 10 characters";
  if (chars > kMaxPasswordChars) return "must be at most 1024 characters";
  return std::nullopt;
}

std::optional<std::string> CheckOrganizationName(std::string_view name) {
  std::string_view trimmed = TrimAsciiWhitespace(name);
  if (trimmed.empty()) return "is required";
  if (Utf8Length(trimmed) > kMaxOrganizationNameChars) return "must be at most 200 characters";
  for (unsigned char c : trimmed) {
    if (c < 0x20 || c == 0x7f) return "must not contain control characters";
  }
  return std::nullopt;
}

std::string NewSessionToken() {
  return Base64UrlEncode(RandomBytes(32));
}

std::string SessionCookie(std::string_view token, int64_t max_age_s) {
  return "tg_session=" + std::string(token) +
         "; Path=/; HttpOnly; SameSite=Lax; Max-Age=" + std::to_string(max_age_s);
}

std::string ClearedSessionCookie() {
  return SessionCookie("", 0);
}

Result<std::string> HashPassword(std::string_view password) {
  char out[crypto_pwhash_STRBYTES];
  if (crypto_pwhash_str(out, password.data(), password.size(), crypto_pwhash_OPSLIMIT_INTERACTIVE,
                        crypto_pwhash_MEMLIMIT_INTERACTIVE) != 0) {
    return Status::Internal("crypto_pwhash_str: out of memory");
  }
  return std::string(out);
}

bool VerifyPassword(std::string_view hash, std::string_view password) {
  std::string terminated(hash);  // libsodium reads a C string
  return crypto_pwhash_str_verify(terminated.c_str(), password.data(), password.size()) == 0;
}

void BurnPasswordCheck(std::string_view password) {
  // Hashed once, lazily: a real Argon2id string with the same limits as every stored one.
  static const std::string kDecoy = [] {
    auto hash = HashPassword(NewSessionToken());
    return hash.ok() ? *hash : std::string();
  }();
  VerifyPassword(kDecoy, password);
}

}  // namespace toolgate::auth
