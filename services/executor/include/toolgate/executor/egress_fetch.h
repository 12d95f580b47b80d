// EgressFetch: one outbound HTTP request made from inside a sandbox, through the egress gateway.
//
// A sandbox has no route out; its only way out is the gateway, a forward proxy the executor
// makes reachable at 127.0.0.1:<port> in the sandbox's own network namespace and names in the
// sandbox's environment (kEgressProxyEnv). This is the client side every runtime shares the
// rules of (the Lua worker calls it; the Python and JavaScript workers follow the same rules in
// their own language, runtimes/*/):
// - https goes through a CONNECT tunnel, TLS end to end: the certificate is checked here, against
//   the CA bundle the sandbox names in kCaFileEnv (the system's, plus the operator's CA);
//   http goes as one absolute-form request per connection.
// - Redirects are followed, at most kMaxRedirects, each hop through the gateway again, so each
//   hop is checked against the version's egress list.
// - The gateway's refusal (403 with X-Toolgate-Egress-Refused) and its own failures (502 or 504
//   with X-Toolgate-Egress-Error), also when they answer the CONNECT, become an error whose
//   message is exactly the gateway's message. Any other status is a response.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "toolgate/base/status.h"

namespace toolgate::executor {

// The sandbox environment's names for the egress facility; the executor sets them
// (EgressProxyEnv, egress_gateway.h), the runtimes read them. Without kEgressProxyEnv a sandbox
// has no egress.
constexpr const char* kEgressProxyEnv = "TOOLGATE_EGRESS_PROXY";  // "127.0.0.1:<port>"
constexpr const char* kCaFileEnv = "SSL_CERT_FILE";               // the PEM bundle TLS trusts
// The CA bundle every sandbox sees when the executor has one of its own (--egress-ca-file):
// the system's certificates and the operator's, in one file bound read-only here.
constexpr const char* kSandboxCaBundle = "/etc/toolgate/ca-certificates.crt";
// Where Debian keeps the system's bundle; the default when kCaFileEnv is not set.
constexpr const char* kSystemCaBundle = "/etc/ssl/certs/ca-certificates.crt";

constexpr int kMaxRedirects = 5;
// The message of every runtime's facility in a sandbox without kEgressProxyEnv.
constexpr const char* kNoEgressMessage = "egress is not available in this sandbox";

struct EgressConfig {
  std::string proxy;    // "127.0.0.1:<port>"; empty: no egress
  std::string ca_file;  // PEM bundle for TLS; empty: libcurl's default (the system's)
  // The largest response body taken; a larger one is an error.
  size_t max_body_bytes = 16 << 20;
};

// The configuration this process's environment gives (kEgressProxyEnv, kCaFileEnv).
EgressConfig EgressConfigFromEnvironment();

struct EgressRequest {
  std::string url;  // absolute http:// or https:// URL
  std::string method = "GET";
  std::vector<std::pair<std::string, std::string>> headers;  // in order
  std::string body;            // sent when not empty, and always for POST, PUT and PATCH
  int64_t timeout_ms = 30000;  // the whole request, redirects included; at least 1
};

struct EgressResponse {
  int status = 0;
  // Names in lower case, values trimmed; a repeated header appears once per occurrence.
  std::multimap<std::string, std::string> headers;
  std::string body;
};

// Makes request through config's gateway and waits for the final response (any status). The
// first request loads libcurl (dlopen): linked, its thirty-odd libraries would be loaded by
// every Lua worker at start, about 15 ms, for a facility most handlers never use. Fails with:
// - Unavailable carrying exactly the gateway's message when the gateway refused (403) or the
//   upstream failed (502); Timeout with its message when it cut the request at the call's
//   deadline (504);
// - Unavailable kNoEgressMessage when config has no proxy;
// - InvalidArgument for a URL that is not http(s), a method or header that is not allowed;
// - Timeout when the request took longer than its timeout_ms;
// - Unavailable for a network or TLS failure ("TLS: ..."), too many redirects or a body over
//   max_body_bytes; Internal when libcurl cannot be loaded.
// Messages name the host, never the query, headers or body (they may hold secrets).
// Thread-safe: each call has its own curl handle. Blocks up to timeout_ms.
Result<EgressResponse> EgressFetch(const EgressConfig& config, const EgressRequest& request);

}  // namespace toolgate::executor
