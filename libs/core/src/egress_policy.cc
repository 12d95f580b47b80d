#include "toolgate/core/egress_policy.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstring>

#include "toolgate/base/strings.h"

namespace toolgate::core {
namespace {

// A port in 1-65535 written as plain decimal digits.
std::optional<int> ParsePort(std::string_view text) {
  if (text.empty() || text.size() > 5) return std::nullopt;
  int port = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    port = port * 10 + (c - '0');
  }
  if (port < 1 || port > 65535) return std::nullopt;
  return port;
}

bool IsLabelChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
}

// A lower-case DNS name: labels of 1-63 letters, digits and hyphens, not starting or ending with
// a hyphen, 253 characters at most. The last label must not be all digits: "127.1" or "1.2.3"
// are legacy spellings of addresses, not names, and must not slip past the IP-literal rules.
bool IsDnsName(std::string_view name) {
  if (name.empty() || name.size() > 253) return false;
  std::size_t start = 0;
  bool last_all_digits = false;
  while (start <= name.size()) {
    std::size_t dot = name.find('.', start);
    if (dot == std::string_view::npos) dot = name.size();
    std::string_view label = name.substr(start, dot - start);
    if (label.empty() || label.size() > 63) return false;
    if (label.front() == '-' || label.back() == '-') return false;
    if (!std::all_of(label.begin(), label.end(), IsLabelChar)) return false;
    last_all_digits =
        std::all_of(label.begin(), label.end(), [](char c) { return c >= '0' && c <= '9'; });
    start = dot + 1;
  }
  return !last_all_digits;
}

// Host text as written by a handler or publisher, normalised for comparison: lower case, one
// trailing dot dropped, IP literals in canonical form without brackets.
std::string NormaliseHost(std::string_view host) {
  if (auto ip = IpAddress::Parse(host); ip.ok()) return ip->ToString();
  std::string out = AsciiLower(host);
  if (!out.empty() && out.back() == '.') out.pop_back();
  return out;
}

bool PrefixMatches(const std::uint8_t* a, const std::uint8_t* b, int bits) {
  int whole = bits / 8;
  if (std::memcmp(a, b, static_cast<std::size_t>(whole)) != 0) return false;
  int rest = bits % 8;
  if (rest == 0) return true;
  auto mask = static_cast<std::uint8_t>(0xff << (8 - rest));
  return (a[whole] & mask) == (b[whole] & mask);
}

struct Range {
  std::array<std::uint8_t, 16> net;
  int bits;
  AddressClass address_class;
};

bool InRange(const IpAddress& address, const Range& range) {
  return PrefixMatches(address.data(), range.net.data(), range.bits);
}

// Checked in order: the first match wins, so narrower ranges come before the wider ones they sit
// in (the metadata address before link-local).
constexpr Range kV4Ranges[] = {
    {{169, 254, 169, 254}, 32, AddressClass::kMetadata},
    {{255, 255, 255, 255}, 32, AddressClass::kBroadcast},
    {{0}, 8, AddressClass::kUnspecified},
    {{10}, 8, AddressClass::kPrivate},
    {{100, 64}, 10, AddressClass::kCgnat},
    {{127}, 8, AddressClass::kLoopback},
    {{169, 254}, 16, AddressClass::kLinkLocal},
    {{172, 16}, 12, AddressClass::kPrivate},
    {{192, 0, 0}, 24, AddressClass::kReserved},  // IETF protocol assignments
    {{192, 0, 2}, 24, AddressClass::kDocumentation},
    {{192, 88, 99}, 24, AddressClass::kReserved},  // 6to4 relay anycast
    {{192, 168}, 16, AddressClass::kPrivate},
    {{198, 18}, 15, AddressClass::kBenchmarking},
    {{198, 51, 100}, 24, AddressClass::kDocumentation},
    {{203, 0, 113}, 24, AddressClass::kDocumentation},
    {{224}, 4, AddressClass::kMulticast},
    {{240}, 4, AddressClass::kReserved},
};

