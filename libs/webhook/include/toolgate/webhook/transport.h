// One attempt at delivering a webhook: the request, what came of it, and the interface the
// Dispatcher sends through (HttpTransport in production, a fake in tests).
#pragma once

#include <cstdint>
#include <string>

#include "toolgate/webhook/retry_policy.h"

namespace toolgate::webhook {

// A message to deliver. signing_key is secret (the decoded "whsec_" secret): never logged.
struct Request {
  std::string url;
  std::string message_id;  // webhook-id: the same on every attempt
  std::string body;        // JSON, sent as application/json
  std::string signing_key;
};

struct AttemptResult {
  AttemptOutcome outcome = AttemptOutcome::kNetworkError;
  int status = 0;     // the HTTP status when an answer came, else 0
  std::string error;  // why there was no answer or nothing was sent; names nothing secret
};

// Implementations are thread-safe.
class Transport {
 public:
  virtual ~Transport() = default;
  // Sends request once, signed for timestamp_s (the attempt's time, Unix seconds).
  virtual AttemptResult Attempt(const Request& request, int64_t timestamp_s) = 0;
};

}  // namespace toolgate::webhook
