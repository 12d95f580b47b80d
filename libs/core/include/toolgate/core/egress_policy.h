// Egress policy: which hosts a tool version may reach, and which addresses nobody may.
//
// Two questions are asked of every outbound request a sandbox makes through the egress gateway:
//   1. Is the host the handler named in the version's declared list?  (EgressList::Allows)
//   2. Is every address that host resolved to one the platform lets anybody reach?
//      (ClassifyAddress, plus the operator's Cidr lists, applied by the gateway)
// The second question is asked after DNS resolution, on the very address the gateway then connects
// to, so a name that resolves to 127.0.0.1 or a private network is refused whatever its spelling.
//
// Everything here is pure computation on values: no I/O, no DNS, no clock. All types are immutable
// values after construction and safe to share between threads for reading.
#pragma once

#include <sys/socket.h>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "toolgate/base/status.h"

namespace toolgate::core {

// One entry of a version's egress declaration, normalised.
struct EgressRule {
  // Lower-case DNS name ("api.x.com"), wildcard ("*.x.com": any name below x.com, at any depth,
  // but not x.com itself), "*" (any host), or an IP literal in canonical text form ("10.0.0.5",
  // "::1" without brackets).
  std::string host;
  int port = 0;  // 0: ports 80 and 443
};

// A version's declaration as published: `"egress": ["api.x.com", "*.x.com:8443", "*"]`.
class EgressList {
 public:
  // Parses the declaration. Each entry is a host (DNS name with letters, digits and hyphens per
  // label, IDNA punycode allowed; an IPv4 literal; an IPv6 literal, bracketed when a port follows),
  // a "*.domain" wildcard, or "*", optionally followed by ":port" (1-65535). Case is ignored.
  // Fails with InvalidArgument whose message starts with the entry, e.g.
  // `egress[1]: "*.*.com" is not a host, a *.domain wildcard or *`. An empty list allows nothing.
  static Result<EgressList> Parse(const std::vector<std::string>& entries);

  // True when some rule admits `host` (as the handler named it: any case, a trailing dot, an IPv6
  // literal with or without brackets) on `port`. Only the declaration is consulted; the addresses
  // the host resolves to are judged separately.
  bool Allows(std::string_view host, int port) const;

  bool empty() const { return rules_.empty(); }
  const std::vector<EgressRule>& rules() const { return rules_; }

 private:
  std::vector<EgressRule> rules_;
};

// An IPv4 or IPv6 address. A value type; IPv4 addresses are never stored as v4-mapped IPv6.
class IpAddress {
 public:
  // "10.0.0.5", "::1", "[::1]". InvalidArgument for anything else (no hostnames, no legacy
  // inet_aton forms like "127.1", no zone ids).
  static Result<IpAddress> Parse(std::string_view text);
  // From a socket address of family AF_INET or AF_INET6; nullopt for any other family or a
  // length too short for its family.
  static std::optional<IpAddress> FromSockaddr(const sockaddr* address, socklen_t length);
  static IpAddress V4(const std::array<std::uint8_t, 4>& bytes);
  static IpAddress V6(const std::array<std::uint8_t, 16>& bytes);

  bool is_v4() const { return v4_; }
  // The address bytes in network order: 4 for IPv4, 16 for IPv6.
  const std::uint8_t* data() const { return bytes_.data(); }
  std::size_t size() const { return v4_ ? 4 : 16; }
  // The IPv4 address inside an IPv4-mapped IPv6 address (::ffff:a.b.c.d); nullopt otherwise.
  std::optional<IpAddress> MappedV4() const;

  // Canonical text: "10.0.0.5", "::1" (no brackets).
  std::string ToString() const;
  // "10.0.0.5:443", "[::1]:443".
  std::string ToString(int port) const;
  // A socket address for connect(2); returns its length.
  socklen_t ToSockaddr(int port, sockaddr_storage& out) const;

  friend bool operator==(const IpAddress&, const IpAddress&) = default;

 private:
  bool v4_ = true;
  std::array<std::uint8_t, 16> bytes_{};
};

// An IPv4 or IPv6 network. Parse("10.0.0.0/8"), Parse("fd00::/8"), Parse("1.2.3.4") (a /32).
class Cidr {
 public:
  // InvalidArgument when the address or prefix length is malformed, or when bits below the
  // prefix are set ("10.0.0.1/8"), which is almost always a typo for a host or another network.
  static Result<Cidr> Parse(std::string_view text);

  // True when `address` is inside the network. An IPv4-mapped IPv6 address is judged as the IPv4
  // address it carries; otherwise IPv4 networks contain only IPv4 addresses and likewise for v6.
  bool Contains(const IpAddress& address) const;

  const IpAddress& network() const { return network_; }
  int prefix_length() const { return prefix_length_; }
  std::string ToString() const;  // "10.0.0.0/8"

 private:
  IpAddress network_;
  int prefix_length_ = 0;
};

// Why an address is not public, or kPublic.
enum class AddressClass {
  kPublic,
  kUnspecified,    // 0.0.0.0/8, ::
  kLoopback,       // 127.0.0.0/8, ::1
  kPrivate,        // RFC 1918: 10/8, 172.16/12, 192.168/16
  kUniqueLocal,    // fc00::/7
  kLinkLocal,      // 169.254/16, fe80::/10
  kCgnat,          // 100.64/10 (RFC 6598 shared address space)
  kMulticast,      // 224/4, ff00::/8
  kBroadcast,      // 255.255.255.255
  kReserved,       // 240/4, 192.0.0/24, 6to4 relay, 64:ff9b:1::/48, fec0::/10, discard, Teredo,
                   // non-global v6
  kMetadata,       // 169.254.169.254, fd00:ec2::254 (cloud instance metadata)
  kDocumentation,  // 192.0.2/24, 198.51.100/24, 203.0.113/24, 2001:db8::/32, 3fff::/20
  kBenchmarking,   // 198.18/15, 2001:2::/48
};

// Classifies an address. IPv6 addresses that embed an IPv4 address (v4-mapped ::ffff:0:0/96,
// v4-compatible ::/96, NAT64 64:ff9b::/96, 6to4 2002::/16) are judged by the IPv4 address inside,
// so ::ffff:127.0.0.1 is loopback. Outside 2000::/3 an IPv6 address is never public.
AddressClass ClassifyAddress(const IpAddress& address);

// "private address", "loopback address", ... ; "public address" for kPublic. The gateway's
// refusals read "egress to 10.0.0.5 is blocked: private address".
std::string_view AddressClassName(AddressClass address_class);

}  // namespace toolgate::core