constexpr Range kV6Ranges[] = {
    {{0xfd, 0x00, 0x0e, 0xc2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x02, 0x54},
     128,
     AddressClass::kMetadata},
    {{0}, 128, AddressClass::kUnspecified},
    {{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}, 128, AddressClass::kLoopback},
    {{0x01, 0x00}, 64, AddressClass::kReserved},                          // discard-only
    {{0x00, 0x64, 0xff, 0x9b, 0x00, 0x01}, 48, AddressClass::kReserved},  // local-use NAT64
    {{0x20, 0x01, 0x00, 0x00}, 32, AddressClass::kReserved},  // Teredo: hides an IPv4 address
    {{0x20, 0x01, 0x00, 0x02, 0x00, 0x00}, 48, AddressClass::kBenchmarking},
    {{0x20, 0x01, 0x0d, 0xb8}, 32, AddressClass::kDocumentation},
    {{0x3f, 0xff}, 20, AddressClass::kDocumentation},
    {{0xfc}, 7, AddressClass::kUniqueLocal},
    {{0xfe, 0x80}, 10, AddressClass::kLinkLocal},
    {{0xfe, 0xc0}, 10, AddressClass::kReserved},  // deprecated site-local
    {{0xff}, 8, AddressClass::kMulticast},
};

// The IPv4 address an IPv6 address carries by a well-known embedding, if any.
std::optional<IpAddress> EmbeddedV4(const IpAddress& v6) {
  const std::uint8_t* b = v6.data();
  auto v4_at = [b](int offset) {
    return IpAddress::V4({b[offset], b[offset + 1], b[offset + 2], b[offset + 3]});
  };
  static constexpr std::uint8_t kZero[12] = {};
  static constexpr std::uint8_t kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  static constexpr std::uint8_t kNat64[12] = {0x00, 0x64, 0xff, 0x9b};
  if (std::memcmp(b, kMapped, 12) == 0) return v4_at(12);
  if (std::memcmp(b, kNat64, 12) == 0) return v4_at(12);
  // v4-compatible (deprecated): ::a.b.c.d, except :: and ::1 which are classified as themselves.
  if (std::memcmp(b, kZero, 12) == 0 && (b[12] | b[13] | b[14]) != 0) return v4_at(12);
  if (b[0] == 0x20 && b[1] == 0x02) return v4_at(2);  // 6to4
  return std::nullopt;
}

Status BadEntry(std::size_t index, std::string_view entry, std::string_view why) {
  return Status::InvalidArgument("egress[" + std::to_string(index) + "]: \"" + std::string(entry) +
                                 "\" " + std::string(why));
}

constexpr std::string_view kNotAHost = "is not a host, a *.domain wildcard or *";

// One declared entry into a rule, or the reason it is not one.
Result<EgressRule> ParseEntry(std::size_t index, std::string_view entry) {
  std::string_view host = entry;
  std::optional<std::string_view> port_text;
  if (!host.empty() && host.front() == '[') {
    std::size_t close = host.find(']');
    if (close == std::string_view::npos) return BadEntry(index, entry, kNotAHost);
    std::string_view after = host.substr(close + 1);
    host = host.substr(0, close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return BadEntry(index, entry, kNotAHost);
      port_text = after.substr(1);
    }
  } else if (std::count(host.begin(), host.end(), ':') == 1) {
    std::size_t colon = host.find(':');
    port_text = host.substr(colon + 1);
    host = host.substr(0, colon);
  }
  EgressRule rule;
  if (port_text) {
    auto port = ParsePort(*port_text);
    if (!port) return BadEntry(index, entry, "has no valid port (1-65535)");
    rule.port = *port;
  }
  if (auto ip = IpAddress::Parse(host); ip.ok()) {
    // A bare IPv6 literal needs brackets only when a port follows; "::1" alone is fine.
    rule.host = ip->ToString();
    return rule;
  }
  if (host.find(':') != std::string_view::npos || host.starts_with('[')) {
    return BadEntry(index, entry, kNotAHost);
  }
  std::string lower = AsciiLower(host);
  if (lower == "*") {
    rule.host = lower;
    return rule;
  }
  std::string_view name = lower;
  if (name.starts_with("*.")) name.remove_prefix(2);
  if (!IsDnsName(name)) return BadEntry(index, entry, kNotAHost);
  rule.host = lower;
  return rule;
}

bool HostMatches(const std::string& pattern, const std::string& host) {
  if (pattern == "*") return true;
  if (pattern.starts_with("*.")) {
    std::string_view domain = std::string_view(pattern).substr(1);  // ".x.com"
    return host.size() > domain.size() && host.ends_with(domain) && IsDnsName(host);
  }
  return pattern == host;
}

}  // namespace

