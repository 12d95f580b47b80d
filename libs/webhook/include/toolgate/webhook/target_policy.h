// Where a webhook may be sent: the defence against a tenant pointing Toolgate's requests at what
// only Toolgate's network can reach (server-side request forgery).
//
// Two checks, both needed:
//   * UrlRefusal, when a URL is configured: https (or http where the policy allows it), no user
//     information, a host, and a host written as an IP address must be one EndpointRefusal
//     allows on the URL's port. A host name passes here: what it resolves to is known only at
//     delivery, and may change.
//   * EndpointRefusal, at delivery, on every address and port the transport is about to connect
//     to, after it resolved the name itself (HttpTransport does this in curl's socket callback),
//     so the address judged is the address used and a name that resolves to a public address
//     when configured and to 127.0.0.1 later (DNS rebinding) is refused then.
//
// What EndpointRefusal decides, first rule that applies:
//   1. an address:port of denied_endpoints (the platform's own: Redis, PostgreSQL, NATS, the
//      edge) is refused, whatever the rest of the policy allows, allow_private_targets included;
//   2. allow_private_targets allows everything else;
//   3. a cloud metadata address (169.254.169.254, fd00:ec2::254) is refused even inside
//      allowed_networks: it hands out the credentials of the machine Toolgate runs on, and an
//      operator opening a link-local or private range for receivers means no such thing;
//   4. an address inside allowed_networks is allowed although it is not public;
//   5. otherwise AddressRefusal: every address class core::ClassifyAddress does not call public
//      is refused (loopback, RFC 1918, link-local, unique local, CGNAT, multicast, reserved,
//      documentation, ...; IPv6 forms embedding an IPv4 address are judged by that address, so
//      ::ffff:127.0.0.1 is loopback).
//
// Two policies in use: the default (public https receivers only: notification webhooks) and the
// operator's egress rules for tools (allowed_networks from --egress-allow-cidr, denied_endpoints
// from --egress-deny-addr, allow_http: callbacks of asynchronous calls).
// TargetPolicy::allow_private_targets is for development and tests, where the receiver runs on
// the loopback.
//
// Pure functions of their arguments, thread-safe. A policy is a plain value: copy it freely.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "toolgate/core/egress_policy.h"

namespace toolgate::webhook {

struct TargetPolicy {
  // Development and tests only: http as well as https, and addresses of every class but
  // denied_endpoints.
  bool allow_private_targets = false;
  // Networks whose addresses are allowed although not public (the operator's
  // --egress-allow-cidr), metadata addresses excepted. An IPv4-mapped IPv6 address is judged as
  // the IPv4 address it carries (core::Cidr::Contains).
  std::vector<core::Cidr> allowed_networks = {};
  // http:// URLs as well as https:// ones.
  bool allow_http = false;
  // Addresses and ports never connected to, whatever else allows them: the platform's own
  // endpoints. Matched generously, since a service named by one address may listen on many:
  // an IPv4-mapped IPv6 address matches the IPv4 address it carries, a loopback address matches
  // every loopback address (127.0.0.0/8, ::1), and an unspecified address (0.0.0.0, ::) on
  // either side matches every address (a service listening on 0.0.0.0 answers on every address
  // of its host, and a connection to 0.0.0.0 reaches this host). Ports match exactly.
  std::vector<std::pair<core::IpAddress, uint16_t>> denied_endpoints = {};
};

inline constexpr size_t kMaxUrlLength = 2048;

// What EndpointRefusal returns for an address:port of denied_endpoints.
inline constexpr std::string_view kPlatformEndpoint = "the platform's own endpoint";

// Why url may not be a webhook target ("must be an https URL", "must not name a host that is a
// loopback address", "must not name the platform's own endpoint", ...), or "" when it may. A
// host written as an IP address is judged with EndpointRefusal on the URL's port (its scheme's
// default when none is written). The text names no part of the URL, so it may be shown and
// logged.
std::string UrlRefusal(std::string_view url, const TargetPolicy& policy);

// Why a connection to address:port is refused (kPlatformEndpoint, "loopback address", ...), or
// "" when it is allowed: the rules at the top of this file. The text names the address's class,
// never the address, so it may be shown to the tenant who chose the URL.
std::string EndpointRefusal(const core::IpAddress& address, uint16_t port,
                            const TargetPolicy& policy);

// Why a connection to address is refused whatever the port ("loopback address", ...), or "" when
// allow_private_targets is set or the address is public. Neither allowed_networks nor
// denied_endpoints is consulted: use EndpointRefusal at connect time.
std::string AddressRefusal(const core::IpAddress& address, const TargetPolicy& policy);

}  // namespace toolgate::webhook
