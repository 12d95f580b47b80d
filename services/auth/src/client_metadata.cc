#include "toolgate/auth/client_metadata.h"

#include <curl/curl.h>
#include <sys/socket.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "toolgate/base/json.h"
#include "toolgate/base/strings.h"

namespace toolgate::auth {
namespace {

constexpr size_t kMaxUrlLength = 2048;
// How much of a client's text a message repeats.
constexpr size_t kMaxQuoted = 256;

// curl_global_init is not thread-safe; every fetch runs it through here first.
void InitCurlOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
      std::fprintf(stderr, "libcurl failed to initialize\n");
      std::abort();
    }
  });
}

// What RFC 3986 lets a URI carry: unreserved, reserved, and '%' for percent-encoding. Anything
// else (spaces, controls, quotes, non-ASCII) would be encoded or rejected differently by curl and
// by whoever compares client_id strings, so it is refused outright.
bool IsUriChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) ||
         std::string_view("-._~:/?#[]@!$&'()*+,;=%").find(c) != std::string_view::npos;
}

// The client's text as a message may repeat it: printable ASCII only, and not too much of it.
std::string Quoted(std::string_view text) {
  std::string out;
  for (char c : text.substr(0, kMaxQuoted)) {
    out += (c >= 0x20 && c < 0x7f) ? c : '?';
  }
  if (text.size() > kMaxQuoted) out += "...";
  return out;
}

Status Refused(std::string_view url, std::string_view why) {
  return Status::InvalidArgument("the client metadata document at " + Quoted(url) +
                                 " is refused: " + std::string(why));
}

Status Unreachable(std::string_view url, std::string_view why) {
  return Status::Unavailable("the client metadata document at " + Quoted(url) +
                             " could not be fetched: " + std::string(why));
}

struct UrlParts {
  std::string scheme;     // lower-case
  std::string_view host;  // as written, IPv6 literals with their brackets; no port
  std::string_view path;  // up to the query or fragment; may be empty
  bool has_fragment = false;
};

// Splits an absolute URL into *parts; returns why it is not a usable one, empty when it is.
// Checks what every URL we fetch or pass on must satisfy: characters, a scheme, a host that is
// a name or an IP literal, a valid port, no userinfo.
std::string SplitUrl(std::string_view url, UrlParts* parts) {
  if (url.empty()) return "the URL is empty";
  if (url.size() > kMaxUrlLength) return "the URL is longer than 2048 characters";
  if (!std::all_of(url.begin(), url.end(), IsUriChar)) {
    return "the URL has characters a URL cannot carry";
  }
  const size_t scheme_end = url.find("://");
  if (scheme_end == std::string_view::npos || scheme_end == 0) return "the URL has no scheme";
  parts->scheme = AsciiLower(url.substr(0, scheme_end));
  parts->has_fragment = url.find('#') != std::string_view::npos;

  std::string_view rest = url.substr(scheme_end + 3);
  const size_t authority_end = rest.find_first_of("/?#");
  const std::string_view authority = rest.substr(0, authority_end);
  const std::string_view after =
      authority_end == std::string_view::npos ? std::string_view() : rest.substr(authority_end);
  parts->path = after.substr(0, after.find_first_of("?#"));
  if (authority.find('@') != std::string_view::npos) return "the URL has user information";

  std::string_view port;
  bool has_port = false;
  if (authority.starts_with('[')) {
    const size_t close = authority.find(']');
    if (close == std::string_view::npos) return "the URL's host is not a name or an IP address";
    parts->host = authority.substr(0, close + 1);
    // Brackets hold an IPv6 literal only; IpAddress::Parse would take "[10.0.0.1]" too.
    auto ip = core::IpAddress::Parse(parts->host);
    if (!ip.ok() || ip->is_v4()) return "the URL's host is not a name or an IP address";
    const std::string_view tail = authority.substr(close + 1);
    if (!tail.empty()) {
      if (tail.front() != ':') return "the URL's host is not a name or an IP address";
      port = tail.substr(1);
      has_port = true;
    }
  } else {
    const size_t colon = authority.find(':');
    parts->host = authority.substr(0, colon);
    if (colon != std::string_view::npos) {
      port = authority.substr(colon + 1);
      has_port = true;
    }
    for (char c : parts->host) {
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '.' && c != '_') {
        return "the URL's host is not a name or an IP address";
      }
    }
  }
  if (parts->host.empty()) return "the URL has no host";
  if (has_port) {
    int value = 0;
    const bool digits =
        !port.empty() && port.size() <= 5 &&
        std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; });
    for (char c : digits ? port : std::string_view()) value = value * 10 + (c - '0');
    if (!digits || value < 1 || value > 65535) return "the URL's port is not a port number";
  }
  return "";
}