Result<EgressList> EgressList::Parse(const std::vector<std::string>& entries) {
  EgressList list;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    auto rule = ParseEntry(i, entries[i]);
    if (!rule.ok()) return rule.status();
    list.rules_.push_back(std::move(rule).value());
  }
  return list;
}

bool EgressList::Allows(std::string_view host, int port) const {
  if (port < 1 || port > 65535) return false;
  std::string normal = NormaliseHost(host);
  if (normal.empty()) return false;
  for (const auto& rule : rules_) {
    bool port_ok = rule.port == 0 ? (port == 80 || port == 443) : port == rule.port;
    if (port_ok && HostMatches(rule.host, normal)) return true;
  }
  return false;
}

Result<IpAddress> IpAddress::Parse(std::string_view text) {
  if (text.size() >= 2 && text.front() == '[' && text.back() == ']') {
    text = text.substr(1, text.size() - 2);
    if (text.find(':') == std::string_view::npos) {
      return Status::InvalidArgument("\"[" + std::string(text) + "]\" is not an IP address");
    }
  }
  std::string copy(text);  // inet_pton wants a terminated string
  IpAddress out;
  if (copy.find(':') == std::string::npos) {
    // inet_pton accepts only the four-part dotted decimal form, unlike inet_aton.
    if (inet_pton(AF_INET, copy.c_str(), out.bytes_.data()) == 1) return out;
  } else if (inet_pton(AF_INET6, copy.c_str(), out.bytes_.data()) == 1) {
    out.v4_ = false;
    return out;
  }
  return Status::InvalidArgument("\"" + copy + "\" is not an IP address");
}

std::optional<IpAddress> IpAddress::FromSockaddr(const sockaddr* address, socklen_t length) {
  if (address == nullptr) return std::nullopt;
  if (address->sa_family == AF_INET && length >= static_cast<socklen_t>(sizeof(sockaddr_in))) {
    sockaddr_in in;
    std::memcpy(&in, address, sizeof(in));
    IpAddress out;
    std::memcpy(out.bytes_.data(), &in.sin_addr, 4);
    return out;
  }
  if (address->sa_family == AF_INET6 && length >= static_cast<socklen_t>(sizeof(sockaddr_in6))) {
    sockaddr_in6 in6;
    std::memcpy(&in6, address, sizeof(in6));
    IpAddress out;
    out.v4_ = false;
    std::memcpy(out.bytes_.data(), &in6.sin6_addr, 16);
    return out;
  }
  return std::nullopt;
}

IpAddress IpAddress::V4(const std::array<std::uint8_t, 4>& bytes) {
  IpAddress out;
  std::copy(bytes.begin(), bytes.end(), out.bytes_.begin());
  return out;
}

IpAddress IpAddress::V6(const std::array<std::uint8_t, 16>& bytes) {
  IpAddress out;
  out.v4_ = false;
  out.bytes_ = bytes;
  return out;
}

std::optional<IpAddress> IpAddress::MappedV4() const {
  static constexpr std::uint8_t kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  if (v4_ || std::memcmp(bytes_.data(), kMapped, 12) != 0) return std::nullopt;
  return V4({bytes_[12], bytes_[13], bytes_[14], bytes_[15]});
}

std::string IpAddress::ToString() const {
  char text[INET6_ADDRSTRLEN] = {};
  inet_ntop(v4_ ? AF_INET : AF_INET6, bytes_.data(), text, sizeof(text));
  return text;
}

std::string IpAddress::ToString(int port) const {
  std::string host = v4_ ? ToString() : "[" + ToString() + "]";
  return host + ":" + std::to_string(port);
}

socklen_t IpAddress::ToSockaddr(int port, sockaddr_storage& out) const {
  std::memset(&out, 0, sizeof(out));
  if (v4_) {
    sockaddr_in in{};
    in.sin_family = AF_INET;
    in.sin_port = htons(static_cast<std::uint16_t>(port));
    std::memcpy(&in.sin_addr, bytes_.data(), 4);
    std::memcpy(&out, &in, sizeof(in));
    return sizeof(in);
  }
  sockaddr_in6 in6{};
  in6.sin6_family = AF_INET6;
  in6.sin6_port = htons(static_cast<std::uint16_t>(port));
  std::memcpy(&in6.sin6_addr, bytes_.data(), 16);
  std::memcpy(&out, &in6, sizeof(in6));
  return sizeof(in6);
}

