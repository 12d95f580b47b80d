// McpHostGuard: which Host and Origin headers the MCP endpoints serve, against DNS rebinding
// (docs/mcp.md, "Host and Origin").
//
// A web page of an attacker's site can make a browser send requests to a Toolgate on the
// victim's machine once the attacker's name resolves to 127.0.0.1; such a request still names
// the attacker's host in Host and its page's origin in Origin. So:
//   - Host must name one of the operator's public names (--public-hosts: "name" on any port, or
//     "name:port"), or a loopback name (localhost, 127.0.0.1, [::1]) on any port. An edge with
//     no public names configured that listens on loopback serves the loopback names only; one
//     listening on other addresses, with none configured, cannot tell its names and serves any
//     Host (it warns at start).
//   - Origin, when present, must be the origin of the Host itself (same host and port) or one of
//     the allowed origins (--app-origins); "null" never is.
// Checked before anything else, authentication included. Immutable; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace toolgate::edge {

// Whether a listen address (--host) is one only this machine reaches.
bool IsLoopbackListenAddress(std::string_view address);

class McpHostGuard {
 public:
  struct Options {
    std::vector<std::string> public_hosts;     // "name" or "name:port"
    bool listens_on_loopback = true;           // the edge's --host is a loopback address
    std::vector<std::string> allowed_origins;  // full origins, "https://app.example.com"
  };

  explicit McpHostGuard(Options options);

  // Whether no public name is configured and any Host is therefore served.
  bool ServesAnyHost() const { return any_host_; }

  // nullopt when a request with these headers may be served; otherwise why not, for a 403.
  std::optional<std::string> Check(std::string_view host, std::string_view origin) const;

 private:
  struct Name {
    std::string host;
    std::string port;  // empty: any port
  };
  bool HostAllowed(std::string_view host) const;

  std::vector<Name> names_;
  std::vector<std::string> allowed_origins_;  // lower-cased
  bool any_host_ = false;
};

}  // namespace toolgate::edge