// Why url is not a metadata document URL (draft §3); empty when it is.
std::string MetadataUrlProblem(std::string_view url, bool allow_http, UrlParts* parts) {
  std::string problem = SplitUrl(url, parts);
  if (!problem.empty()) return problem;
  if (parts->scheme != "https" && !(allow_http && parts->scheme == "http")) {
    return "the client_id is not an https URL";
  }
  if (parts->has_fragment) return "the URL has a fragment";
  if (parts->path.empty() || parts->path == "/") return "the URL has no path";
  // Dot segments would let one document answer for several client_ids once a server or curl
  // normalises the path; their percent-encoded forms normalise the same way (RFC 3986 §6.2.2).
  std::string_view segments = parts->path.substr(1);
  for (;;) {
    const size_t slash = segments.find('/');
    const std::string segment = AsciiLower(segments.substr(0, slash));
    if (segment == "." || segment == ".." || segment == "%2e" || segment == "%2e%2e" ||
        segment == ".%2e" || segment == "%2e.") {
      return "the URL has a \".\" or \"..\" path segment";
    }
    if (slash == std::string_view::npos) break;
    segments.remove_prefix(slash + 1);
  }
  return "";
}

// logo_uri and client_uri are shown and linked to: only a well-formed https URL is kept.
std::string HttpsUrlOrEmpty(std::string value) {
  UrlParts parts;
  if (!SplitUrl(value, &parts).empty() || parts.scheme != "https") return "";
  return value;
}

// One transfer's state, shared with curl's callbacks.
struct Transfer {
  const ClientMetadataOptions* options = nullptr;
  std::string refusal;        // the class of the first address refused, e.g. "loopback address"
  int status = 0;             // of the latest response head
  std::string cache_control;  // of the latest response head; several headers joined by ","
  std::string body;
  bool too_large = false;
};

// The address check. curl calls this for every address it is about to connect to, after
// resolving the name itself, so the address judged is the address used.
curl_socket_t OpenSocket(void* user, curlsocktype purpose, curl_sockaddr* address) {
  auto* transfer = static_cast<Transfer*>(user);
  auto refuse = [&](std::string_view why) {
    if (transfer->refusal.empty()) transfer->refusal = why;
    return CURL_SOCKET_BAD;
  };
  if (purpose != CURLSOCKTYPE_IPCXN) return refuse("not an outbound connection");
  const auto ip = core::IpAddress::FromSockaddr(&address->addr, address->addrlen);
  if (!ip) return refuse("not an IP address");
  const bool allowed =
      std::any_of(transfer->options->allowed_cidrs.begin(), transfer->options->allowed_cidrs.end(),
                  [&](const core::Cidr& cidr) { return cidr.Contains(*ip); });
  const core::AddressClass kind = core::ClassifyAddress(*ip);
  if (!allowed && kind != core::AddressClass::kPublic) {
    return refuse(core::AddressClassName(kind));
  }
  return ::socket(address->family, address->socktype | SOCK_CLOEXEC, address->protocol);
}

