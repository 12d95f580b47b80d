// Verification of Stripe's webhook signatures (the Stripe-Signature header): Stripe signs each
// delivery with the endpoint's signing secret as
//   Stripe-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">[,v1=...][,v0=...]
// A header may carry several v1 signatures (while a secret is being rolled); one matching is
// enough. Other schemes (v0) are ignored. A timestamp further than the tolerance from now, in
// either direction, is refused, so a captured delivery cannot be replayed later.
// Pure and thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace toolgate::billing {

// Stripe's libraries' default, and what its documentation recommends.
inline constexpr int64_t kStripeSignatureToleranceS = 300;

enum class SignatureCheck {
  kValid,
  kMissing,           // no header, or an empty one
  kMalformed,         // no t=, a t that is not a number, or no v1=
  kOutsideTolerance,  // t is more than the tolerance away from now
  kMismatch,          // no v1 is the signature of this payload under this secret
};

// Whether header signs payload (the raw body, byte for byte) under secret at now_s (Unix
// seconds). The comparison of signatures takes the same time whatever they hold.
SignatureCheck VerifyStripeSignature(std::string_view header, std::string_view payload,
                                     std::string_view secret, int64_t now_s,
                                     int64_t tolerance_s = kStripeSignatureToleranceS);

// The lower-case hex v1 signature of payload at timestamp_s: what Stripe sends.
std::string StripeSignature(int64_t timestamp_s, std::string_view payload, std::string_view secret);

// What a refused check means, for a problem detail (never names the secret or a signature).
std::string_view SignatureCheckMessage(SignatureCheck check);

}  // namespace toolgate::billing
