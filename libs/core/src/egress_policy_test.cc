#include "toolgate/core/egress_policy.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>

namespace toolgate::core {
namespace {

EgressList List(const std::vector<std::string>& entries) {
  auto list = EgressList::Parse(entries);
  EXPECT_TRUE(list.ok()) << list.status().ToString();
  return list.ok() ? *list : EgressList();
}

std::string ParseError(const std::vector<std::string>& entries) {
  auto list = EgressList::Parse(entries);
  EXPECT_FALSE(list.ok());
  if (list.ok()) return "";
  EXPECT_EQ(list.status().code(), Status::Code::kInvalidArgument);
  return list.status().message();
}

IpAddress Ip(std::string_view text) {
  auto ip = IpAddress::Parse(text);
  EXPECT_TRUE(ip.ok()) << text;
  return ip.ok() ? *ip : IpAddress();
}

AddressClass Classify(std::string_view text) {
  return ClassifyAddress(Ip(text));
}

Cidr Net(std::string_view text) {
  auto cidr = Cidr::Parse(text);
  EXPECT_TRUE(cidr.ok()) << text << ": " << cidr.status().ToString();
  return cidr.ok() ? *cidr : Cidr();
}

// --- EgressList --------------------------------------------------------------------------------

TEST(EgressListTest, EmptyListAllowsNothing) {
  EgressList list = List({});
  EXPECT_TRUE(list.empty());
  EXPECT_FALSE(list.Allows("api.x.com", 443));
  EXPECT_FALSE(list.Allows("127.0.0.1", 80));
}

TEST(EgressListTest, ExactHostWithoutPortAllowsOnly80And443) {
  EgressList list = List({"api.x.com"});
  EXPECT_TRUE(list.Allows("api.x.com", 443));
  EXPECT_TRUE(list.Allows("api.x.com", 80));
  EXPECT_FALSE(list.Allows("api.x.com", 8443));
  EXPECT_FALSE(list.Allows("api.x.com", 22));
  EXPECT_FALSE(list.Allows("other.x.com", 443));
  EXPECT_FALSE(list.Allows("x.com", 443));
  EXPECT_FALSE(list.Allows("api.x.com.evil.net", 443));
  EXPECT_FALSE(list.Allows("evilapi.x.com", 443));
}

TEST(EgressListTest, ExplicitPortAllowsOnlyThatPort) {
  EgressList list = List({"api.x.com:8443"});
  EXPECT_TRUE(list.Allows("api.x.com", 8443));
  EXPECT_FALSE(list.Allows("api.x.com", 443));
  EXPECT_FALSE(list.Allows("api.x.com", 80));
  EXPECT_EQ(list.rules()[0].host, "api.x.com");
  EXPECT_EQ(list.rules()[0].port, 8443);
}

TEST(EgressListTest, WildcardMatchesSubdomainsButNotTheBareDomain) {
  EgressList list = List({"*.example.com"});
  EXPECT_TRUE(list.Allows("a.example.com", 443));
  EXPECT_TRUE(list.Allows("a.b.example.com", 80));
  EXPECT_FALSE(list.Allows("example.com", 443));
  EXPECT_FALSE(list.Allows("badexample.com", 443));
  EXPECT_FALSE(list.Allows("example.com.evil.net", 443));
  EXPECT_FALSE(list.Allows(".example.com", 443));
}

TEST(EgressListTest, WildcardPlusBareDomainWhenBothListed) {
  EgressList list = List({"*.example.com", "example.com"});
  EXPECT_TRUE(list.Allows("example.com", 443));
  EXPECT_TRUE(list.Allows("www.example.com", 443));
}

TEST(EgressListTest, WildcardWithPort) {
  EgressList list = List({"*.example.com:8443"});
  EXPECT_TRUE(list.Allows("a.example.com", 8443));
  EXPECT_FALSE(list.Allows("a.example.com", 443));
}

TEST(EgressListTest, StarMatchesAnyHostIncludingAddresses) {
  EgressList list = List({"*"});
  EXPECT_TRUE(list.Allows("api.x.com", 443));
  EXPECT_TRUE(list.Allows("localhost", 80));
  EXPECT_TRUE(list.Allows("10.0.0.5", 443));
  EXPECT_TRUE(list.Allows("[::1]", 443));
  EXPECT_FALSE(list.Allows("api.x.com", 8080));
  EXPECT_TRUE(List({"*:8080"}).Allows("api.x.com", 8080));
}

TEST(EgressListTest, CaseInsensitive) {
  EgressList list = List({"API.X.Com", "*.Example.COM"});
  EXPECT_EQ(list.rules()[0].host, "api.x.com");
  EXPECT_EQ(list.rules()[1].host, "*.example.com");
  EXPECT_TRUE(list.Allows("api.x.com", 443));
  EXPECT_TRUE(list.Allows("Api.X.COM", 443));
  EXPECT_TRUE(list.Allows("WWW.EXAMPLE.com", 443));
}

TEST(EgressListTest, TrailingDotIsTheSameHost) {
  EgressList list = List({"api.x.com"});
  EXPECT_TRUE(list.Allows("api.x.com.", 443));
}

TEST(EgressListTest, IpLiteralsMatchInCanonicalForm) {
  EgressList list = List({"10.200.0.2", "[::1]:8080", "2001:db8::1"});
  EXPECT_EQ(list.rules()[1].host, "::1");
  EXPECT_EQ(list.rules()[1].port, 8080);
  EXPECT_EQ(list.rules()[2].host, "2001:db8::1");
  EXPECT_TRUE(list.Allows("10.200.0.2", 80));
  EXPECT_FALSE(list.Allows("10.200.0.3", 80));
  EXPECT_TRUE(list.Allows("[::1]", 8080));
  EXPECT_TRUE(list.Allows("::1", 8080));
  EXPECT_TRUE(list.Allows("[0:0::1]", 8080));
  EXPECT_TRUE(list.Allows("[2001:DB8:0::1]", 443));
}

TEST(EgressListTest, PunycodeAndSingleLabelNamesAreHosts) {
  EgressList list = List({"xn--bcher-kva.example", "localhost"});
  EXPECT_TRUE(list.Allows("xn--bcher-kva.example", 443));
  EXPECT_TRUE(list.Allows("LOCALHOST", 80));
}

TEST(EgressListTest, RejectsBadHostsNamingTheEntry) {
  EXPECT_EQ(ParseError({"api.x.com", "*.*.com"}),
            "egress[1]: \"*.*.com\" is not a host, a *.domain wildcard or *");
  for (const char* bad : {"",
                          "*.",
                          "*x.com",
                          "a*.x.com",
                          "x.*.com",
                          "**",
                          "-a.com",
                          "a-.com",
                          "a..com",
                          ".a.com",
                          "a_b.com",
                          "bücher.example",
                          "http://x.com",
                          "x.com/path",
                          "x.com ",
                          " x.com",
                          "user@x.com",
                          "1.2.3",
                          "127.1",
                          "0x7f.0.0.1",
                          "*.0.0.1",
                          "[x.com]",
                          "[::1",
                          "::1]",
                          "[10.0.0.1]",
                          "fe80::1%eth0"}) {
    std::string message = ParseError({bad});
    EXPECT_TRUE(message.starts_with("egress[0]: \"" + std::string(bad) + "\" ")) << message;
  }
  std::string long_label(64, 'a');
  EXPECT_FALSE(EgressList::Parse({long_label + ".com"}).ok());
  EXPECT_TRUE(EgressList::Parse({std::string(63, 'a') + ".com"}).ok());
}

TEST(EgressListTest, RejectsBadPorts) {
  for (const char* bad : {"x.com:0", "x.com:65536", "x.com:", "x.com:http", "x.com:-1", "x.com:+80",
                          "[::1]:", "[::1]x", "x.com:80:90", "x.com:123456"}) {
    EXPECT_FALSE(EgressList::Parse({bad}).ok()) << bad;
  }
  EXPECT_EQ(ParseError({"x.com:0"}), "egress[0]: \"x.com:0\" has no valid port (1-65535)");
  EXPECT_TRUE(EgressList::Parse({"x.com:1", "x.com:65535"}).ok());
}

TEST(EgressListTest, OutOfRangePortsNeverAllowed) {
  EgressList list = List({"*"});
  EXPECT_FALSE(list.Allows("x.com", 0));
  EXPECT_FALSE(list.Allows("x.com", 65536));
}

// --- IpAddress ---------------------------------------------------------------------------------

TEST(IpAddressTest, ParsesAndFormats) {
  EXPECT_EQ(Ip("10.0.0.5").ToString(), "10.0.0.5");
  EXPECT_TRUE(Ip("10.0.0.5").is_v4());
  EXPECT_EQ(Ip("::1").ToString(), "::1");
  EXPECT_EQ(Ip("[::1]").ToString(), "::1");
  EXPECT_FALSE(Ip("::1").is_v4());
  EXPECT_EQ(Ip("2001:DB8:0:0::1").ToString(), "2001:db8::1");
  EXPECT_EQ(Ip("10.0.0.5").ToString(443), "10.0.0.5:443");
  EXPECT_EQ(Ip("::1").ToString(443), "[::1]:443");
}

TEST(IpAddressTest, RejectsNamesAndLegacyForms) {
  for (const char* bad : {"", "localhost", "127.1", "0x7f000001", "2130706433", "1.2.3.4.5",
                          "256.0.0.1", "[1.2.3.4]", "fe80::1%1", " 1.2.3.4"}) {
    EXPECT_FALSE(IpAddress::Parse(bad).ok()) << bad;
  }
}

TEST(IpAddressTest, RoundTripsThroughSockaddr) {
  for (const char* text : {"192.0.2.7", "2001:db8::7"}) {
    sockaddr_storage storage;
    socklen_t length = Ip(text).ToSockaddr(8080, storage);
    auto back = IpAddress::FromSockaddr(reinterpret_cast<const sockaddr*>(&storage), length);
    ASSERT_TRUE(back.has_value()) << text;
    EXPECT_EQ(*back, Ip(text));
    int port = storage.ss_family == AF_INET
                   ? ntohs(reinterpret_cast<const sockaddr_in*>(&storage)->sin_port)
                   : ntohs(reinterpret_cast<const sockaddr_in6*>(&storage)->sin6_port);
    EXPECT_EQ(port, 8080);
  }
  sockaddr_storage storage;
  socklen_t length = Ip("192.0.2.7").ToSockaddr(80, storage);
  EXPECT_FALSE(IpAddress::FromSockaddr(reinterpret_cast<const sockaddr*>(&storage), length - 1));
  storage.ss_family = AF_UNIX;
  EXPECT_FALSE(IpAddress::FromSockaddr(reinterpret_cast<const sockaddr*>(&storage), length));
}

TEST(IpAddressTest, MappedV4) {
  ASSERT_TRUE(Ip("::ffff:10.1.2.3").MappedV4().has_value());
  EXPECT_EQ(*Ip("::ffff:10.1.2.3").MappedV4(), Ip("10.1.2.3"));
  EXPECT_FALSE(Ip("::1").MappedV4().has_value());
  EXPECT_FALSE(Ip("10.1.2.3").MappedV4().has_value());
}

// --- Cidr --------------------------------------------------------------------------------------

TEST(CidrTest, ContainsV4) {
  Cidr net = Net("10.200.0.0/30");
  EXPECT_TRUE(net.Contains(Ip("10.200.0.0")));
  EXPECT_TRUE(net.Contains(Ip("10.200.0.3")));
  EXPECT_FALSE(net.Contains(Ip("10.200.0.4")));
  EXPECT_FALSE(net.Contains(Ip("10.199.255.255")));
  EXPECT_TRUE(net.Contains(Ip("::ffff:10.200.0.2")));  // judged as the IPv4 inside
  EXPECT_FALSE(net.Contains(Ip("::a00:2")));
  EXPECT_EQ(net.ToString(), "10.200.0.0/30");
}

TEST(CidrTest, ContainsV6AndOddPrefixes) {
  Cidr net = Net("fd00::/8");
  EXPECT_TRUE(net.Contains(Ip("fd12:3456::1")));
  EXPECT_FALSE(net.Contains(Ip("fc00::1")));
  EXPECT_FALSE(net.Contains(Ip("10.0.0.1")));
  EXPECT_TRUE(Net("100.64.0.0/10").Contains(Ip("100.127.255.255")));
  EXPECT_FALSE(Net("100.64.0.0/10").Contains(Ip("100.128.0.0")));
  EXPECT_TRUE(Net("0.0.0.0/0").Contains(Ip("8.8.8.8")));
  EXPECT_TRUE(Net("::/0").Contains(Ip("2001:db8::1")));
}

TEST(CidrTest, BareAddressIsAHostNetwork) {
  Cidr host = Net("1.2.3.4");
  EXPECT_EQ(host.prefix_length(), 32);
  EXPECT_TRUE(host.Contains(Ip("1.2.3.4")));
  EXPECT_FALSE(host.Contains(Ip("1.2.3.5")));
  EXPECT_EQ(Net("::1").prefix_length(), 128);
}

TEST(CidrTest, RejectsMalformed) {
  for (const char* bad :
       {"", "/8", "10.0.0.0/", "10.0.0.0/33", "::/129", "10.0.0.0/-1", "10.0.0.0/8x", "x.com/8",
        "10.0.0.1/8", "fd00::1/8", "[::1]/128", "10.0.0.0/ 8"}) {
    auto cidr = Cidr::Parse(bad);
    EXPECT_FALSE(cidr.ok()) << bad;
    if (!cidr.ok()) {
      EXPECT_NE(cidr.status().message().find(bad), std::string::npos) << bad;
    }
  }
}

// --- ClassifyAddress ---------------------------------------------------------------------------

struct ClassCase {
  const char* address;
  AddressClass expected;
};

TEST(ClassifyAddressTest, EveryBlockedIpv4Range) {
  const ClassCase cases[] = {
      {"0.0.0.0", AddressClass::kUnspecified},
      {"0.255.255.255", AddressClass::kUnspecified},
      {"127.0.0.1", AddressClass::kLoopback},
      {"127.255.255.254", AddressClass::kLoopback},
      {"10.0.0.0", AddressClass::kPrivate},
      {"10.255.255.255", AddressClass::kPrivate},
      {"172.16.0.1", AddressClass::kPrivate},
      {"172.31.255.255", AddressClass::kPrivate},
      {"192.168.0.1", AddressClass::kPrivate},
      {"192.168.255.255", AddressClass::kPrivate},
      {"100.64.0.1", AddressClass::kCgnat},
      {"100.127.255.255", AddressClass::kCgnat},
      {"169.254.0.1", AddressClass::kLinkLocal},
      {"169.254.255.255", AddressClass::kLinkLocal},
      {"169.254.169.254", AddressClass::kMetadata},
      {"224.0.0.1", AddressClass::kMulticast},
      {"239.255.255.255", AddressClass::kMulticast},
      {"240.0.0.1", AddressClass::kReserved},
      {"254.255.255.255", AddressClass::kReserved},
      {"255.255.255.255", AddressClass::kBroadcast},
      {"192.0.0.8", AddressClass::kReserved},
      {"192.88.99.1", AddressClass::kReserved},
      {"192.0.2.1", AddressClass::kDocumentation},
      {"198.51.100.1", AddressClass::kDocumentation},
      {"203.0.113.255", AddressClass::kDocumentation},
      {"198.18.0.1", AddressClass::kBenchmarking},
      {"198.19.255.255", AddressClass::kBenchmarking},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(Classify(c.address), c.expected) << c.address;
  }
}

TEST(ClassifyAddressTest, NeighboursOfBlockedIpv4RangesArePublic) {
  for (const char* address :
       {"1.1.1.1",         "8.8.8.8",     "9.255.255.255",   "11.0.0.0",
        "172.15.255.255",  "172.32.0.0",  "192.167.255.255", "192.169.0.0",
        "100.63.255.255",  "100.128.0.0", "126.255.255.255", "128.0.0.0",
        "169.253.255.255", "169.255.0.0", "223.255.255.255", "198.17.255.255",
        "198.20.0.0",      "192.0.3.0",   "203.0.114.0",     "93.184.216.34"}) {
    EXPECT_EQ(Classify(address), AddressClass::kPublic) << address;
  }
}

TEST(ClassifyAddressTest, EveryBlockedIpv6Range) {
  const ClassCase cases[] = {
      {"::", AddressClass::kUnspecified},
      {"::1", AddressClass::kLoopback},
      {"fc00::1", AddressClass::kUniqueLocal},
      {"fd12:3456:789a::1", AddressClass::kUniqueLocal},
      {"fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", AddressClass::kUniqueLocal},
      {"fe80::1", AddressClass::kLinkLocal},
      {"febf:ffff::1", AddressClass::kLinkLocal},
      {"fec0::1", AddressClass::kReserved},
      {"ff02::1", AddressClass::kMulticast},
      {"ff0e::1", AddressClass::kMulticast},
      {"fd00:ec2::254", AddressClass::kMetadata},
      {"2001:db8::1", AddressClass::kDocumentation},
      {"3fff::1", AddressClass::kDocumentation},
      {"2001:2::1", AddressClass::kBenchmarking},
      {"100::1", AddressClass::kReserved},
      {"2001::1", AddressClass::kReserved},
      {"64:ff9b:1::1", AddressClass::kReserved},
      {"4000::1", AddressClass::kReserved},
      {"::2", AddressClass::kReserved},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(Classify(c.address), c.expected) << c.address;
  }
}

TEST(ClassifyAddressTest, EmbeddedIpv4JudgedByTheAddressInside) {
  const ClassCase cases[] = {
      {"::ffff:127.0.0.1", AddressClass::kLoopback},
      {"::ffff:10.0.0.5", AddressClass::kPrivate},
      {"::ffff:172.16.0.1", AddressClass::kPrivate},
      {"::ffff:192.168.1.1", AddressClass::kPrivate},
      {"::ffff:169.254.169.254", AddressClass::kMetadata},
      {"::ffff:169.254.1.1", AddressClass::kLinkLocal},
      {"::ffff:100.64.0.1", AddressClass::kCgnat},
      {"::ffff:0.0.0.0", AddressClass::kUnspecified},
      {"::ffff:224.0.0.1", AddressClass::kMulticast},
      {"::ffff:240.0.0.1", AddressClass::kReserved},
      {"::ffff:255.255.255.255", AddressClass::kBroadcast},
      {"::ffff:192.0.2.1", AddressClass::kDocumentation},
      {"::127.0.0.1", AddressClass::kLoopback},         // v4-compatible
      {"::10.0.0.1", AddressClass::kPrivate},           // v4-compatible
      {"64:ff9b::7f00:1", AddressClass::kLoopback},     // NAT64 of 127.0.0.1
      {"64:ff9b::a9fe:a9fe", AddressClass::kMetadata},  // NAT64 of 169.254.169.254
      {"2002:7f00:1::", AddressClass::kLoopback},       // 6to4 of 127.0.0.1
      {"2002:c0a8:101::1", AddressClass::kPrivate},     // 6to4 of 192.168.1.1
      {"::ffff:8.8.8.8", AddressClass::kPublic},
      {"64:ff9b::808:808", AddressClass::kPublic},
      {"2002:808:808::1", AddressClass::kPublic},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(Classify(c.address), c.expected) << c.address;
  }
}

TEST(ClassifyAddressTest, GlobalUnicastIpv6IsPublic) {
  for (const char* address :
       {"2606:4700:4700::1111", "2a00:1450:4001:80b::200e", "2001:4860::8888"}) {
    EXPECT_EQ(Classify(address), AddressClass::kPublic) << address;
  }
}

TEST(ClassifyAddressTest, NamesReadInRefusals) {
  EXPECT_EQ(AddressClassName(AddressClass::kPrivate), "private address");
  EXPECT_EQ(AddressClassName(AddressClass::kLoopback), "loopback address");
  EXPECT_EQ(AddressClassName(AddressClass::kLinkLocal), "link-local address");
  EXPECT_EQ(AddressClassName(AddressClass::kMetadata), "cloud metadata address");
  EXPECT_EQ(AddressClassName(AddressClass::kPublic), "public address");
}

}  // namespace
}  // namespace toolgate::core
