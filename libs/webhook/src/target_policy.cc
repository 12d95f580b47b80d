#include "toolgate/webhook/target_policy.h"

#include <curl/curl.h>

#include <algorithm>
#include <charconv>
#include <memory>
#include <optional>
#include <system_error>

namespace toolgate::webhook {
namespace {

struct UrlDeleter {
  void operator()(CURLU* url) const { curl_url_cleanup(url); }
};
struct TextDeleter {
  void operator()(char* text) const { curl_free(text); }
};

// One part of a parsed URL; "" when it has none.
std::string Part(CURLU* url, CURLUPart part) {
  char* text = nullptr;
  if (curl_url_get(url, part, &text, 0) != CURLUE_OK || text == nullptr) return "";
  std::unique_ptr<char, TextDeleter> owned(text);
  return text;
}

// The port a parsed URL connects to: the one written, else its scheme's default.
std::optional<uint16_t> PortOf(CURLU* url) {
  char* text = nullptr;
  if (curl_url_get(url, CURLUPART_PORT, &text, CURLU_DEFAULT_PORT) != CURLUE_OK ||
      text == nullptr) {
    return std::nullopt;
  }
  std::unique_ptr<char, TextDeleter> owned(text);
  const std::string_view digits(text);
  unsigned value = 0;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (error != std::errc() || end != digits.data() + digits.size() || value < 1 || value > 65535) {
    return std::nullopt;
  }
  return static_cast<uint16_t>(value);
}

// An IPv4-mapped IPv6 address as the IPv4 address it carries.
core::IpAddress Plain(const core::IpAddress& address) {
  return address.MappedV4().value_or(address);
}

bool IsUnspecified(const core::IpAddress& address) {
  return Plain(address) == core::IpAddress::V4({0, 0, 0, 0}) || address == core::IpAddress::V6({});
}

bool IsLoopback(const core::IpAddress& address) {
  return core::ClassifyAddress(address) == core::AddressClass::kLoopback;
}

// Whether a denied endpoint's address covers the address connected to (same port assumed).
bool SameHost(const core::IpAddress& denied, const core::IpAddress& address) {
  if (IsUnspecified(denied) || IsUnspecified(address)) return true;
  // A service named by one loopback address may listen on all of them (on 0.0.0.0 or ::).
  if (IsLoopback(denied) && IsLoopback(address)) return true;
  return Plain(denied) == Plain(address);
}

bool IsUrlChar(char c) {
  // Printable ASCII without a space: what a URL can carry once percent-encoded.
  return c > 0x20 && c < 0x7f;
}

}  // namespace

std::string UrlRefusal(std::string_view url, const TargetPolicy& policy) {
  if (url.empty()) return "must not be empty";
  if (url.size() > kMaxUrlLength) {
    return "must be at most " + std::to_string(kMaxUrlLength) + " characters";
  }
  if (!std::all_of(url.begin(), url.end(), IsUrlChar)) {
    return "must be a URL of printable ASCII characters without spaces";
  }
  // curl's own parser: the host judged here is the host the transport will connect to.
  std::unique_ptr<CURLU, UrlDeleter> parsed(curl_url());
  if (parsed == nullptr) return "cannot be checked now";
  const std::string text(url);
  if (curl_url_set(parsed.get(), CURLUPART_URL, text.c_str(), 0) != CURLUE_OK) {
    return "must be an absolute URL such as https://example.com/hooks/toolgate";
  }
  const std::string scheme = Part(parsed.get(), CURLUPART_SCHEME);
  const bool http_allowed = policy.allow_private_targets || policy.allow_http;
  if (scheme != "https" && !(http_allowed && scheme == "http")) {
    return policy.allow_http ? "must be an http or https URL" : "must be an https URL";
  }
  if (!Part(parsed.get(), CURLUPART_USER).empty() ||
      !Part(parsed.get(), CURLUPART_PASSWORD).empty()) {
    return "must not carry user information (user:password@)";
  }
  if (!Part(parsed.get(), CURLUPART_FRAGMENT).empty()) return "must not have a fragment (#...)";
  const std::string host = Part(parsed.get(), CURLUPART_HOST);
  if (host.empty()) return "must name a host";
  // An IP literal is judged now; a name when it is resolved, at delivery.
  if (auto ip = core::IpAddress::Parse(host); ip.ok()) {
    const std::optional<uint16_t> port = PortOf(parsed.get());
    if (!port) return "must have a port from 1 to 65535";
    const std::string refusal = EndpointRefusal(*ip, *port, policy);
    if (refusal == kPlatformEndpoint) return "must not name " + refusal;
    if (!refusal.empty()) return "must not name a host that is a " + refusal;
  }
  return "";
}

std::string EndpointRefusal(const core::IpAddress& address, uint16_t port,
                            const TargetPolicy& policy) {
  for (const auto& [denied, denied_port] : policy.denied_endpoints) {
    if (denied_port == port && SameHost(denied, address)) return std::string(kPlatformEndpoint);
  }
  if (policy.allow_private_targets) return "";
  const core::AddressClass kind = core::ClassifyAddress(address);
  if (kind == core::AddressClass::kMetadata) return std::string(core::AddressClassName(kind));
  for (const core::Cidr& network : policy.allowed_networks) {
    if (network.Contains(address)) return "";
  }
  return AddressRefusal(address, policy);
}

std::string AddressRefusal(const core::IpAddress& address, const TargetPolicy& policy) {
  if (policy.allow_private_targets) return "";
  const core::AddressClass kind = core::ClassifyAddress(address);
  if (kind == core::AddressClass::kPublic) return "";
  return std::string(core::AddressClassName(kind));
}

}  // namespace toolgate::webhook
