#include "toolgate/executor/egress_fetch.h"

#include <curl/curl.h>
#include <dlfcn.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <optional>

#include "toolgate/base/strings.h"
#include "toolgate/executor/egress_gateway.h"

namespace toolgate::executor {
namespace {

// A header value may not end the header line early (a way to add headers of one's own).
bool IsFieldValue(std::string_view s) {
  return std::none_of(s.begin(), s.end(), [](char c) { return c == '\r' || c == '\n' || c == 0; });
}

// libcurl's functions, loaded at the first request (see egress_fetch.h for why not linked).
struct CurlApi {
  decltype(&curl_global_init) global_init = nullptr;
  decltype(&curl_easy_init) easy_init = nullptr;
  decltype(&curl_easy_setopt) easy_setopt = nullptr;
  decltype(&curl_easy_perform) easy_perform = nullptr;
  decltype(&curl_easy_cleanup) easy_cleanup = nullptr;
  decltype(&curl_easy_strerror) easy_strerror = nullptr;
  decltype(&curl_url) url = nullptr;
  decltype(&curl_url_set) url_set = nullptr;
  decltype(&curl_url_get) url_get = nullptr;
  decltype(&curl_url_cleanup) url_cleanup = nullptr;
  decltype(&curl_free) free = nullptr;
  decltype(&curl_slist_append) slist_append = nullptr;
  decltype(&curl_slist_free_all) slist_free_all = nullptr;
};

template <typename Fn>
bool Bind(void* library, const char* name, Fn* out) {
  *out = reinterpret_cast<Fn>(::dlsym(library, name));
  return *out != nullptr;
}

// The loaded library, or null when it cannot be loaded. Loads it and runs curl_global_init
// (which is not thread-safe) once, whichever thread comes first; never unloads it.
const CurlApi* Curl() {
  static CurlApi api;
  static bool loaded = false;
  static std::once_flag once;
  std::call_once(once, [] {
    void* library = ::dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) return;
    loaded = Bind(library, "curl_global_init", &api.global_init) &&
             Bind(library, "curl_easy_init", &api.easy_init) &&
             Bind(library, "curl_easy_setopt", &api.easy_setopt) &&
             Bind(library, "curl_easy_perform", &api.easy_perform) &&
             Bind(library, "curl_easy_cleanup", &api.easy_cleanup) &&
             Bind(library, "curl_easy_strerror", &api.easy_strerror) &&
             Bind(library, "curl_url", &api.url) && Bind(library, "curl_url_set", &api.url_set) &&
             Bind(library, "curl_url_get", &api.url_get) &&
             Bind(library, "curl_url_cleanup", &api.url_cleanup) &&
             Bind(library, "curl_free", &api.free) &&
             Bind(library, "curl_slist_append", &api.slist_append) &&
             Bind(library, "curl_slist_free_all", &api.slist_free_all) &&
             api.global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK;
  });
  return loaded ? &api : nullptr;
}

// What one transfer collects: the headers of the last response seen (a CONNECT answer, a
// redirect hop or the final one) and the body, up to a limit.
struct Transfer {
  size_t max_body_bytes = 0;
  bool body_too_large = false;
  EgressResponse response;
};

size_t OnBody(char* data, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  if (t->response.body.size() + size * n > t->max_body_bytes) {
    t->body_too_large = true;
    return 0;  // curl stops with CURLE_WRITE_ERROR
  }
  t->response.body.append(data, size * n);
  return size * n;
}

// Called once per header line, status lines included, of every response on the way: a status
// line starts the set afresh, so what is left at the end is the last response's.
size_t OnHeader(char* data, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  std::string_view line(data, size * n);
  if (line.rfind("HTTP/", 0) == 0) {
    t->response.headers.clear();
    t->response.body.clear();  // a redirect's body is not the answer
    size_t space = line.find(' ');
    t->response.status = space == std::string_view::npos ? 0 : std::atoi(line.data() + space + 1);
  } else if (size_t colon = line.find(':'); colon != std::string_view::npos) {
    t->response.headers.emplace(AsciiLower(Trim(line.substr(0, colon), kBlanks, " \t\r\n")),
                                std::string(Trim(line.substr(colon + 1), kBlanks, " \t\r\n")));
  }
  return size * n;
}

struct CurlDeleter {
  void operator()(CURL* h) const { Curl()->easy_cleanup(h); }
  void operator()(CURLU* u) const { Curl()->url_cleanup(u); }
  void operator()(curl_slist* l) const { Curl()->slist_free_all(l); }
};

// The gateway's word in a response, if it is one: a refusal (403), an upstream failure (502) or
// the call's deadline (504, a Timeout).
std::optional<Status> GatewayError(const EgressResponse& r) {
  const char* header = r.status == 403                      ? kEgressRefusedHeader
                       : r.status == 502 || r.status == 504 ? kEgressErrorHeader
                                                            : nullptr;
  if (header == nullptr) return std::nullopt;
  auto it = r.headers.find(AsciiLower(header));
  if (it == r.headers.end()) return std::nullopt;
  return r.status == 504 ? Status::Timeout(it->second) : Status::Unavailable(it->second);
}

}  // namespace

EgressConfig EgressConfigFromEnvironment() {
  EgressConfig config;
  if (const char* proxy = std::getenv(kEgressProxyEnv)) config.proxy = proxy;
  if (const char* ca = std::getenv(kCaFileEnv)) config.ca_file = ca;
  return config;
}

