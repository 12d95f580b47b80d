#include "csrf_guard.h"

#include <algorithm>
#include <cctype>

#include "browser_session.h"
#include "mcp_protocol.h"
#include "upload_route.h"

namespace toolgate::edge {
namespace {

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

bool IsAppOrigin(std::string_view origin, std::string_view host,
                 const std::vector<std::string>& app_origins) {
  if (origin.empty()) return false;
  for (const auto& allowed : app_origins) {
    if (EqualsIgnoreCase(origin, allowed)) return true;
  }
  return SameOrigin(origin, host);
}

bool IsMultipartForm(std::string_view content_type) {
  std::string_view media = content_type.substr(0, content_type.find(';'));
  while (!media.empty() && media.back() == ' ') media.remove_suffix(1);
  return EqualsIgnoreCase(media, "multipart/form-data");
}

bool SetsSession(std::string_view path) {
  return path == "/auth/signup" || path == "/auth/login";
}

}  // namespace

bool IsStateChanging(std::string_view method) {
  return method != "GET" && method != "HEAD" && method != "OPTIONS";
}

CsrfVerdict CheckCsrf(const CsrfRequest& request, const std::vector<std::string>& app_origins) {
  if (request.has_api_key || !IsStateChanging(request.method)) return CsrfVerdict::kAllow;
  // A Content-Type without a body is still what a form would send; check it whenever present.
  const bool json_ok =
      request.content_type.empty() ? !request.has_body : IsJsonContentType(request.content_type);
  if (SetsSession(request.path)) {
    // Browsers send Origin with every cross-site POST, so a foreign one is all a forged sign-in
    // shows; scripts (curl -d) send none and may use any content type.
    if (!request.origin.empty() && !IsAppOrigin(request.origin, request.host, app_origins)) {
      return CsrfVerdict::kForeignOrigin;
    }
    return CsrfVerdict::kAllow;
  }
  if (!request.has_session_cookie) return CsrfVerdict::kAllow;  // nothing ambient to abuse
  if (!request.origin.empty() && !IsAppOrigin(request.origin, request.host, app_origins)) {
    return CsrfVerdict::kForeignOrigin;
  }
  if (!SessionRequested(request.csrf_header) &&
      !IsAppOrigin(request.origin, request.host, app_origins)) {
    return CsrfVerdict::kMissingToken;
  }
  // A bundle upload is multipart; another origin can send that with a form, but not with the
  // custom header, so the header (not the Origin alone) makes it acceptable.
  const bool upload_ok = SessionRequested(request.csrf_header) &&
                         IsUploadRoute(request.method, "/api/v1" + std::string(request.path)) &&
                         IsMultipartForm(request.content_type);
  return json_ok || upload_ok ? CsrfVerdict::kAllow : CsrfVerdict::kNotJson;
}

std::string_view CsrfRejection(CsrfVerdict verdict) {
  switch (verdict) {
    case CsrfVerdict::kMissingToken:
      return "A request signed in by the session cookie must carry the header X-Toolgate-CSRF: 1 "
             "(the web app and the toolgate CLI send it); scripts send an API key in the "
             "Authorization header instead.";
    case CsrfVerdict::kForeignOrigin:
      return "This request comes from another site's page; use the Toolgate web app, or an API "
             "key in the Authorization header.";
    case CsrfVerdict::kNotJson:
      return "Send the body as JSON with Content-Type: application/json.";
    case CsrfVerdict::kAllow:
      break;
  }
  return "";
}

}  // namespace toolgate::edge
