#include "toolgate/webhook/target_policy.h"

#include <curl/curl.h>

#include <algorithm>
#include <memory>

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
  if (scheme != "https" && !(policy.allow_private_targets && scheme == "http")) {
    return "must be an https URL";
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
    const std::string refusal = AddressRefusal(*ip, policy);
    if (!refusal.empty()) return "must not name a host that is a " + refusal;
  }
  return "";
}

std::string AddressRefusal(const core::IpAddress& address, const TargetPolicy& policy) {
  if (policy.allow_private_targets) return "";
  const core::AddressClass kind = core::ClassifyAddress(address);
  if (kind == core::AddressClass::kPublic) return "";
  return std::string(core::AddressClassName(kind));
}

}  // namespace toolgate::webhook
