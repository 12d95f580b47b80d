#include "toolgate/http_client/http_client.h"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <mutex>

#include "toolgate/base/strings.h"

namespace toolgate::http {
namespace {

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && AsciiLower(a) == AsciiLower(b);
}

ExchangeObserver& Observer() {
  static ExchangeObserver observer;
  return observer;
}

// curl_global_init is not thread-safe; every client runs it through here first.
void InitCurlOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
      std::fprintf(stderr, "libcurl failed to initialize\n");
      std::abort();
    }
  });
}

size_t OnBody(char* data, size_t size, size_t n, void* user) {
  static_cast<HttpResponse*>(user)->body.append(data, size * n);
  return size * n;
}

// Called once per header line, status lines included. A new status line (after a 100 Continue
// or an interim answer) starts the header set afresh.
size_t OnHeader(char* data, size_t size, size_t n, void* user) {
  auto* response = static_cast<HttpResponse*>(user);
  std::string_view line(data, size * n);
  if (line.rfind("HTTP/", 0) == 0) {
    response->headers.clear();
  } else if (size_t colon = line.find(':'); colon != std::string_view::npos) {
    response->headers.emplace(AsciiLower(Trim(line.substr(0, colon), kBlanks, " \t\r\n")),
                              std::string(Trim(line.substr(colon + 1), kBlanks, " \t\r\n")));
  }
  return size * n;
}

// Owns a curl_slist of request headers.
class HeaderSlist {
 public:
  ~HeaderSlist() { curl_slist_free_all(list_); }
  void Add(const std::string& line) { list_ = curl_slist_append(list_, line.c_str()); }
  curl_slist* get() const { return list_; }

 private:
  curl_slist* list_ = nullptr;
};

bool HasHeader(const HeaderList& headers, std::string_view name) {
  return std::any_of(headers.begin(), headers.end(),
                     [&](const auto& h) { return EqualsIgnoreCase(h.first, name); });
}

}  // namespace

std::string HttpResponse::Header(std::string_view name) const {
  auto it = headers.find(AsciiLower(name));
  return it == headers.end() ? "" : it->second;
}

void HttpClient::CurlDeleter::operator()(void* handle) const {
  curl_easy_cleanup(handle);
}

HttpClient::HttpClient(std::string base_url) : base_url_(std::move(base_url)) {
  while (!base_url_.empty() && base_url_.back() == '/') base_url_.pop_back();
  InitCurlOnce();
  curl_.reset(curl_easy_init());
  if (curl_ == nullptr) {
    std::fprintf(stderr, "libcurl could not create a handle\n");
    std::abort();
  }
  CURL* h = curl_.get();
  curl_easy_setopt(h, CURLOPT_COOKIEFILE, "");  // "": the in-memory cookie engine, no file
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);    // timeouts must not raise SIGALRM in threads
  curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, OnBody);
  curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, OnHeader);
}

HttpClient::~HttpClient() = default;
HttpClient::HttpClient(HttpClient&&) noexcept = default;
HttpClient& HttpClient::operator=(HttpClient&&) noexcept = default;

void HttpClient::SetDefaultHeader(std::string_view name, std::string_view value) {
  std::erase_if(default_headers_, [&](const auto& h) { return EqualsIgnoreCase(h.first, name); });
  if (!value.empty()) default_headers_.emplace_back(name, value);
}

Result<HttpResponse> HttpClient::Send(std::string_view method, std::string_view path,
                                      std::string_view body, const HeaderList& headers) {
  CURL* h = curl_.get();
  const std::string url = base_url_ + std::string(path);
  const std::string method_str(method);
  const bool sends_body = method == "POST" || method == "PUT" || method == "PATCH" || !body.empty();

  HeaderSlist slist;
  for (const auto& [name, value] : default_headers_) {
    if (!HasHeader(headers, name)) slist.Add(name + ": " + value);
  }
  for (const auto& [name, value] : headers) slist.Add(name + ": " + value);
  if (sends_body && !HasHeader(headers, "Content-Type"))
    slist.Add("Content-Type: application/json");
  // curl would otherwise wait for "100 Continue" before sending a large body.
  slist.Add("Expect:");

  HttpResponse response;
  curl_easy_setopt(h, CURLOPT_URL, url.c_str());
  if (sends_body) {
    curl_easy_setopt(h, CURLOPT_POST, 1L);
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, body.data());
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
  } else {
    curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
  }
  // CUSTOMREQUEST only renames the method; the body rules above stay in force.
  curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method_str.c_str());
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, slist.get());
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, static_cast<long>(timeout_.count()));
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &response);
  curl_easy_setopt(h, CURLOPT_HEADERDATA, &response);

  CURLcode rc = curl_easy_perform(h);
  // The handle outlives this call: leave it pointing at nothing of ours.
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, nullptr);
  curl_easy_setopt(h, CURLOPT_POSTFIELDS, nullptr);
  curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, nullptr);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, nullptr);
  curl_easy_setopt(h, CURLOPT_HEADERDATA, nullptr);

  if (rc != CURLE_OK) {
    std::string what = method_str + " " + url + ": " + curl_easy_strerror(rc);
    switch (rc) {
      case CURLE_OPERATION_TIMEDOUT:
        return Status::Timeout(what);
      case CURLE_URL_MALFORMAT:
      case CURLE_UNSUPPORTED_PROTOCOL:
        return Status::InvalidArgument(what);
      default:
        return Status::Unavailable(what);
    }
  }
  long status = 0;
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
  response.status = static_cast<int>(status);
  if (const ExchangeObserver& observe = Observer()) {
    std::string_view request_content_type;
    if (sends_body) request_content_type = "application/json";
    for (const HeaderList* list : {static_cast<const HeaderList*>(&default_headers_), &headers}) {
      for (const auto& [name, value] : *list) {
        if (EqualsIgnoreCase(name, "Content-Type")) request_content_type = value;
      }
    }
    observe(Exchange{.method = method,
                     .url = url,
                     .request_content_type = request_content_type,
                     .request_body = body,
                     .response = response});
  }
  return response;
}

void SetExchangeObserver(ExchangeObserver observer) {
  Observer() = std::move(observer);
}

std::string HttpClient::Cookie(std::string_view name) const {
  curl_slist* cookies = nullptr;
  if (curl_easy_getinfo(curl_.get(), CURLINFO_COOKIELIST, &cookies) != CURLE_OK) return "";
  // Netscape format: domain, subdomains, path, secure, expiry, name, value (tab-separated).
  std::string value;
  for (curl_slist* c = cookies; c != nullptr; c = c->next) {
    std::string_view line(c->data);
    size_t pos = 0;
    for (int field = 0; field < 5 && pos != std::string_view::npos; ++field) {
      pos = line.find('\t', pos);
      if (pos != std::string_view::npos) ++pos;
    }
    if (pos == std::string_view::npos) continue;
    size_t tab = line.find('\t', pos);
    if (tab == std::string_view::npos || line.substr(pos, tab - pos) != name) continue;
    value = std::string(line.substr(tab + 1));
  }
  curl_slist_free_all(cookies);
  return value;
}

std::string UrlEncode(std::string_view s) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(s.size());
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 0xf]);
    }
  }
  return out;
}

}  // namespace toolgate::http
