// Hashing, random identifiers and encodings, on libsodium. Thread-safe after InitCrypto().
#pragma once

#include <string>
#include <string_view>

namespace toolgate {

// Initializes libsodium; call once at process start. Aborts if the library cannot start.
void InitCrypto();

// SHA-256 of data, 32 raw bytes.
std::string Sha256(std::string_view data);
// HMAC-SHA-256 (RFC 2104) of data under key (any length), 32 raw bytes: the signature of
// payment providers' webhooks and of the webhooks Toolgate sends.
std::string HmacSha256(std::string_view key, std::string_view data);
std::string HexEncode(std::string_view bytes);
// Unpadded URL-safe base64.
std::string Base64UrlEncode(std::string_view bytes);
std::string Base64Encode(std::string_view bytes);
// Returns false when text is not valid (padded or unpadded) standard base64.
bool Base64Decode(std::string_view text, std::string* out);

std::string RandomBytes(size_t n);
// A random RFC 9562 version 4 UUID, lower-case.
std::string NewUuid();
// True for a lower- or upper-case 8-4-4-4-12 hex UUID.
bool IsUuid(std::string_view s);
// Compares in time independent of the contents.
bool ConstantTimeEquals(std::string_view a, std::string_view b);

}  // namespace toolgate
