// HttpClient: a small blocking HTTP/1.1 client on libcurl, for the CLI, the launcher's demo
// seeding and the integration tests.
//
//   http::HttpClient client("http://127.0.0.1:8080");
//   client.SetDefaultHeader("Authorization", api_key);
//   auto r = client.Post("/api/v1/billing/top-ups", R"({"amount_micro_usd":1000000})");
//   if (!r.ok()) ...              // transport failure: connect, timeout (not an HTTP status)
//   if (r->status == 201) ...     // any HTTP status is a response, 4xx and 5xx included
//
// A client keeps one connection open between calls to the same server and a cookie jar in
// memory, so a session cookie set by a login is sent on the client's later requests.
//
// Thread-compatible: one client per thread (a client is a curl easy handle); distinct clients
// may be used from different threads at once.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "toolgate/base/status.h"

namespace toolgate::http {

struct HttpResponse {
  int status = 0;
  std::string body;
  // Response headers, names in lower case, values trimmed; a repeated header appears once per
  // occurrence (Set-Cookie).
  std::multimap<std::string, std::string> headers;

  // The first value of header `name` (any case), or "" when the response has none.
  std::string Header(std::string_view name) const;
};

// Extra request headers, in order: {"Idempotency-Key", "k1"}.
using HeaderList = std::vector<std::pair<std::string, std::string>>;

class HttpClient {
 public:
  // base_url: scheme, host and port, optionally a path prefix ("http://127.0.0.1:8080"); each
  // request's path is appended to it. A trailing '/' is ignored.
  explicit HttpClient(std::string base_url);
  ~HttpClient();
  HttpClient(HttpClient&&) noexcept;
  HttpClient& operator=(HttpClient&&) noexcept;
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // Sends one request (GET, POST, PUT, PATCH, DELETE) and waits for the whole response. path
  // starts with '/' and may carry a query string (encode its parts with UrlEncode). POST, PUT
  // and PATCH always send body (an empty one as Content-Length: 0); other methods send it only
  // when it is not empty. A body goes as application/json unless headers name another
  // Content-Type. headers override default headers of the same name. Never follows redirects.
  //
  // Returns the response for every HTTP status. Fails with Unavailable when the server cannot be
  // reached or the connection breaks, Timeout when no full response arrived within the timeout,
  // InvalidArgument for a malformed URL. Error messages name the method and URL, never headers
  // or bodies (they may hold credentials).
  Result<HttpResponse> Send(std::string_view method, std::string_view path,
                            std::string_view body = {}, const HeaderList& headers = {});

  Result<HttpResponse> Get(std::string_view path, const HeaderList& headers = {}) {
    return Send("GET", path, {}, headers);
  }
  Result<HttpResponse> Post(std::string_view path, std::string_view body,
                            const HeaderList& headers = {}) {
    return Send("POST", path, body, headers);
  }
  Result<HttpResponse> Put(std::string_view path, std::string_view body,
                           const HeaderList& headers = {}) {
    return Send("PUT", path, body, headers);
  }
  Result<HttpResponse> Patch(std::string_view path, std::string_view body,
                             const HeaderList& headers = {}) {
    return Send("PATCH", path, body, headers);
  }
  Result<HttpResponse> Delete(std::string_view path, const HeaderList& headers = {}) {
    return Send("DELETE", path, {}, headers);
  }

  // A header sent with every later request (for example Authorization); replaces an earlier
  // default of the same name (any case). An empty value removes it.
  void SetDefaultHeader(std::string_view name, std::string_view value);

  // The longest a request may take, connecting included. Default 30 s.
  void SetTimeout(std::chrono::milliseconds timeout) { timeout_ = timeout; }

  // The value of the cookie `name` that a server set in this client's jar, or "" when none.
  std::string Cookie(std::string_view name) const;

  const std::string& base_url() const { return base_url_; }

 private:
  struct CurlDeleter {
    void operator()(void* handle) const;
  };
  std::string base_url_;
  std::unique_ptr<void, CurlDeleter> curl_;  // a CURL* easy handle: its connection and cookies
  HeaderList default_headers_;
  std::chrono::milliseconds timeout_{30'000};
};

// One request an HttpClient sent and the response it received, as an ExchangeObserver sees it.
// The views point into the client's call and are valid only during the observer's call.
struct Exchange {
  std::string_view method;
  std::string_view url;                   // base URL and path, query string included
  std::string_view request_content_type;  // "" when no body was sent
  std::string_view request_body;
  const HttpResponse& response;
};

// Called after every response any HttpClient of this process receives (not after transport
// failures). The integration tests install one to record the edge's answers and check them
// against the published API description.
using ExchangeObserver = std::function<void(const Exchange&)>;

// Installs observer for every client of the process (null removes it). Not synchronised with
// requests in flight: install it once, before any client sends. The observer runs on the thread
// that sent the request, so it must be thread-safe, and must not throw.
void SetExchangeObserver(ExchangeObserver observer);

// Percent-encodes s for a query value or a path segment (RFC 3986: everything except
// A-Z a-z 0-9 - . _ ~).
std::string UrlEncode(std::string_view s);

}  // namespace toolgate::http
