// Where a webhook may be sent: the defence against a tenant pointing Toolgate's requests at what
// only Toolgate's network can reach (server-side request forgery).
//
// Two checks, both needed:
//   * UrlRefusal, when a URL is configured: https only, no user information, a host, and a host
//     written as an IP address must be a public one. A host name passes here: what it resolves
//     to is known only at delivery, and may change.
//   * AddressRefusal, at delivery, on every address the transport is about to connect to, after
//     it resolved the name itself (HttpTransport does this in curl's socket callback), so the
//     address judged is the address used and a name that resolves to a public address when
//     configured and to 127.0.0.1 later (DNS rebinding) is refused then.
// Refused: every address class core::ClassifyAddress does not call public (loopback, RFC 1918,
// link-local, cloud metadata, unique local, CGNAT, multicast, reserved, documentation; IPv6
// forms embedding an IPv4 address are judged by that address, so ::ffff:127.0.0.1 is loopback).
//
// TargetPolicy::allow_private_targets lifts both, and allows http: for development and tests,
// where the receiver runs on the loopback. Pure functions, thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "toolgate/core/egress_policy.h"

namespace toolgate::webhook {

struct TargetPolicy {
  // Development and tests only: http as well as https, and addresses of every class.
  bool allow_private_targets = false;
};

inline constexpr size_t kMaxUrlLength = 2048;

// Why url may not be a webhook target ("must be an https URL", "its host is a loopback
// address", ...), or "" when it may. The text names no part of the URL, so it may be shown and
// logged.
std::string UrlRefusal(std::string_view url, const TargetPolicy& policy);

// Why a connection to address is refused ("loopback address", ...), or "" when it is allowed.
std::string AddressRefusal(const core::IpAddress& address, const TargetPolicy& policy);

}  // namespace toolgate::webhook
