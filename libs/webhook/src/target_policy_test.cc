#include "toolgate/webhook/target_policy.h"

#include <gtest/gtest.h>

namespace toolgate::webhook {
namespace {

const TargetPolicy kDefault{};
const TargetPolicy kPrivateAllowed{.allow_private_targets = true};

TEST(TargetPolicyTest, AcceptsAnHttpsUrlOfAPublicHost) {
  EXPECT_EQ(UrlRefusal("https://hooks.example.com/toolgate?token=abc", kDefault), "");
  EXPECT_EQ(UrlRefusal("https://93.184.216.34:8443/hook", kDefault), "");
  EXPECT_EQ(UrlRefusal("https://[2606:2800:220:1:248:1893:25c8:1946]/hook", kDefault), "");
}

TEST(TargetPolicyTest, RefusesEverySchemeButHttpsByDefault) {
  EXPECT_EQ(UrlRefusal("http://hooks.example.com/", kDefault), "must be an https URL");
  EXPECT_EQ(UrlRefusal("ftp://hooks.example.com/", kDefault), "must be an https URL");
  EXPECT_EQ(UrlRefusal("file:///etc/passwd", kDefault), "must be an https URL");
  EXPECT_NE(UrlRefusal("gopher://hooks.example.com/", kDefault), "");
  EXPECT_NE(UrlRefusal("hooks.example.com/path", kDefault), "");
}

TEST(TargetPolicyTest, RefusesHostsThatAreAddressesNobodyMayReach) {
  for (const char* url :
       {"https://127.0.0.1/", "https://127.1.2.3:8443/x", "https://10.0.0.5/",
        "https://172.16.0.1/", "https://192.168.1.1/", "https://169.254.169.254/",
        "https://169.254.1.1/", "https://0.0.0.0/", "https://[::1]/", "https://[::ffff:127.0.0.1]/",
        "https://[::ffff:10.0.0.1]/", "https://[fd00:ec2::254]/", "https://[fe80::1]/",
        "https://[fc00::1]/", "https://100.64.0.1/"}) {
    const std::string refusal = UrlRefusal(url, kDefault);
    EXPECT_TRUE(refusal.starts_with("must not name a host that is a ")) << url << ": " << refusal;
  }
  EXPECT_EQ(UrlRefusal("https://127.0.0.1/", kDefault),
            "must not name a host that is a loopback address");
  EXPECT_EQ(UrlRefusal("https://169.254.169.254/latest/meta-data", kDefault),
            "must not name a host that is a cloud metadata address");
}

TEST(TargetPolicyTest, JudgesNumericHostsAsCurlWouldConnectToThem) {
  // 2130706433 and 0x7f.1 are 127.0.0.1 to curl.
  EXPECT_NE(UrlRefusal("https://2130706433/", kDefault), "");
  EXPECT_NE(UrlRefusal("https://0x7f.1/", kDefault), "");
}

TEST(TargetPolicyTest, RefusesUserInformationFragmentsAndOddCharacters) {
  EXPECT_NE(UrlRefusal("https://user:pw@hooks.example.com/", kDefault), "");
  EXPECT_NE(UrlRefusal("https://hooks.example.com/#frag", kDefault), "");
  EXPECT_NE(UrlRefusal("https://hooks.example.com/a b", kDefault), "");
  EXPECT_NE(UrlRefusal("https://hooks.example.com/\r\nX: y", kDefault), "");
  EXPECT_NE(UrlRefusal("", kDefault), "");
  EXPECT_NE(UrlRefusal("https://hooks.example.com/" + std::string(kMaxUrlLength, 'a'), kDefault),
            "");
}

TEST(TargetPolicyTest, LeavesHostNamesToTheCheckAtDelivery) {
  // What a name resolves to is judged when it is connected to (AddressRefusal).
  EXPECT_EQ(UrlRefusal("https://localhost:8443/", kDefault), "");
}

TEST(TargetPolicyTest, AddressRefusalNamesTheClass) {
  auto address = [](const char* text) { return core::IpAddress::Parse(text).value(); };
  EXPECT_EQ(AddressRefusal(address("127.0.0.1"), kDefault), "loopback address");
  EXPECT_EQ(AddressRefusal(address("::1"), kDefault), "loopback address");
  EXPECT_EQ(AddressRefusal(address("::ffff:127.0.0.1"), kDefault), "loopback address");
  EXPECT_EQ(AddressRefusal(address("10.1.2.3"), kDefault), "private address");
  EXPECT_EQ(AddressRefusal(address("169.254.169.254"), kDefault), "cloud metadata address");
  EXPECT_EQ(AddressRefusal(address("93.184.216.34"), kDefault), "");
}

TEST(TargetPolicyTest, TheDevelopmentPolicyAllowsHttpAndEveryAddress) {
  EXPECT_EQ(UrlRefusal("http://127.0.0.1:8080/hook", kPrivateAllowed), "");
  EXPECT_EQ(UrlRefusal("https://[::1]/", kPrivateAllowed), "");
  EXPECT_EQ(AddressRefusal(core::IpAddress::Parse("10.0.0.1").value(), kPrivateAllowed), "");
  EXPECT_EQ(UrlRefusal("ftp://127.0.0.1/", kPrivateAllowed), "must be an https URL");
}

core::IpAddress Address(const char* text) {
  return core::IpAddress::Parse(text).value();
}
core::Cidr Network(const char* text) {
  return core::Cidr::Parse(text).value();
}

// The operator's egress rules as callbacks follow them: 10.1.0.0/16 and 127.0.0.1/32 opened,
// Redis on 10.1.0.7:6379 and the edge on 127.0.0.1:8080 the platform's own.
TargetPolicy EgressRules() {
  TargetPolicy policy;
  policy.allow_http = true;
  policy.allowed_networks = {Network("10.1.0.0/16"), Network("127.0.0.1/32"),
                             Network("169.254.0.0/16")};
  policy.denied_endpoints = {{Address("10.1.0.7"), 6379}, {Address("127.0.0.1"), 8080}};
  return policy;
}

TEST(TargetPolicyTest, EndpointRefusalRefusesAPlatformEndpointInsideAnAllowedNetwork) {
  const TargetPolicy policy = EgressRules();
  EXPECT_EQ(EndpointRefusal(Address("10.1.0.7"), 6379, policy), kPlatformEndpoint);
  EXPECT_EQ(EndpointRefusal(Address("127.0.0.1"), 8080, policy), kPlatformEndpoint);
  // The same service by another spelling of its address.
  EXPECT_EQ(EndpointRefusal(Address("::ffff:10.1.0.7"), 6379, policy), kPlatformEndpoint);
  EXPECT_EQ(EndpointRefusal(Address("::ffff:127.0.0.1"), 8080, policy), kPlatformEndpoint);
  // A service named by one loopback address may listen on every one.
  EXPECT_EQ(EndpointRefusal(Address("127.0.0.2"), 8080, policy), kPlatformEndpoint);
  EXPECT_EQ(EndpointRefusal(Address("::1"), 8080, policy), kPlatformEndpoint);
  // A connection to the unspecified address reaches this host.
  EXPECT_EQ(EndpointRefusal(Address("0.0.0.0"), 8080, policy), kPlatformEndpoint);
  EXPECT_EQ(EndpointRefusal(Address("::"), 6379, policy), kPlatformEndpoint);
  // Even where the development policy allows everything else.
  TargetPolicy development = policy;
  development.allow_private_targets = true;
  EXPECT_EQ(EndpointRefusal(Address("127.0.0.1"), 8080, development), kPlatformEndpoint);
  EXPECT_EQ(EndpointRefusal(Address("127.0.0.1"), 8081, development), "");
}

TEST(TargetPolicyTest, EndpointRefusalMatchesADeniedEndpointOnItsPortOnly) {
  const TargetPolicy policy = EgressRules();
  EXPECT_EQ(EndpointRefusal(Address("10.1.0.7"), 6380, policy), "");
  EXPECT_EQ(EndpointRefusal(Address("10.1.0.8"), 6379, policy), "");
  EXPECT_EQ(EndpointRefusal(Address("127.0.0.1"), 9090, policy), "");
}

TEST(TargetPolicyTest, EndpointRefusalRefusesEveryPortOfAnUnspecifiedDeniedAddress) {
  TargetPolicy policy = EgressRules();
  policy.denied_endpoints = {{Address("0.0.0.0"), 5432}};
  EXPECT_EQ(EndpointRefusal(Address("10.1.2.3"), 5432, policy), kPlatformEndpoint);
  EXPECT_EQ(EndpointRefusal(Address("93.184.216.34"), 5432, policy), kPlatformEndpoint);
  EXPECT_EQ(EndpointRefusal(Address("10.1.2.3"), 5433, policy), "");
}

TEST(TargetPolicyTest, EndpointRefusalAllowsAPrivateAddressInsideAnAllowedNetworkOnly) {
  const TargetPolicy policy = EgressRules();
  EXPECT_EQ(EndpointRefusal(Address("10.1.2.3"), 80, policy), "");
  EXPECT_EQ(EndpointRefusal(Address("::ffff:10.1.2.3"), 80, policy), "");
  EXPECT_EQ(EndpointRefusal(Address("127.0.0.1"), 9090, policy), "");
  EXPECT_EQ(EndpointRefusal(Address("169.254.1.1"), 80, policy), "");
  // Outside them, refused as by default.
  EXPECT_EQ(EndpointRefusal(Address("10.2.0.1"), 80, policy), "private address");
  EXPECT_EQ(EndpointRefusal(Address("127.0.0.2"), 9090, policy), "loopback address");
  EXPECT_EQ(EndpointRefusal(Address("::1"), 9090, policy), "loopback address");
  EXPECT_EQ(EndpointRefusal(Address("192.168.1.1"), 443, policy), "private address");
  EXPECT_EQ(EndpointRefusal(Address("10.1.2.3"), 80, kDefault), "private address");
}

TEST(TargetPolicyTest, EndpointRefusalAllowsAPublicAddress) {
  EXPECT_EQ(EndpointRefusal(Address("93.184.216.34"), 443, kDefault), "");
  EXPECT_EQ(EndpointRefusal(Address("2606:2800:220:1:248:1893:25c8:1946"), 443, kDefault), "");
  EXPECT_EQ(EndpointRefusal(Address("93.184.216.34"), 6379, EgressRules()), "");
}

TEST(TargetPolicyTest, EndpointRefusalRefusesMetadataEvenInsideAnAllowedNetwork) {
  // 169.254.0.0/16 is opened by EgressRules; the instance's credentials stay out of reach.
  TargetPolicy policy = EgressRules();
  policy.allowed_networks.push_back(Network("169.254.169.254/32"));
  policy.allowed_networks.push_back(Network("fd00::/8"));
  EXPECT_EQ(EndpointRefusal(Address("169.254.169.254"), 80, policy), "cloud metadata address");
  EXPECT_EQ(EndpointRefusal(Address("::ffff:169.254.169.254"), 80, policy),
            "cloud metadata address");
  EXPECT_EQ(EndpointRefusal(Address("fd00:ec2::254"), 80, policy), "cloud metadata address");
  EXPECT_EQ(EndpointRefusal(Address("169.254.169.254"), 80, kDefault), "cloud metadata address");
  // Only the development policy reaches it.
  EXPECT_EQ(EndpointRefusal(Address("169.254.169.254"), 80, kPrivateAllowed), "");
}

TEST(TargetPolicyTest, AddressRefusalIgnoresAllowedNetworks) {
  EXPECT_EQ(AddressRefusal(Address("10.1.2.3"), EgressRules()), "private address");
}

TEST(TargetPolicyTest, AllowHttpAcceptsHttpUrlsButNoOtherScheme) {
  TargetPolicy policy;
  policy.allow_http = true;
  EXPECT_EQ(UrlRefusal("http://hooks.example.com/toolgate", policy), "");
  EXPECT_EQ(UrlRefusal("https://hooks.example.com/toolgate", policy), "");
  EXPECT_EQ(UrlRefusal("ftp://hooks.example.com/", policy), "must be an http or https URL");
  // http is no licence for a non-public address.
  EXPECT_EQ(UrlRefusal("http://127.0.0.1:8080/", policy),
            "must not name a host that is a loopback address");
  EXPECT_EQ(UrlRefusal("http://hooks.example.com/", kDefault), "must be an https URL");
}

TEST(TargetPolicyTest, UrlRefusalAcceptsAnAddressLiteralInsideAnAllowedNetwork) {
  const TargetPolicy policy = EgressRules();
  EXPECT_EQ(UrlRefusal("http://10.1.2.3:8080/hook", policy), "");
  EXPECT_EQ(UrlRefusal("https://10.1.2.3/hook", policy), "");
  EXPECT_EQ(UrlRefusal("http://127.0.0.1:9090/hook", policy), "");
  EXPECT_EQ(UrlRefusal("http://[::ffff:10.1.2.3]:8080/hook", policy), "");
  EXPECT_EQ(UrlRefusal("http://10.2.0.1/hook", policy),
            "must not name a host that is a private address");
  EXPECT_EQ(UrlRefusal("http://169.254.169.254/latest/meta-data", policy),
            "must not name a host that is a cloud metadata address");
}

TEST(TargetPolicyTest, UrlRefusalRefusesAPlatformEndpointByItsPortOrTheSchemesDefault) {
  TargetPolicy policy = EgressRules();
  EXPECT_EQ(UrlRefusal("http://10.1.0.7:6379/", policy),
            "must not name the platform's own endpoint");
  EXPECT_EQ(UrlRefusal("http://127.0.0.1:8080/hook", policy),
            "must not name the platform's own endpoint");
  EXPECT_EQ(UrlRefusal("http://10.1.0.7:6380/", policy), "");
  policy.denied_endpoints.push_back({Address("10.1.0.9"), 80});
  policy.denied_endpoints.push_back({Address("10.1.0.9"), 443});
  EXPECT_EQ(UrlRefusal("http://10.1.0.9/", policy), "must not name the platform's own endpoint");
  EXPECT_EQ(UrlRefusal("https://10.1.0.9/", policy), "must not name the platform's own endpoint");
  EXPECT_EQ(UrlRefusal("https://10.1.0.9:8443/", policy), "");
}

}  // namespace
}  // namespace toolgate::webhook
