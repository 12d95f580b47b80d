// Signing of webhooks as the Standard Webhooks specification has it (standardwebhooks.com):
// every delivery carries
//   webhook-id         the message's id, the same on every attempt (the receiver's idempotency
//                      key)
//   webhook-timestamp  the attempt's time, integer seconds since the Unix epoch
//   webhook-signature  "v1,<base64 of HMAC-SHA256(key, "<id>.<timestamp>.<body>")>"; a receiver
//                      accepts the request when any of the space-separated signatures matches
//                      (during a secret rotation Toolgate sends two: Request's
//                      previous_signing_key, transport.h)
// where key is the base64-decoded part of the endpoint's secret after "whsec_".
//
// Secrets are keys: never log one, never put one in an error message. Pure functions, thread-safe
// once InitCrypto() has run.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace toolgate::webhook {

inline constexpr std::string_view kSecretPrefix = "whsec_";
// Random bytes in a new secret; the specification asks for 24 to 64.
inline constexpr size_t kSecretBytes = 32;
inline constexpr size_t kMinSecretBytes = 24;
inline constexpr size_t kMaxSecretBytes = 64;

// A new secret: "whsec_" + base64 of kSecretBytes random bytes.
std::string NewSecret();
// The key a secret signs with: its base64 decoded ("whsec_" optional). nullopt when it is not
// base64 of kMinSecretBytes to kMaxSecretBytes bytes.
std::optional<std::string> SigningKey(std::string_view secret);

// "v1,<base64>" for one message at one attempt's time.
std::string Sign(std::string_view key, std::string_view message_id, int64_t timestamp_s,
                 std::string_view body);
// A receiver's check: true when one of the space-separated entries of signature_header is the
// v1 signature of the message (compared in constant time). The timestamp's freshness is the
// caller's to judge (the specification suggests refusing one more than 5 minutes off).
bool Verify(std::string_view key, std::string_view message_id, int64_t timestamp_s,
            std::string_view body, std::string_view signature_header);

// A new random message id, "msg_" + 32 hex digits.
std::string NewMessageId();

}  // namespace toolgate::webhook
