#include "mcp_host_guard.h"

#include <algorithm>

#include "browser_session.h"
#include "toolgate/base/strings.h"

namespace toolgate::edge {
namespace {

bool IsLoopbackName(std::string_view host) {
  return host == "localhost" || host == "127.0.0.1" || host == "[::1]";
}

}  // namespace

bool IsLoopbackListenAddress(std::string_view address) {
  return address == "localhost" || address == "::1" || address.starts_with("127.");
}

McpHostGuard::McpHostGuard(Options options) {
  for (const std::string& entry : options.public_hosts) {
    auto authority = ParseAuthority(TrimBlanks(entry), "");
    if (authority) names_.push_back({authority->host, authority->port});
  }
  for (const std::string& origin : options.allowed_origins) {
    allowed_origins_.push_back(AsciiLower(TrimBlanks(origin)));
  }
  any_host_ = names_.empty() && !options.listens_on_loopback;
}

bool McpHostGuard::HostAllowed(std::string_view host) const {
  if (any_host_) return true;
  auto authority = ParseAuthority(host, "");
  if (!authority) return false;
  if (IsLoopbackName(authority->host)) return true;
  return std::any_of(names_.begin(), names_.end(), [&](const Name& name) {
    return name.host == authority->host && (name.port.empty() || name.port == authority->port);
  });
}

std::optional<std::string> McpHostGuard::Check(std::string_view host,
                                               std::string_view origin) const {
  if (!HostAllowed(host)) {
    return "The Host header does not name this server (DNS rebinding protection); use one of "
           "its public names, which the operator sets with --public-hosts.";
  }
  if (origin.empty() || SameOrigin(origin, host)) return std::nullopt;
  const std::string lowered = AsciiLower(origin);
  if (std::find(allowed_origins_.begin(), allowed_origins_.end(), lowered) !=
      allowed_origins_.end()) {
    return std::nullopt;
  }
  return "Requests from web pages of another origin are refused; MCP clients send no Origin "
         "header, or this server's own.";
}

}  // namespace toolgate::edge
