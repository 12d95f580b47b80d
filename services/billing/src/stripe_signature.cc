#include "toolgate/billing/stripe_signature.h"

#include <charconv>
#include <vector>

#include "toolgate/base/crypto.h"

namespace toolgate::billing {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace

std::string StripeSignature(int64_t timestamp_s, std::string_view payload,
                            std::string_view secret) {
  std::string signed_payload = std::to_string(timestamp_s);
  signed_payload += '.';
  signed_payload += payload;
  return HexEncode(HmacSha256(secret, signed_payload));
}

SignatureCheck VerifyStripeSignature(std::string_view header, std::string_view payload,
                                     std::string_view secret, int64_t now_s, int64_t tolerance_s) {
  header = Trim(header);
  if (header.empty()) return SignatureCheck::kMissing;
  bool has_timestamp = false;
  int64_t timestamp = 0;
  std::vector<std::string_view> signatures;
  while (!header.empty()) {
    size_t comma = header.find(',');
    std::string_view item = Trim(header.substr(0, comma));
    header = comma == std::string_view::npos ? std::string_view() : header.substr(comma + 1);
    size_t eq = item.find('=');
    if (eq == std::string_view::npos) continue;  // not key=value: no part of the scheme
    std::string_view key = item.substr(0, eq);
    std::string_view value = item.substr(eq + 1);
    if (key == "t") {
      // A second t would make the signed timestamp ambiguous.
      if (has_timestamp) return SignatureCheck::kMalformed;
      auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), timestamp);
      if (ec != std::errc() || ptr != value.data() + value.size() || value.empty()) {
        return SignatureCheck::kMalformed;
      }
      has_timestamp = true;
    } else if (key == "v1") {
      signatures.push_back(value);
    }
  }
  if (!has_timestamp || signatures.empty()) return SignatureCheck::kMalformed;
  const std::string expected = StripeSignature(timestamp, payload, secret);
  bool matched = false;
  // Every candidate is compared, so the time taken says nothing about which one matched.
  for (std::string_view candidate : signatures) {
    matched = ConstantTimeEquals(expected, candidate) || matched;
  }
  if (!matched) return SignatureCheck::kMismatch;
  // After the signature: a timestamp is only worth checking once it is known to be Stripe's.
  const int64_t skew = now_s > timestamp ? now_s - timestamp : timestamp - now_s;
  if (skew > tolerance_s) return SignatureCheck::kOutsideTolerance;
  return SignatureCheck::kValid;
}

std::string_view SignatureCheckMessage(SignatureCheck check) {
  switch (check) {
    case SignatureCheck::kMissing:
      return "The request has no Stripe-Signature header.";
    case SignatureCheck::kMalformed:
      return "The Stripe-Signature header must carry one t= timestamp and at least one v1= "
             "signature.";
    case SignatureCheck::kOutsideTolerance:
      return "The Stripe-Signature timestamp is more than 5 minutes from this server's clock.";
    case SignatureCheck::kMismatch:
      return "No v1 signature in Stripe-Signature matches the body under the endpoint's signing "
             "secret.";
    case SignatureCheck::kValid:
      break;
  }
  return "";
}

}  // namespace toolgate::billing