// Called once per header line, status lines included; a status line (a 100 Continue, then the
// answer) starts the head afresh.
size_t OnHeader(char* data, size_t size, size_t n, void* user) {
  auto* transfer = static_cast<Transfer*>(user);
  const std::string_view line(data, size * n);
  if (line.starts_with("HTTP/")) {
    transfer->status = 0;
    transfer->cache_control.clear();
    const size_t space = line.find(' ');
    if (space != std::string_view::npos) {
      for (char c : line.substr(space + 1, 3)) {
        if (c < '0' || c > '9') break;
        transfer->status = transfer->status * 10 + (c - '0');
      }
    }
  } else if (const size_t colon = line.find(':'); colon != std::string_view::npos) {
    if (AsciiLower(TrimBlanks(line.substr(0, colon))) == "cache-control") {
      if (!transfer->cache_control.empty()) transfer->cache_control += ',';
      transfer->cache_control += Trim(line.substr(colon + 1), kBlanks, " \t\r\n");
    }
  }
  return size * n;
}

// Returning less than given makes curl stop the transfer at once (CURLE_WRITE_ERROR): nothing
// beyond max_bytes is buffered, and the body of an answer other than 200 is not read at all.
size_t OnBody(char* data, size_t size, size_t n, void* user) {
  auto* transfer = static_cast<Transfer*>(user);
  if (transfer->status != 200) return 0;
  if (transfer->body.size() + size * n > transfer->options->max_bytes) {
    transfer->too_large = true;
    return 0;
  }
  transfer->body.append(data, size * n);
  return size * n;
}

// How long a document may be served, from its Cache-Control.
int64_t DocumentTtl(std::string_view cache_control, const ClientMetadataOptions& options) {
  bool no_store = false;
  int64_t max_age_ms = -1;
  while (!cache_control.empty()) {
    const size_t comma = cache_control.find(',');
    const std::string_view directive = TrimBlanks(cache_control.substr(0, comma));
    cache_control =
        comma == std::string_view::npos ? std::string_view() : cache_control.substr(comma + 1);
    const size_t equals = directive.find('=');
    const std::string name = AsciiLower(TrimBlanks(directive.substr(0, equals)));
    if (name == "no-store" || name == "no-cache") {
      no_store = true;
    } else if (name == "max-age" && equals != std::string_view::npos) {
      const std::string_view value = Trim(TrimBlanks(directive.substr(equals + 1)), "\"");
      if (value.empty() ||
          !std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; })) {
        continue;
      }
      // Saturate: anything beyond a year is clamped to max_ttl_ms below anyway.
      int64_t seconds = 0;
      for (char c : value) seconds = std::min<int64_t>(seconds * 10 + (c - '0'), 365 * 86400);
      max_age_ms = seconds * 1000;
    }
  }
  if (no_store) return options.min_ttl_ms;
  if (max_age_ms < 0) return options.default_ttl_ms;
  return std::clamp(max_age_ms, options.min_ttl_ms, options.max_ttl_ms);
}

