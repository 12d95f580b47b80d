#include "http_front.h"

#include <gtest/gtest.h>

namespace toolgate::edge {
namespace {

TEST(ClientAddressTest, AnUntrustedPeerIsTheClientWhateverItForwards) {
  EXPECT_EQ(ClientAddress("203.0.113.7", "198.51.100.1", {}), "203.0.113.7");
  EXPECT_EQ(ClientAddress("203.0.113.7", "198.51.100.1", {"10.0.0.1"}), "203.0.113.7");
}

TEST(ClientAddressTest, ATrustedProxyNamesTheRightMostUntrustedAddress) {
  const std::vector<std::string> proxies = {"10.0.0.1", "10.0.0.2"};
  // The client's own X-Forwarded-For entry (left) is whatever it wrote; only what the proxies
  // appended counts.
  EXPECT_EQ(ClientAddress("10.0.0.1", "1.1.1.1, 198.51.100.9, 10.0.0.2", proxies), "198.51.100.9");
  EXPECT_EQ(ClientAddress("10.0.0.1", "2001:db8::1", proxies), "2001:db8::1");
}

TEST(ClientAddressTest, NothingUsableFallsBackToThePeer) {
  const std::vector<std::string> proxies = {"10.0.0.1"};
  EXPECT_EQ(ClientAddress("10.0.0.1", "", proxies), "10.0.0.1");
  EXPECT_EQ(ClientAddress("10.0.0.1", "10.0.0.1", proxies), "10.0.0.1");
  EXPECT_EQ(ClientAddress("10.0.0.1", "not-an-ip", proxies), "10.0.0.1");
}

}  // namespace
}  // namespace toolgate::edge
