// When an invoke request may run on the browser session instead of an API key: the web app's
// "Try it" (issue 4). Same checks and billing as a key; what differs is how cross-site requests
// are kept out.
//
// A session invokes only when the request carries the session cookie, no Authorization header,
// and the header `X-Toolgate-CSRF: 1`. A form or an image on another site cannot send a custom
// header, and script on another site cannot either without a CORS preflight, which the edge never
// grants. On top of that, an Origin header, when present, must name the host the request was sent
// to. Pure functions; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace toolgate::edge {

// The authority of a Host header or an origin.
struct Authority {
  std::string host;  // lower-cased; an IPv6 address keeps its brackets
  std::string port;  // never empty: the default port is filled in
};

// "host", "host:port", "[v6]" or "[v6]:port"; nullopt when empty or the port is not a number.
std::optional<Authority> ParseAuthority(std::string_view text, std::string_view default_port);

inline constexpr const char* kCsrfHeader = "X-Toolgate-CSRF";

// Whether the value of kCsrfHeader asks for the session to be used.
bool SessionRequested(std::string_view csrf_header_value);

// Whether `origin` ("http://host:port", empty when the header is absent) names the same host and
// port as `host` (the Host header, "host[:port]"). Host names compare case-insensitively; a port
// left out stands for the scheme's default (80 for http, 443 for https). "null" and anything
// unparsable do not match.
bool SameOrigin(std::string_view origin, std::string_view host);

}  // namespace toolgate::edge
