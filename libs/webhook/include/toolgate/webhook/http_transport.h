// HttpTransport: one webhook attempt over HTTP(S) with libcurl, hardened against the tenant who
// chose the URL:
//   * the URL must pass UrlRefusal, and every address curl is about to connect to must pass
//     AddressRefusal; the check runs in curl's socket callback, after curl resolved the name
//     itself, so the connection is made to exactly the address judged (no second lookup a
//     rebinding DNS server could answer differently);
//   * no redirects followed (a 3xx is a rejection), no proxy from the environment (a proxy
//     would connect to an address never judged), https only unless the policy allows http;
//   * a connect timeout and a total timeout, and at most max_response_bytes of the answer read
//     (the body is only drained, never kept);
//   * POST with Content-Type application/json and the Standard Webhooks headers (signature.h).
// Thread-safe: each attempt has a curl handle of its own.
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
    TargetPolicy policy;
    int64_t connect_timeout_ms = 3'000;
    int64_t timeout_ms = 10'000;
    size_t max_response_bytes = 4096;
    std::string user_agent = "Toolgate-Webhooks/1";
    // PEM bundle to verify servers with; empty: the system's.
    std::string ca_file;
  };

  explicit HttpTransport(Options options);

  AttemptResult Attempt(const Request& request, int64_t timestamp_s) override;

 private:
  const Options options_;
};

}  // namespace toolgate::webhook