Result<Cidr> Cidr::Parse(std::string_view text) {
  std::string_view address_text = text;
  std::optional<int> bits;
  if (std::size_t slash = text.find('/'); slash != std::string_view::npos) {
    address_text = text.substr(0, slash);
    std::string_view bits_text = text.substr(slash + 1);
    int value = -1;
    auto [end, error] =
        std::from_chars(bits_text.data(), bits_text.data() + bits_text.size(), value);
    if (error != std::errc() || end != bits_text.data() + bits_text.size() || bits_text.empty()) {
      return Status::InvalidArgument("\"" + std::string(text) + "\" is not a CIDR network");
    }
    bits = value;
  }
  auto address = IpAddress::Parse(address_text);
  if (!address.ok() || address_text.starts_with('[')) {
    return Status::InvalidArgument("\"" + std::string(text) + "\" is not a CIDR network");
  }
  int max_bits = address->is_v4() ? 32 : 128;
  if (!bits) bits = max_bits;
  if (*bits < 0 || *bits > max_bits) {
    return Status::InvalidArgument("\"" + std::string(text) + "\" has a prefix length outside 0-" +
                                   std::to_string(max_bits));
  }
  // Host bits set: compare with the network masked to its prefix.
  std::array<std::uint8_t, 16> masked{};
  std::copy(address->data(), address->data() + address->size(), masked.begin());
  for (int bit = *bits; bit < max_bits; ++bit) {
    masked[static_cast<std::size_t>(bit / 8)] &= static_cast<std::uint8_t>(~(0x80 >> (bit % 8)));
  }
  if (!std::equal(masked.begin(), masked.begin() + static_cast<long>(address->size()),
                  address->data())) {
    return Status::InvalidArgument("\"" + std::string(text) +
                                   "\" has bits set below its prefix length");
  }
  Cidr cidr;
  cidr.network_ = *address;
  cidr.prefix_length_ = *bits;
  return cidr;
}

bool Cidr::Contains(const IpAddress& address) const {
  const IpAddress* candidate = &address;
  std::optional<IpAddress> mapped;
  if (network_.is_v4() && !address.is_v4()) {
    mapped = address.MappedV4();
    if (!mapped) return false;
    candidate = &*mapped;
  }
  if (candidate->is_v4() != network_.is_v4()) return false;
  return PrefixMatches(candidate->data(), network_.data(), prefix_length_);
}

std::string Cidr::ToString() const {
  return network_.ToString() + "/" + std::to_string(prefix_length_);
}

AddressClass ClassifyAddress(const IpAddress& address) {
  if (address.is_v4()) {
    for (const auto& range : kV4Ranges) {
      if (InRange(address, range)) return range.address_class;
    }
    return AddressClass::kPublic;
  }
  for (const auto& range : kV6Ranges) {
    if (InRange(address, range)) return range.address_class;
  }
  if (auto v4 = EmbeddedV4(address)) return ClassifyAddress(*v4);
  // Only 2000::/3 is global unicast; the rest is unassigned or special-purpose.
  if ((address.data()[0] & 0xe0) != 0x20) return AddressClass::kReserved;
  return AddressClass::kPublic;
}

std::string_view AddressClassName(AddressClass address_class) {
  switch (address_class) {
    case AddressClass::kPublic:
      return "public address";
    case AddressClass::kUnspecified:
      return "unspecified address";
    case AddressClass::kLoopback:
      return "loopback address";
    case AddressClass::kPrivate:
      return "private address";
    case AddressClass::kUniqueLocal:
      return "unique-local address";
    case AddressClass::kLinkLocal:
      return "link-local address";
    case AddressClass::kCgnat:
      return "carrier-grade NAT address";
    case AddressClass::kMulticast:
      return "multicast address";
    case AddressClass::kBroadcast:
      return "broadcast address";
    case AddressClass::kReserved:
      return "reserved address";
    case AddressClass::kMetadata:
      return "cloud metadata address";
    case AddressClass::kDocumentation:
      return "documentation address";
    case AddressClass::kBenchmarking:
      return "benchmarking address";
  }
  return "unknown address";
}

}  // namespace toolgate::core
