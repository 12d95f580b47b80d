#include "toolgate/webhook/http_transport.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>

#include "toolgate/base/log.h"
#include "toolgate/webhook/signature.h"

namespace toolgate::webhook {
namespace {

// curl_global_init is not thread-safe; every transport runs it through here first.
void InitCurlOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
      log::Error("libcurl cannot start");
      std::abort();
    }
  });
}

struct CurlDeleter {
  void operator()(CURL* handle) const { curl_easy_cleanup(handle); }
};
struct ListDeleter {
  void operator()(curl_slist* list) const { curl_slist_free_all(list); }
};

// One attempt's state, shared with curl's callbacks.
struct AttemptState {
  const TargetPolicy* policy = nullptr;
  size_t max_response_bytes = 0;
  std::string refusal;  // why the first address was refused, e.g. "loopback address"
  size_t response_bytes = 0;
  bool response_cut = false;
};

// The port of an AF_INET or AF_INET6 socket address, in host order; nullopt for another family
// or a length too short for its family. Copied rather than cast: curl declares it a sockaddr.
std::optional<uint16_t> PortOf(const sockaddr* address, socklen_t length) {
  if (address->sa_family == AF_INET && length >= static_cast<socklen_t>(sizeof(sockaddr_in))) {
    sockaddr_in v4;
    std::memcpy(&v4, address, sizeof v4);
    return ntohs(v4.sin_port);
  }
  if (address->sa_family == AF_INET6 && length >= static_cast<socklen_t>(sizeof(sockaddr_in6))) {
    sockaddr_in6 v6;
    std::memcpy(&v6, address, sizeof v6);
    return ntohs(v6.sin6_port);
  }
  return std::nullopt;
}

// The webhook-signature header's value: the current key's signature, then the previous key's
// during a rotation (a receiver still holding the old secret verifies the second).
std::string SignatureHeader(const Request& request, int64_t timestamp_s) {
  std::string value = Sign(request.signing_key, request.message_id, timestamp_s, request.body);
  if (!request.previous_signing_key.empty() &&
      request.previous_signing_key != request.signing_key) {
    value += ' ';
    value += Sign(request.previous_signing_key, request.message_id, timestamp_s, request.body);
  }
  return value;
}

// curl calls this for every address and port it is about to connect to, after resolving the
// name itself: the endpoint judged is the endpoint used.
curl_socket_t OpenSocket(void* user, curlsocktype purpose, curl_sockaddr* address) {
  auto* attempt = static_cast<AttemptState*>(user);
  auto refuse = [&](std::string why) {
    if (attempt->refusal.empty()) attempt->refusal = std::move(why);
    return CURL_SOCKET_BAD;
  };
  if (purpose != CURLSOCKTYPE_IPCXN) return refuse("not an outbound connection");
  const auto ip = core::IpAddress::FromSockaddr(&address->addr, address->addrlen);
  const auto port = PortOf(&address->addr, address->addrlen);
  if (!ip || !port) return refuse("not an IP address");
  std::string why = EndpointRefusal(*ip, *port, *attempt->policy);
  if (!why.empty()) return refuse(std::move(why));
  return ::socket(address->family, address->socktype | SOCK_CLOEXEC, address->protocol);
}

// The answer's body is drained up to the bound, never kept; past it the transfer stops (the
// status is known by then).
size_t OnBody(char*, size_t size, size_t n, void* user) {
  auto* attempt = static_cast<AttemptState*>(user);
  attempt->response_bytes += size * n;
  if (attempt->response_bytes > attempt->max_response_bytes) {
    attempt->response_cut = true;
    return 0;
  }
  return size * n;
}

}  // namespace

HttpTransport::HttpTransport(Options options) : options_(std::move(options)) {
  InitCurlOnce();
}

AttemptResult HttpTransport::Attempt(const Request& request, int64_t timestamp_s) {
  AttemptResult result;
  if (std::string why = UrlRefusal(request.url, options_.policy); !why.empty()) {
    result.outcome = AttemptOutcome::kRefused;
    result.error = "the URL " + why;
    return result;
  }
  std::unique_ptr<CURL, CurlDeleter> handle(curl_easy_init());
  if (handle == nullptr) {
    result.error = "no transfer could be started";
    return result;
  }
  CURL* h = handle.get();
  curl_slist* raw = nullptr;
  for (const std::string& header :
       {std::string("Content-Type: application/json"), "User-Agent: " + options_.user_agent,
        "webhook-id: " + request.message_id, "webhook-timestamp: " + std::to_string(timestamp_s),
        "webhook-signature: " + SignatureHeader(request, timestamp_s), std::string("Expect:")}) {
    curl_slist* next = curl_slist_append(raw, header.c_str());
    if (next == nullptr) {
      curl_slist_free_all(raw);
      result.error = "no transfer could be started";
      return result;
    }
    raw = next;
  }
  std::unique_ptr<curl_slist, ListDeleter> headers(raw);

  AttemptState attempt;
  attempt.policy = &options_.policy;
  attempt.max_response_bytes = options_.max_response_bytes;
  curl_easy_setopt(h, CURLOPT_URL, request.url.c_str());
  const bool http_allowed = options_.policy.allow_private_targets || options_.policy.allow_http;
  curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, http_allowed ? "http,https" : "https");
  curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
  // An environment proxy would connect on our behalf to an address we never judged.
  curl_easy_setopt(h, CURLOPT_PROXY, "");
  curl_easy_setopt(h, CURLOPT_NOPROXY, "*");
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);  // timeouts must not raise SIGALRM in threads
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(options_.connect_timeout_ms));
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, static_cast<long>(options_.timeout_ms));
  curl_easy_setopt(h, CURLOPT_POST, 1L);
  curl_easy_setopt(h, CURLOPT_POSTFIELDS, request.body.data());
  curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers.get());
  curl_easy_setopt(h, CURLOPT_OPENSOCKETFUNCTION, OpenSocket);
  curl_easy_setopt(h, CURLOPT_OPENSOCKETDATA, &attempt);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, OnBody);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &attempt);
  if (!options_.ca_file.empty()) curl_easy_setopt(h, CURLOPT_CAINFO, options_.ca_file.c_str());

  const CURLcode rc = curl_easy_perform(h);
  long status = 0;
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
  if (status != 0 && (rc == CURLE_OK || (rc == CURLE_WRITE_ERROR && attempt.response_cut))) {
    result.status = static_cast<int>(status);
    result.outcome = OutcomeOfStatus(result.status);
    if (result.outcome != AttemptOutcome::kDelivered) {
      result.error = "the endpoint answered " + std::to_string(result.status);
      if (status >= 300 && status < 400) result.error += ", a redirect, which is not followed";
    }
    return result;
  }
  if (!attempt.refusal.empty()) {
    result.outcome = AttemptOutcome::kRefused;
    result.error = "the endpoint's address is not allowed: " + attempt.refusal;
    return result;
  }
  result.outcome = AttemptOutcome::kNetworkError;
  switch (rc) {
    case CURLE_COULDNT_RESOLVE_HOST:
      result.error = "the host name could not be resolved";
      break;
    case CURLE_COULDNT_CONNECT:
      result.error = "the host refused or did not take the connection";
      break;
    case CURLE_OPERATION_TIMEDOUT:
      result.error = "no answer within " + std::to_string(options_.timeout_ms) + " ms";
      break;
    default:
      // curl_easy_strerror's texts are fixed and name nothing of ours: safe to show.
      result.error = curl_easy_strerror(rc);
  }
  return result;
}

}  // namespace toolgate::webhook
