// ClientMetadataFetcher: the metadata of an OAuth client that identifies itself by a Client ID
// Metadata Document (draft-ietf-oauth-client-id-metadata-document; MCP 2025-11-25,
// basic/authorization). Such a client_id is an https URL, and the document at it says who the
// client is and where it may be redirected.
//
// The URL comes from whoever starts an authorization request, so fetching it is a request
// forgery risk. The fetch is held to what tool egress is held to:
//   - every address curl is about to connect to (after DNS resolution, on the very socket it
//     opens, so a name cannot be re-pointed in between) must be public (core::ClassifyAddress)
//     or inside an operator's allowed CIDR;
//   - https only, no redirects followed, no proxy from the environment;
//   - one deadline for the whole fetch (DNS, connect, TLS, body), and a size cap after which
//     reading stops.
// Answers are cached: a document for its Cache-Control max-age (clamped), a failure for
// failure_ttl_ms, so a client that points at a slow or hostile host cannot make every
// authorization request fetch again.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "toolgate/base/bounded_ttl_cache.h"
#include "toolgate/base/status.h"
#include "toolgate/core/egress_policy.h"

namespace toolgate::auth {

// A validated document. Every string is the client's own text: escape it wherever it is shown.
struct ClientMetadata {
  std::string client_id;                   // the document's URL, equal to its "client_id"
  std::string client_name;                 // "client_name"; when absent or empty, the URL's host
  std::string logo_uri;                    // only an https URL, else empty
  std::string client_uri;                  // only an https URL, else empty
  std::vector<std::string> redirect_uris;  // non-empty, as given (the caller validates each)
  std::vector<std::string> grant_types;    // default {"authorization_code"}
  std::string token_endpoint_auth_method;  // always "none": anything else is refused
};

struct ClientMetadataOptions {
  int timeout_ms = 5000;         // the whole fetch: DNS, connect, TLS, body
  size_t max_bytes = 64 * 1024;  // a larger document is refused; reading stops there
  // Addresses allowed although not public (an operator's internal clients; tests use
  // 127.0.0.0/8). An address inside one is allowed whatever its class.
  std::vector<core::Cidr> allowed_cidrs;
  std::string ca_file;  // an extra CA bundle for TLS verification (tests); empty: the system's
  int64_t default_ttl_ms = 5 * 60 * 1000;  // a document's lifetime without Cache-Control max-age
  // max-age is clamped to [min_ttl_ms, max_ttl_ms]. no-store and no-cache count as min_ttl_ms:
  // a fetch per authorization request is what the cache is there to prevent. Expires and the
  // other directives are not read.
  int64_t min_ttl_ms = 60 * 1000;
  int64_t max_ttl_ms = 24 * 3600 * 1000;
  // A failed fetch is remembered this long, so a hostile client cannot make us fetch on every
  // request. A client_id that is not a metadata URL is refused without any fetch or caching.
  int64_t failure_ttl_ms = 30 * 1000;
  size_t max_entries = 10000;  // documents and failures together, least recently used first out
  // Never set in production: permits http:// URLs, for unit tests without TLS. The address
  // checks apply all the same.
  bool allow_http_for_tests = false;
  // Monotonic milliseconds, called from any thread; empty: std::chrono::steady_clock. Tests
  // drive the cache with it.
  std::function<int64_t()> now_ms;
};

// Thread-safe: any number of threads may Fetch at once. Concurrent fetches of one URL that is
// not cached may each fetch (the last answer stays cached). Not copyable.
class ClientMetadataFetcher {
 public:
  explicit ClientMetadataFetcher(ClientMetadataOptions options);

  // Whether client_id has the form of a metadata document URL (draft §3): the https scheme, a
  // host (a DNS name or an IP literal, optionally a port), a path other than "/", no "." or ".."
  // path segments (nor their percent-encoded forms), no fragment, no userinfo, only characters a
  // URI may carry, at most 2048 of them. A query is allowed. Pure.
  static bool IsMetadataUrl(std::string_view client_id);

  // The client's metadata, from the cache or fetched (blocking, for at most timeout_ms).
  // Failures, whose messages are safe to show the user ("the client metadata document at <url>
  // is refused: <why>" / "... could not be fetched: <why>"; they never say which address a name
  // resolved to):
  //   InvalidArgument: not a metadata URL; an address refused (naming its class, "loopback
  //     address"); a status other than 200 (redirects included); larger than max_bytes; not
  //     JSON or not an object; client_id missing or not exactly the URL; redirect_uris missing,
  //     empty or not strings; grant_types not a non-empty list of strings; a client_secret
  //     (a document is public, draft §4.1); token_endpoint_auth_method other than "none";
  //     client_name not a string.
  //   Unavailable: DNS failure, connect failure, TLS failure, timeout.
  // Every failure but "not a metadata URL" is cached for failure_ttl_ms.
  Result<ClientMetadata> Fetch(std::string_view client_id);

 private:
  // A document or the refusal of one; shared so that a cache hit copies a pointer.
  using Answer = std::shared_ptr<const Result<ClientMetadata>>;

  // Fetches and validates url (which IsMetadataUrl, or allow_http_for_tests, admitted; host is
  // its host); sets *ttl_ms to how long the answer may be served.
  Result<ClientMetadata> Load(const std::string& url, std::string_view host, int64_t* ttl_ms) const;

  const ClientMetadataOptions options_;
  BoundedTtlCache<std::string, Answer> cache_;
};

}  // namespace toolgate::auth
