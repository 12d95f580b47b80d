// CsrfGuard: which requests a browser on another site could have forged, decided before the
// edge forwards them.
//
// The session cookie is SameSite=Lax, but "site" ignores the port, so a page served from
// another port of the same host (or any page, for a top-level form POST in older browsers)
// can make the browser send it. A request that changes state with the cookie as its only
// credential is therefore accepted only when
//   * it carries `X-Toolgate-CSRF: 1` (another origin cannot add a custom header without a CORS
//     preflight, which the edge never grants), or its Origin is the app's own (the Host the
//     request was sent to, or one of the configured app origins), AND
//   * its body, if any, is declared `application/json` (a form or `text/plain` body is what a
//     cross-site form or a "simple" fetch can send without a preflight), or it is a bundle
//     upload (multipart/form-data to the upload route, upload_route.h) with X-Toolgate-CSRF.
// Requests with an API key never depend on ambient credentials and pass untouched. Signup and
// login carry no cookie yet but set one: they must not come from a foreign Origin (browsers
// send Origin with every cross-site POST), so a page elsewhere cannot sign the browser into the
// attacker's account, while scripts (no Origin) keep working without the header.
//
// Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace toolgate::edge {

struct CsrfRequest {
  std::string_view method;   // "POST", ...
  std::string_view path;     // below /api/v1, e.g. "/api-keys"
  bool has_api_key = false;  // an Authorization header with a key
  bool has_session_cookie = false;
  std::string_view csrf_header;   // value of X-Toolgate-CSRF, empty when absent
  std::string_view origin;        // Origin header, empty when absent
  std::string_view host;          // Host header
  std::string_view content_type;  // Content-Type header, empty when absent
  bool has_body = false;          // Content-Length above zero
};

enum class CsrfVerdict {
  kAllow,
  kMissingToken,   // no X-Toolgate-CSRF and no app Origin
  kForeignOrigin,  // an Origin that is not the app's
  kNotJson,        // a body that is not declared application/json
};

// Whether method changes state (everything but GET, HEAD and OPTIONS).
bool IsStateChanging(std::string_view method);

// The decision for one request. app_origins are full origins ("https://toolgate.example.com");
// the origin of the Host the request was sent to is always accepted as well.
CsrfVerdict CheckCsrf(const CsrfRequest& request, const std::vector<std::string>& app_origins);

// The problem detail for a refused verdict (never kAllow).
std::string_view CsrfRejection(CsrfVerdict verdict);

}  // namespace toolgate::edge
