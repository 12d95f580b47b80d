#include "toolgate/core/http.h"

#include <charconv>

#include "toolgate/base/crypto.h"
#include "toolgate/base/log.h"
#include "toolgate/core/problem.h"
#include "toolgate/core/subjects.h"

namespace toolgate::core {
namespace {

bool Match(const std::vector<std::string>& pattern, const std::vector<std::string>& path,
           std::vector<std::string>* params) {
  if (pattern.size() != path.size()) return false;
  std::vector<std::string> found;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i].front() == '{') {
      found.push_back(path[i]);
    } else if (pattern[i] != path[i]) {
      return false;
    }
  }
  *params = std::move(found);
  return true;
}

bool HasScope(const v1::Principal& p, std::string_view scope) {
  for (const auto& s : p.scopes()) {
    if (s == scope) return true;
  }
  return false;
}

}  // namespace

std::vector<std::string> SplitPath(std::string_view path) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < path.size()) {
    size_t slash = path.find('/', start);
    if (slash == std::string_view::npos) slash = path.size();
    if (slash > start) out.emplace_back(path.substr(start, slash - start));
    start = slash + 1;
  }
  return out;
}

std::string Request::Query(const std::string& name, const std::string& fallback) const {
  auto it = http.query().find(name);
  return it == http.query().end() ? fallback : it->second;
}

v1::HttpResponse JsonResponse(int status, std::string body) {
  v1::HttpResponse r;
  r.set_status(status);
  r.set_body(std::move(body));
  return r;
}

v1::HttpResponse NoContent() {
  v1::HttpResponse r;
  r.set_status(204);
  return r;
}

v1::HttpResponse ProblemResponse(v1::Problem problem) {
  v1::HttpResponse r;
  r.set_status(problem.status());
  *r.mutable_problem() = std::move(problem);
  return r;
}

v1::HttpResponse ProblemResponse(std::string_view code, std::string_view detail) {
  return ProblemResponse(MakeProblem(code, detail));
}

v1::HttpResponse Unavailable(const Status& status) {
  log::Error("dependency failed").Str("error", status.ToString());
  return ProblemResponse("service_unavailable", "A backing store is unavailable; retry shortly.");
}

void Router::Add(std::string method, std::string pattern, Handler handler, bool require_auth) {
  routes_.push_back({std::move(method), SplitPath(pattern), std::move(handler), require_auth});
}

v1::HttpResponse Router::Dispatch(const v1::HttpRequest& request) const {
  auto path = SplitPath(request.path());
  bool path_known = false;
  for (const auto& route : routes_) {
    std::vector<std::string> params;
    if (!Match(route.segments, path, &params)) continue;
    path_known = true;
    if (route.method != request.method()) continue;
    if (route.require_auth) {
      if (!request.authenticated()) {
        return ProblemResponse("not_authenticated",
                               "Sign in, or send an API key with the manage scope.");
      }
      if (!request.principal().grant_id().empty()) {
        return ProblemResponse("invalid_token",
                               "OAuth access tokens are accepted only at the MCP endpoint they "
                               "were issued for.");
      }
      if (!request.principal().key_id().empty() && !HasScope(request.principal(), "manage")) {
        return ProblemResponse("insufficient_scope",
                               "This API key lacks the manage scope; create one that has it.");
      }
    }
    return route.handler(Request{request, std::move(params)});
  }
  if (path_known) return ProblemResponse("method_not_allowed", "See /api/v1/openapi.json.");
  return ProblemResponse("not_found", "No such route; see /api/v1/openapi.json.");
}

Status ServeHttp(bus::Service& service, const Router& router) {
  const std::string subject = HttpSubject(service.name());
  return service.Handle(subject, service.name() + "-http", [&service, &router](bus::Message&& m) {
    v1::HttpRequest request;
    v1::HttpResponse response;
    if (!request.ParseFromString(m.data)) {
      response = ProblemResponse("bad_request", "Malformed bus message.");
    } else {
      response = router.Dispatch(request);
    }
    if (!m.reply.empty()) service.bus().Publish(m.reply, response.SerializeAsString());
  });
}

std::optional<int> ParseLimit(const Request& request, v1::HttpResponse* problem) {
  std::string text = request.Query("limit", "50");
  int limit = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), limit);
  if (ec != std::errc() || ptr != text.data() + text.size() || limit < 1 || limit > 200) {
    *problem = ProblemResponse(ValidationProblem("limit", "must be an integer from 1 to 200"));
    return std::nullopt;
  }
  return limit;
}

std::string EncodeCursor(std::string_view position) {
  return Base64UrlEncode("c1:" + std::string(position));
}

std::optional<std::string> DecodeCursor(std::string_view cursor) {
  // Base64UrlEncode output is decoded by mapping back to the standard alphabet.
  std::string standard(cursor);
  for (char& c : standard) {
    if (c == '-') c = '+';
    if (c == '_') c = '/';
  }
  std::string raw;
  if (!Base64Decode(standard, &raw) || raw.rfind("c1:", 0) != 0) return std::nullopt;
  return raw.substr(3);
}

}  // namespace toolgate::core
