// One attempt at delivering a webhook: the request, what came of it, and the interface the
// Dispatcher sends through (HttpTransport in production, a fake in tests).
#pragma once

#include <cstdint>
#include <string>

#include "toolgate/webhook/retry_policy.h"

namespace toolgate::webhook {

// A message to deliver: a plain value, copied into the Dispatcher's queue. The keys are secret
// (decoded "whsec_" secrets, signature.h's SigningKey): never logged, never in an error.
struct Request {
  std::string url;
  std::string message_id;  // webhook-id: the same on every attempt
  std::string body;        // JSON, sent as application/json
  std::string signing_key;
  // During a secret rotation, the key being retired; empty otherwise. When set (and not the
  // same as signing_key), webhook-signature carries both signatures, space-separated, the
  // current key's first ("v1,<current> v1,<previous>"), as the Standard Webhooks specification
  // allows: a receiver holding either secret accepts the message.
  std::string previous_signing_key = {};
};

struct AttemptResult {
  AttemptOutcome outcome = AttemptOutcome::kNetworkError;
  int status = 0;          // the HTTP status when an answer came, else 0
  std::string error = {};  // why there was no answer or nothing was sent; names nothing secret
};

// Implementations are thread-safe: Attempt may be called on several threads at once.
class Transport {
 public:
  virtual ~Transport() = default;
  // Sends request once, signed for timestamp_s (the attempt's time, Unix seconds). Blocks until
  // the attempt ends; reports failure in the result, never by throwing.
  virtual AttemptResult Attempt(const Request& request, int64_t timestamp_s) = 0;
};

}  // namespace toolgate::webhook
