#include "toolgate/base/crypto.h"

#include <sodium.h>

#include <cstdio>
#include <cstdlib>

namespace toolgate {

void InitCrypto() {
  if (sodium_init() < 0) {
    std::fprintf(stderr, "libsodium failed to initialize\n");
    std::abort();
  }
}

std::string Sha256(std::string_view data) {
  std::string out(crypto_hash_sha256_BYTES, '\0');
  crypto_hash_sha256(reinterpret_cast<unsigned char*>(out.data()),
                     reinterpret_cast<const unsigned char*>(data.data()), data.size());
  return out;
}

std::string HmacSha256(std::string_view key, std::string_view data) {
  crypto_auth_hmacsha256_state state;
  crypto_auth_hmacsha256_init(&state, reinterpret_cast<const unsigned char*>(key.data()),
                              key.size());
  crypto_auth_hmacsha256_update(&state, reinterpret_cast<const unsigned char*>(data.data()),
                                data.size());
  std::string mac(crypto_auth_hmacsha256_BYTES, '\0');
  crypto_auth_hmacsha256_final(&state, reinterpret_cast<unsigned char*>(mac.data()));
  return mac;
}

std::string HexEncode(std::string_view bytes) {
  std::string out(bytes.size() * 2 + 1, '\0');
  sodium_bin2hex(out.data(), out.size(), reinterpret_cast<const unsigned char*>(bytes.data()),
                 bytes.size());
  out.pop_back();
  return out;
}

namespace {
std::string Encode64(std::string_view bytes, int variant) {
  std::string out(sodium_base64_encoded_len(bytes.size(), variant), '\0');
  sodium_bin2base64(out.data(), out.size(), reinterpret_cast<const unsigned char*>(bytes.data()),
                    bytes.size(), variant);
  out.resize(std::char_traits<char>::length(out.c_str()));
  return out;
}
}  // namespace

std::string Base64UrlEncode(std::string_view bytes) {
  return Encode64(bytes, sodium_base64_VARIANT_URLSAFE_NO_PADDING);
}

std::string Base64Encode(std::string_view bytes) {
  return Encode64(bytes, sodium_base64_VARIANT_ORIGINAL);
}

bool Base64Decode(std::string_view text, std::string* out) {
  out->assign(text.size(), '\0');
  size_t len = 0;
  for (int variant : {sodium_base64_VARIANT_ORIGINAL, sodium_base64_VARIANT_ORIGINAL_NO_PADDING}) {
    const char* end = nullptr;
    if (sodium_base642bin(reinterpret_cast<unsigned char*>(out->data()), out->size(), text.data(),
                          text.size(), nullptr, &len, &end, variant) == 0 &&
        end == text.data() + text.size()) {
      out->resize(len);
      return true;
    }
  }
  out->clear();
  return false;
}

std::string RandomBytes(size_t n) {
  std::string out(n, '\0');
  randombytes_buf(out.data(), n);
  return out;
}

std::string NewUuid() {
  std::string b = RandomBytes(16);
  b[6] = static_cast<char>((b[6] & 0x0f) | 0x40);
  b[8] = static_cast<char>((b[8] & 0x3f) | 0x80);
  std::string hex = HexEncode(b);
  return hex.substr(0, 8) + "-" + hex.substr(8, 4) + "-" + hex.substr(12, 4) + "-" +
         hex.substr(16, 4) + "-" + hex.substr(20);
}

bool IsUuid(std::string_view s) {
  if (s.size() != 36) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (i == 8 || i == 13 || i == 18 || i == 23) {
      if (c != '-') return false;
    } else if (!std::isxdigit(static_cast<unsigned char>(c))) {
      return false;
    }
  }
  return true;
}

bool ConstantTimeEquals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && sodium_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace toolgate