Result<ClientMetadata> ParseDocument(const std::string& url, std::string_view host,
                                     std::string_view body) {
  auto doc = ParseJson(body);
  if (!doc.ok()) return Refused(url, "the document is not JSON");
  simdjson::dom::object object;
  if (doc->root.get_object().get(object)) return Refused(url, "the document is not a JSON object");

  ClientMetadata metadata;
  switch (GetString(object, "client_id", &metadata.client_id)) {
    case Field::kAbsent:
      return Refused(url, "the document has no client_id");
    case Field::kWrongType:
      return Refused(url, "the document's client_id is not a string");
    case Field::kOk:
      break;
  }
  // Simple string comparison (draft §4): no normalisation, or one document could speak for
  // URLs its host never published it at.
  if (metadata.client_id != url) {
    return Refused(url, "the document's client_id is not the URL it was fetched from");
  }

  switch (GetStringArray(object, "redirect_uris", &metadata.redirect_uris)) {
    case Field::kAbsent:
      return Refused(url, "the document has no redirect_uris");
    case Field::kWrongType:
      return Refused(url, "the document's redirect_uris is not a list of strings");
    case Field::kOk:
      if (metadata.redirect_uris.empty()) {
        return Refused(url, "the document's redirect_uris is empty");
      }
      break;
  }

  switch (GetStringArray(object, "grant_types", &metadata.grant_types)) {
    case Field::kAbsent:
      metadata.grant_types = {"authorization_code"};  // RFC 7591 §2
      break;
    case Field::kWrongType:
      return Refused(url, "the document's grant_types is not a list of strings");
    case Field::kOk:
      if (metadata.grant_types.empty()) return Refused(url, "the document's grant_types is empty");
      break;
  }

  metadata.token_endpoint_auth_method = "none";
  std::string method;
  switch (GetString(object, "token_endpoint_auth_method", &method)) {
    case Field::kAbsent:
      break;
    case Field::kWrongType:
      return Refused(url, "the document's token_endpoint_auth_method is not a string");
    case Field::kOk:
      if (method != "none") {
        return Refused(url, "token_endpoint_auth_method \"" + Quoted(method) +
                                "\" is not supported; only \"none\" is");
      }
      break;
  }

  // The document is public: a secret in it is no secret (draft §4.1 forbids one).
  std::string ignored;
  if (GetRaw(object, "client_secret", &ignored) != Field::kAbsent) {
    return Refused(url, "the document has a client_secret, which a public document must not");
  }

  switch (GetString(object, "client_name", &metadata.client_name)) {
    case Field::kWrongType:
      return Refused(url, "the document's client_name is not a string");
    case Field::kAbsent:
    case Field::kOk:
      if (metadata.client_name.empty()) metadata.client_name = AsciiLower(host);
      break;
  }

  std::string uri;
  if (GetString(object, "logo_uri", &uri) == Field::kOk) {
    metadata.logo_uri = HttpsUrlOrEmpty(std::move(uri));
  }
  uri.clear();
  if (GetString(object, "client_uri", &uri) == Field::kOk) {
    metadata.client_uri = HttpsUrlOrEmpty(std::move(uri));
  }
  return metadata;
}

struct CurlDeleter {
  void operator()(CURL* handle) const { curl_easy_cleanup(handle); }
};

// Owns a curl_slist of request header lines.
class HeaderList {
 public:
  HeaderList() = default;
  HeaderList(const HeaderList&) = delete;
  HeaderList& operator=(const HeaderList&) = delete;
  ~HeaderList() { curl_slist_free_all(list_); }

  // False when out of memory (the list stays as it was).
  bool Add(const char* line) {
    curl_slist* grown = curl_slist_append(list_, line);
    if (grown == nullptr) return false;
    list_ = grown;
    return true;
  }
  curl_slist* get() const { return list_; }

 private:
  curl_slist* list_ = nullptr;
};

}  // namespace

ClientMetadataFetcher::ClientMetadataFetcher(ClientMetadataOptions options)
    : options_([&] {
        if (!options.now_ms) {
          options.now_ms = [] {
            return std::chrono::duration_cast<std::chrono::milliseconds>(
                       std::chrono::steady_clock::now().time_since_epoch())
                .count();
          };
        }
        return std::move(options);
      }()),
      cache_(options_.max_entries) {
  InitCurlOnce();
}

bool ClientMetadataFetcher::IsMetadataUrl(std::string_view client_id) {
  UrlParts parts;
  return MetadataUrlProblem(client_id, /*allow_http=*/false, &parts).empty();
}

Result<ClientMetadata> ClientMetadataFetcher::Fetch(std::string_view client_id) {
  UrlParts parts;
  const std::string problem = MetadataUrlProblem(client_id, options_.allow_http_for_tests, &parts);
  if (!problem.empty()) return Refused(client_id, problem);

  const std::string url(client_id);
  if (auto cached = cache_.Get(url, options_.now_ms())) return **cached;

  const uint64_t generation = cache_.generation();
  int64_t ttl_ms = options_.failure_ttl_ms;
  auto answer = std::make_shared<const Result<ClientMetadata>>(Load(url, parts.host, &ttl_ms));
  // Taken after the fetch: a slow fetch must not shorten what it earned.
  cache_.Put(url, answer, options_.now_ms() + ttl_ms, generation);
  return *answer;
}

