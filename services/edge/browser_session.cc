#include "browser_session.h"

#include <cctype>
#include <optional>
#include <string>

namespace toolgate::edge {

std::optional<Authority> ParseAuthority(std::string_view text, std::string_view default_port) {
  if (text.empty()) return std::nullopt;
  size_t host_end = text.size();
  size_t colon = std::string_view::npos;
  if (text.front() == '[') {
    size_t close = text.find(']');
    if (close == std::string_view::npos) return std::nullopt;
    host_end = close + 1;
    if (host_end < text.size()) {
      if (text[host_end] != ':') return std::nullopt;
      colon = host_end;
    }
  } else {
    colon = text.rfind(':');
    if (colon != std::string_view::npos) host_end = colon;
  }
  Authority a;
  for (char c : text.substr(0, host_end)) {
    a.host.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  if (colon == std::string_view::npos) {
    a.port = std::string(default_port);
  } else {
    std::string_view port = text.substr(colon + 1);
    if (port.empty() || port.size() > 5) return std::nullopt;
    for (char c : port) {
      if (c < '0' || c > '9') return std::nullopt;
    }
    while (port.size() > 1 && port.front() == '0') port.remove_prefix(1);
    a.port = std::string(port);
  }
  if (a.host.empty()) return std::nullopt;
  return a;
}

bool SessionRequested(std::string_view csrf_header_value) {
  return csrf_header_value == "1";
}

bool SameOrigin(std::string_view origin, std::string_view host) {
  if (origin.empty()) return true;
  std::string_view default_port;
  if (origin.starts_with("http://")) {
    origin.remove_prefix(7);
    default_port = "80";
  } else if (origin.starts_with("https://")) {
    origin.remove_prefix(8);
    default_port = "443";
  } else {
    return false;  // "null" (sandboxed or privacy-sensitive contexts) or a foreign scheme
  }
  if (origin.find('/') != std::string_view::npos) return false;
  auto from = ParseAuthority(origin, default_port);
  auto to = ParseAuthority(host, default_port);
  return from && to && from->host == to->host && from->port == to->port;
}

}  // namespace toolgate::edge
