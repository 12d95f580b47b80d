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

}  // namespace
}  // namespace toolgate::webhook
