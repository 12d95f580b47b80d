#include "browser_session.h"

#include <gtest/gtest.h>

namespace toolgate::edge {
namespace {

TEST(SessionRequestedTest, OnlyTheExactValueAsksForTheSession) {
  EXPECT_TRUE(SessionRequested("1"));
  EXPECT_FALSE(SessionRequested(""));
  EXPECT_FALSE(SessionRequested("0"));
  EXPECT_FALSE(SessionRequested("true"));
}

TEST(SameOriginTest, AbsentOriginIsAccepted) {
  EXPECT_TRUE(SameOrigin("", "127.0.0.1:8080"));
}

TEST(SameOriginTest, SameHostAndPortMatch) {
  EXPECT_TRUE(SameOrigin("http://127.0.0.1:8080", "127.0.0.1:8080"));
  EXPECT_TRUE(SameOrigin("http://Example.COM:8080", "example.com:8080"));
  EXPECT_TRUE(SameOrigin("http://[::1]:9000", "[::1]:9000"));
}

TEST(SameOriginTest, DefaultPortsStandForMissingOnes) {
  EXPECT_TRUE(SameOrigin("http://example.com", "example.com"));
  EXPECT_TRUE(SameOrigin("http://example.com", "example.com:80"));
  EXPECT_TRUE(SameOrigin("https://example.com", "example.com"));
  EXPECT_TRUE(SameOrigin("https://example.com:443", "example.com"));
  EXPECT_FALSE(SameOrigin("https://example.com", "example.com:80"));
}

TEST(SameOriginTest, AnotherSiteDoesNotMatch) {
  EXPECT_FALSE(SameOrigin("http://evil.example:8080", "127.0.0.1:8080"));
  EXPECT_FALSE(SameOrigin("http://127.0.0.1:8081", "127.0.0.1:8080"));
  EXPECT_FALSE(SameOrigin("http://127.0.0.1.evil.example:8080", "127.0.0.1:8080"));
}

TEST(SameOriginTest, OpaqueOrMalformedOriginsDoNotMatch) {
  EXPECT_FALSE(SameOrigin("null", "127.0.0.1:8080"));
  EXPECT_FALSE(SameOrigin("file://", "127.0.0.1:8080"));
  EXPECT_FALSE(SameOrigin("http://127.0.0.1:80x", "127.0.0.1:80"));
  EXPECT_FALSE(SameOrigin("http://127.0.0.1:8080/path", "127.0.0.1:8080"));
  EXPECT_FALSE(SameOrigin("http://", "127.0.0.1:8080"));
  EXPECT_FALSE(SameOrigin("http://127.0.0.1:8080", ""));
}

}  // namespace
}  // namespace toolgate::edge