Result<EgressResponse> EgressFetch(const EgressConfig& config, const EgressRequest& request) {
  if (config.proxy.empty()) return Status::Unavailable(kNoEgressMessage);
  const CurlApi* curl = Curl();
  if (curl == nullptr) return Status::Internal("cannot load libcurl for outbound HTTP");

  std::unique_ptr<CURLU, CurlDeleter> url(curl->url());
  char* scheme = nullptr;
  char* host = nullptr;
  std::string host_name;
  bool parsed = url != nullptr &&
                curl->url_set(url.get(), CURLUPART_URL, request.url.c_str(), 0) == CURLUE_OK &&
                curl->url_get(url.get(), CURLUPART_SCHEME, &scheme, 0) == CURLUE_OK &&
                curl->url_get(url.get(), CURLUPART_HOST, &host, 0) == CURLUE_OK;
  const bool web =
      parsed && (std::string_view(scheme) == "http" || std::string_view(scheme) == "https");
  if (host != nullptr) host_name = host;
  curl->free(scheme);
  curl->free(host);
  if (!web) return Status::InvalidArgument("not an absolute http:// or https:// URL");
  if (!IsHttpToken(request.method)) return Status::InvalidArgument("not an HTTP method");

  std::unique_ptr<curl_slist, CurlDeleter> headers;
  bool content_type = false;
  for (const auto& [name, value] : request.headers) {
    if (!IsHttpToken(name) || !IsFieldValue(value)) {
      return Status::InvalidArgument("header " + name + " is not a valid header");
    }
    content_type = content_type || AsciiLower(name) == "content-type";
    headers.reset(curl->slist_append(headers.release(), (name + ": " + value).c_str()));
  }
  // curl would name a form type for a body sent without one, and wait for "100 Continue".
  if (!content_type) headers.reset(curl->slist_append(headers.release(), "Content-Type:"));
  headers.reset(curl->slist_append(headers.release(), "Expect:"));

  std::unique_ptr<CURL, CurlDeleter> handle(curl->easy_init());
  if (handle == nullptr) return Status::Unavailable("cannot start an HTTP request");
  CURL* h = handle.get();
  Transfer transfer;
  transfer.max_body_bytes = config.max_body_bytes;
  char error_text[CURL_ERROR_SIZE] = "";
  const long timeout_ms = static_cast<long>(std::max<int64_t>(request.timeout_ms, 1));
  const std::string proxy = "http://" + config.proxy;

  curl->easy_setopt(h, CURLOPT_URL, request.url.c_str());
  curl->easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl->easy_setopt(h, CURLOPT_ERRORBUFFER, error_text);
  curl->easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
  curl->easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
  // Every request through the gateway, https as a CONNECT tunnel (curl's way for https through
  // an http proxy), http in absolute form; no name in NO_PROXY goes around it.
  curl->easy_setopt(h, CURLOPT_PROXY, proxy.c_str());
  curl->easy_setopt(h, CURLOPT_NOPROXY, "");
  curl->easy_setopt(h, CURLOPT_FOLLOWLOCATION, 1L);
  curl->easy_setopt(h, CURLOPT_MAXREDIRS, static_cast<long>(kMaxRedirects));
  curl->easy_setopt(h, CURLOPT_TIMEOUT_MS, timeout_ms);
  curl->easy_setopt(h, CURLOPT_FORBID_REUSE, 1L);  // one request per connection to the gateway
  if (!config.ca_file.empty()) curl->easy_setopt(h, CURLOPT_CAINFO, config.ca_file.c_str());
  curl->easy_setopt(h, CURLOPT_HTTPHEADER, headers.get());
  curl->easy_setopt(h, CURLOPT_WRITEFUNCTION, OnBody);
  curl->easy_setopt(h, CURLOPT_WRITEDATA, &transfer);
  curl->easy_setopt(h, CURLOPT_HEADERFUNCTION, OnHeader);
  curl->easy_setopt(h, CURLOPT_HEADERDATA, &transfer);

  const std::string& method = request.method;
  const bool sends_body =
      !request.body.empty() || method == "POST" || method == "PUT" || method == "PATCH";
  if (sends_body) {
    curl->easy_setopt(h, CURLOPT_POSTFIELDS, request.body.data());
    curl->easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
  }
  // POST stays curl's own, so a 301, 302 or 303 turns it into a GET as browsers do; another
  // method is named as given, on every hop.
  if (method == "HEAD") {
    curl->easy_setopt(h, CURLOPT_NOBODY, 1L);
  } else if (method != "POST" && (method != "GET" || sends_body)) {
    curl->easy_setopt(h, CURLOPT_CUSTOMREQUEST, method.c_str());
  }

  const CURLcode rc = curl->easy_perform(h);
  // The gateway's answer, to the CONNECT or to the request itself.
  if (std::optional<Status> gateway = GatewayError(transfer.response)) return *gateway;
  switch (rc) {
    case CURLE_OK:
      return std::move(transfer.response);
    case CURLE_OPERATION_TIMEDOUT:
      return Status::Timeout("the request to " + host_name + " took longer than " +
                             std::to_string(timeout_ms) + " ms");
    case CURLE_TOO_MANY_REDIRECTS:
      return Status::Unavailable("the request to " + host_name + " was redirected more than " +
                                 std::to_string(kMaxRedirects) + " times");
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CACERT_BADFILE:
      return Status::Unavailable("TLS: " +
                                 std::string(error_text[0] ? error_text : curl->easy_strerror(rc)));
    case CURLE_WRITE_ERROR:
      if (transfer.body_too_large) {
        return Status::Unavailable("the response from " + host_name + " is larger than " +
                                   std::to_string(config.max_body_bytes) + " bytes");
      }
      [[fallthrough]];
    default:
      return Status::Unavailable("the request to " + host_name +
                                 " failed: " + curl->easy_strerror(rc));
  }
}

}  // namespace toolgate::executor
