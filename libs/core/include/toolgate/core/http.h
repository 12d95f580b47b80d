// The management API on the bus: the edge forwards each request as a v1::HttpRequest to
// tg.<service>.http; the owning service routes it with a Router and answers a v1::HttpResponse.
//
//   Router router;
//   router.Add("GET", "/secrets/{id}", [&](const Request& r) { return GetSecret(r); });
//   ServeHttp(service, router);
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "toolgate/base/status.h"
#include "toolgate/bus/service.h"
#include "toolgate/v1/toolgate.pb.h"

namespace toolgate::core {

// The HttpRequest header (a key of HttpRequest.headers) in which the edge puts the client's
// address: the TCP peer, or what trusted proxies reported (services/edge/http_front.h). Only
// the edge sets it; the headers a client sends are copied under other names.
inline constexpr std::string_view kClientAddressHeader = "x-toolgate-client-address";
// The system's public URL as the edge knows it (its --public-url, else "http://" + Host): the
// OAuth issuer and the origin of MCP resources. Only the edge sets it.
inline constexpr std::string_view kPublicBaseHeader = "x-toolgate-public-base";

struct Request {
  const v1::HttpRequest& http;
  std::vector<std::string> params;  // the {placeholders} of the route, in order

  const v1::Principal& principal() const { return http.principal(); }
  // The query parameter, or fallback when absent.
  std::string Query(const std::string& name, const std::string& fallback = "") const;
};

// The segments of a URL path, in order: the text between slashes, empty ones dropped, so
// "/a//b/" and "a/b" both give {"a", "b"}. No percent-decoding; the caller strips any query.
// The router matches its patterns on these segments.
std::vector<std::string> SplitPath(std::string_view path);

v1::HttpResponse JsonResponse(int status, std::string body);
v1::HttpResponse NoContent();
v1::HttpResponse ProblemResponse(v1::Problem problem);
v1::HttpResponse ProblemResponse(std::string_view code, std::string_view detail);
// 503 service_unavailable for a dependency failure; the status goes to the log, not the client.
v1::HttpResponse Unavailable(const Status& status);

class Router {
 public:
  using Handler = std::function<v1::HttpResponse(const Request&)>;

  // pattern: "/functions/{id}/versions"; a {name} matches one non-empty path segment.
  // A route is public when require_auth is false (signup, login); otherwise an unauthenticated
  // request gets 401 and a key without the `manage` scope 403.
  void Add(std::string method, std::string pattern, Handler handler, bool require_auth = true);
  // 404 for an unknown path, 405 for a known path with another method.
  v1::HttpResponse Dispatch(const v1::HttpRequest& request) const;

 private:
  struct Route {
    std::string method;
    std::vector<std::string> segments;
    Handler handler;
    bool require_auth;
  };
  std::vector<Route> routes_;
};

// Serves tg.<service name>.http with router (queue group "<name>-http") on the service's pool.
Status ServeHttp(bus::Service& service, const Router& router);

// ?limit= (default 50, max 200): nullopt and *problem set when invalid.
std::optional<int> ParseLimit(const Request& request, v1::HttpResponse* problem);
std::string EncodeCursor(std::string_view position);
// nullopt for a cursor this service did not issue.
std::optional<std::string> DecodeCursor(std::string_view cursor);

}  // namespace toolgate::core