Result<ClientMetadata> ClientMetadataFetcher::Load(const std::string& url, std::string_view host,
                                                   int64_t* ttl_ms) const {
  *ttl_ms = options_.failure_ttl_ms;
  std::unique_ptr<CURL, CurlDeleter> handle(curl_easy_init());
  if (handle == nullptr) return Unreachable(url, "no transfer could be started");
  CURL* h = handle.get();

  HeaderList headers;
  if (!headers.Add("Accept: application/json") || !headers.Add("User-Agent: Toolgate")) {
    return Unreachable(url, "no transfer could be started");
  }

  Transfer transfer;
  transfer.options = &options_;
  curl_easy_setopt(h, CURLOPT_URL, url.c_str());
  curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR,
                   options_.allow_http_for_tests ? "http,https" : "https");
  curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
  // An environment proxy would connect on our behalf to an address we never judged.
  curl_easy_setopt(h, CURLOPT_PROXY, "");
  curl_easy_setopt(h, CURLOPT_NOPROXY, "*");
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);  // timeouts must not raise SIGALRM in threads
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, static_cast<long>(options_.timeout_ms));
  curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers.get());
  curl_easy_setopt(h, CURLOPT_OPENSOCKETFUNCTION, OpenSocket);
  curl_easy_setopt(h, CURLOPT_OPENSOCKETDATA, &transfer);
  curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, OnHeader);
  curl_easy_setopt(h, CURLOPT_HEADERDATA, &transfer);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, OnBody);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &transfer);
  // Refuses a declared Content-Length beyond the cap before any body is read; OnBody covers an
  // answer that declares none.
  curl_easy_setopt(h, CURLOPT_MAXFILESIZE_LARGE, static_cast<curl_off_t>(options_.max_bytes));
  if (!options_.ca_file.empty()) curl_easy_setopt(h, CURLOPT_CAINFO, options_.ca_file.c_str());

  const CURLcode rc = curl_easy_perform(h);

  if (transfer.status != 0 && transfer.status != 200) {
    if (transfer.status >= 300 && transfer.status < 400) {
      return Refused(url, "the server answered " + std::to_string(transfer.status) +
                              ", a redirect, which is not followed");
    }
    return Refused(url,
                   "the server answered " + std::to_string(transfer.status) + " instead of 200");
  }
  if (transfer.too_large || rc == CURLE_FILESIZE_EXCEEDED) {
    return Refused(url,
                   "the document is larger than " + std::to_string(options_.max_bytes) + " bytes");
  }
  if (rc != CURLE_OK && !transfer.refusal.empty()) {
    return Refused(url, "the host's address is not public: " + transfer.refusal);
  }
  switch (rc) {
    case CURLE_OK:
      break;
    case CURLE_COULDNT_RESOLVE_HOST:
      return Unreachable(url, "the host name could not be resolved");
    case CURLE_COULDNT_CONNECT:
      return Unreachable(url, "the host refused or did not take the connection");
    case CURLE_OPERATION_TIMEDOUT:
      return Unreachable(
          url, "no complete answer within " + std::to_string(options_.timeout_ms) + " ms");
    case CURLE_PEER_FAILED_VERIFICATION:
      return Unreachable(url, "the host's TLS certificate could not be verified");
    default:
      // curl_easy_strerror's texts are fixed and name nothing of ours: safe to show.
      return Unreachable(url, curl_easy_strerror(rc));
  }

  auto metadata = ParseDocument(url, host, transfer.body);
  if (metadata.ok()) *ttl_ms = DocumentTtl(transfer.cache_control, options_);
  return metadata;
}

}  // namespace toolgate::auth
