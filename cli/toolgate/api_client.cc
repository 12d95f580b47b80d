#include "api_client.h"

#include "toolgate/base/json.h"

namespace toolgate::cli {
namespace {

// The problem+json code of an error answer, or "".
std::string ProblemCode(std::string_view body) {
  auto doc = ParseJson(body);
  simdjson::dom::object obj;
  std::string code;
  if (doc.ok() && doc->root.get_object().get(obj) == simdjson::SUCCESS) {
    GetString(obj, "code", &code);
  }
  return code;
}

}  // namespace

ApiClient::ApiClient(std::string url, std::string api_key, std::string session)
    : url_(std::move(url)), api_key_(std::move(api_key)), session_(std::move(session)) {}

Result<http::HttpResponse> ApiClient::Send(std::string_view method, std::string_view path,
                                           std::string_view body, const http::HeaderList& headers) {
  if (api_key_.empty()) return SessionClient().Send(method, path, body, headers);
  auto r = KeyClient().Send(method, path, body, headers);
  if (r.ok() && r->status == 403 && !session_.empty() &&
      ProblemCode(r->body) == "insufficient_scope") {
    return SessionClient().Send(method, path, body, headers);
  }
  return r;
}

http::HttpClient& ApiClient::KeyClient() {
  if (!key_client_) {
    key_client_ = std::make_unique<http::HttpClient>(url_);
    key_client_->SetDefaultHeader("Authorization", api_key_);
  }
  key_client_->SetTimeout(timeout_);
  return *key_client_;
}

http::HttpClient& ApiClient::SessionClient() {
  if (!session_client_) {
    session_client_ = std::make_unique<http::HttpClient>(url_);
    if (!session_.empty()) {
      session_client_->SetDefaultHeader("Cookie", "tg_session=" + session_);
      // The edge refuses state changes signed in by the cookie alone (cross-site requests).
      session_client_->SetDefaultHeader("X-Toolgate-CSRF", "1");
    }
  }
  session_client_->SetTimeout(timeout_);
  return *session_client_;
}

}  // namespace toolgate::cli
