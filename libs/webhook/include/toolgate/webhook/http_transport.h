// HttpTransport: one webhook attempt over HTTP(S) with libcurl, hardened against the tenant who
// chose the URL:
//   * the URL must pass UrlRefusal, and every address and port curl is about to connect to must
//     pass EndpointRefusal (target_policy.h); the check runs in curl's socket callback, on the
//     socket address curl hands it after resolving the name itself, so the connection is made to
//     exactly the endpoint judged (no second lookup a rebinding DNS server could answer
//     differently);
//   * no redirects followed (a 3xx is a rejection), no proxy from the environment (a proxy
//     would connect to an address never judged), https only unless the policy allows http
//     (allow_http or allow_private_targets);
//   * a connect timeout and a total timeout, and at most max_response_bytes of the answer read
//     (the body is only drained, never kept);
//   * POST with Content-Type application/json and the Standard Webhooks headers (signature.h),
//     signed with the request's signing_key and, during a rotation, its previous_signing_key too.
//
// Failure is an AttemptResult, never an exception: kRefused when the URL is not allowed, or when
// no answer came and an address it resolved to was refused (nothing was sent to it);
// kNetworkError when no answer came otherwise; else the outcome of the status (retry_policy.h).
// Errors name no key, address or part of the URL, so they may be shown and logged.
//
// Thread-safe: Attempt may run on many threads at once, each attempt with a curl handle of its
// own; it blocks for up to about timeout_ms. Holds its Options by value.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "toolgate/webhook/target_policy.h"
#include "toolgate/webhook/transport.h"

namespace toolgate::webhook {

class HttpTransport : public Transport {
 public:
  struct Options {
    // Where requests may go; judged on every attempt.
    TargetPolicy policy = {};
    int64_t connect_timeout_ms = 3'000;
    // The whole attempt, connecting included.
    int64_t timeout_ms = 10'000;
    // Of the answer's body; past it the transfer stops (the status counts).
    size_t max_response_bytes = 4096;
    std::string user_agent = "Toolgate-Webhooks/1";
    // PEM bundle to verify servers with; empty: the system's.
    std::string ca_file = {};
  };

  // Initialises libcurl once per process (aborts when it cannot start).
  explicit HttpTransport(Options options);

  AttemptResult Attempt(const Request& request, int64_t timestamp_s) override;

 private:
  const Options options_;
};

}  // namespace toolgate::webhook
