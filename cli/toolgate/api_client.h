// ApiClient: the management API as the CLI's caller, with whichever credential serves.
//
// With an API key it sends the key (Authorization); without one, the saved session (the
// tg_session cookie, with X-Toolgate-CSRF: 1 as the edge wants of cookie-signed changes). An API
// key never hides the session: a request the key lacks the scope for (403 insufficient_scope,
// answered before anything is done, so sending it again changes nothing twice) goes again with
// the session when there is one.
//
// Thread-compatible, like http::HttpClient: one client per thread.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <string_view>

#include "toolgate/base/status.h"
#include "toolgate/http_client/http_client.h"

namespace toolgate::cli {

class ApiClient {
 public:
  // url: the server ("http://127.0.0.1:8080"); api_key and session may each be "".
  ApiClient(std::string url, std::string api_key, std::string session);

  // As http::HttpClient::Send: every HTTP status is a response; transport failures are errors.
  Result<http::HttpResponse> Send(std::string_view method, std::string_view path,
                                  std::string_view body = {}, const http::HeaderList& headers = {});
  Result<http::HttpResponse> Get(std::string_view path) { return Send("GET", path); }
  Result<http::HttpResponse> Post(std::string_view path, std::string_view body,
                                  const http::HeaderList& headers = {}) {
    return Send("POST", path, body, headers);
  }
  Result<http::HttpResponse> Put(std::string_view path, std::string_view body) {
    return Send("PUT", path, body);
  }
  Result<http::HttpResponse> Delete(std::string_view path) { return Send("DELETE", path); }

  // The longest one request may take (default 30 s); invocations wait for their handler.
  void SetTimeout(std::chrono::milliseconds timeout) { timeout_ = timeout; }

 private:
  http::HttpClient& KeyClient();
  http::HttpClient& SessionClient();

  std::string url_;
  std::string api_key_;
  std::string session_;
  std::chrono::milliseconds timeout_{30'000};
  std::unique_ptr<http::HttpClient> key_client_;      // created on first use
  std::unique_ptr<http::HttpClient> session_client_;  // likewise
};

}  // namespace toolgate::cli
