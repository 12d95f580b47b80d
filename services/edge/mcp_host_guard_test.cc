#include "mcp_host_guard.h"

#include <gtest/gtest.h>

namespace toolgate::edge {
namespace {

TEST(McpHostGuardTest, OnLoopbackOnlyTheLoopbackNamesOnAnyPort) {
  McpHostGuard guard({});
  EXPECT_FALSE(guard.ServesAnyHost());
  EXPECT_FALSE(guard.Check("localhost:8080", ""));
  EXPECT_FALSE(guard.Check("127.0.0.1:41234", ""));
  EXPECT_FALSE(guard.Check("[::1]:8080", ""));
  EXPECT_FALSE(guard.Check("LOCALHOST", ""));
  EXPECT_TRUE(guard.Check("evil.example.com", ""));
  EXPECT_TRUE(guard.Check("evil.example.com:8080", "http://evil.example.com:8080"));
  EXPECT_TRUE(guard.Check("", ""));
  EXPECT_TRUE(guard.Check("localhost.evil.example.com", ""));
}

TEST(McpHostGuardTest, PublicNamesWithOrWithoutAPort) {
  McpHostGuard guard({{"mcp.example.com", "api.example.com:8443"}, false, {}});
  EXPECT_FALSE(guard.ServesAnyHost());
  EXPECT_FALSE(guard.Check("mcp.example.com", ""));
  EXPECT_FALSE(guard.Check("MCP.example.com:443", ""));
  EXPECT_FALSE(guard.Check("api.example.com:8443", ""));
  EXPECT_TRUE(guard.Check("api.example.com:9000", ""));
  EXPECT_TRUE(guard.Check("other.example.com", ""));
  EXPECT_FALSE(guard.Check("localhost:8080", ""));
}

TEST(McpHostGuardTest, NoNamesOffLoopbackServesAnyHost) {
  McpHostGuard guard({{}, false, {}});
  EXPECT_TRUE(guard.ServesAnyHost());
  EXPECT_FALSE(guard.Check("10.1.2.3:8080", ""));
  EXPECT_TRUE(guard.Check("10.1.2.3:8080", "https://evil.example"));  // Origin still holds
}

TEST(McpHostGuardTest, OriginMustBeTheHostsOwnOrAnAllowedOne) {
  McpHostGuard guard({{}, true, {"https://app.example.com"}});
  EXPECT_FALSE(guard.Check("localhost:8080", "http://localhost:8080"));
  EXPECT_TRUE(guard.Check("localhost:8080", "http://localhost:9090"));
  EXPECT_FALSE(guard.Check("localhost:8080", "https://APP.example.com"));
  EXPECT_TRUE(guard.Check("localhost:8080", "null"));
}

TEST(McpHostGuardTest, LoopbackListenAddresses) {
  EXPECT_TRUE(IsLoopbackListenAddress("127.0.0.1"));
  EXPECT_TRUE(IsLoopbackListenAddress("localhost"));
  EXPECT_TRUE(IsLoopbackListenAddress("::1"));
  EXPECT_FALSE(IsLoopbackListenAddress("0.0.0.0"));
  EXPECT_FALSE(IsLoopbackListenAddress("10.0.0.5"));
}

}  // namespace
}  // namespace toolgate::edge
