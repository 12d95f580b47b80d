#include "mcp_session.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>

#include "toolgate/base/crypto.h"

namespace toolgate::edge {
namespace {

class McpSessionTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { InitCrypto(); }
  McpSessionCodec codec_{std::string(32, 'k')};
  const std::string key_ = Sha256("the API key");
  const int64_t now_ = 1'800'000'000'000;
};

TEST_F(McpSessionTest, RoundTrip) {
  McpSession s = McpSessionCodec::NewSession("functions/abc/1.0", "2025-06-18", now_, 60'000);
  EXPECT_EQ(s.nonce.size(), 16u);
  std::string token = codec_.Issue(s, key_);
  for (char c : token) EXPECT_TRUE(c >= 0x21 && c <= 0x7e) << token;  // the transport's rule
  auto back = codec_.Verify(token, key_, now_ + 59'999);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->endpoint, "functions/abc/1.0");
  EXPECT_EQ(back->revision, "2025-06-18");
  EXPECT_EQ(back->expires_at_ms, now_ + 60'000);
  EXPECT_EQ(back->nonce, s.nonce);
}

TEST_F(McpSessionTest, EachSessionIsNew) {
  McpSession a = McpSessionCodec::NewSession("workspace", "2025-11-25", now_, 1000);
  McpSession b = McpSessionCodec::NewSession("workspace", "2025-11-25", now_, 1000);
  EXPECT_NE(codec_.Issue(a, key_), codec_.Issue(b, key_));
}

TEST_F(McpSessionTest, RefusesExpiredForgedAndForeignTokens) {
  McpSession s = McpSessionCodec::NewSession("workspace", "2025-11-25", now_, 1000);
  std::string token = codec_.Issue(s, key_);
  EXPECT_FALSE(codec_.Verify(token, key_, now_ + 1000).has_value());            // expired
  EXPECT_FALSE(codec_.Verify(token, Sha256("another key"), now_).has_value());  // other key
  McpSessionCodec other(std::string(32, 'x'));
  EXPECT_FALSE(other.Verify(token, key_, now_).has_value());  // other replica key

  // A payload changed by the client (a longer expiry, another endpoint) breaks the MAC.
  McpSession longer = s;
  longer.expires_at_ms += 1'000'000;
  std::string forged = codec_.Issue(longer, key_);
  std::string spliced = forged.substr(0, forged.rfind('.')) + token.substr(token.rfind('.'));
  EXPECT_FALSE(codec_.Verify(spliced, key_, now_).has_value());

  for (const char* junk : {"", "tg1.", "tg1..", "tg1.abc.def", "abc", "tg1.@@@.###"}) {
    EXPECT_FALSE(codec_.Verify(junk, key_, now_).has_value()) << junk;
  }
  EXPECT_FALSE(codec_.Verify(std::string(5000, 'a'), key_, now_).has_value());
}

TEST_F(McpSessionTest, EndedSessions) {
  EndedSessions ended;
  ended.Add("n1", now_ + 10, now_);
  ended.Add("n2", now_ + 20, now_);
  EXPECT_TRUE(ended.Contains("n1"));
  EXPECT_FALSE(ended.Contains("n3"));
  auto live = ended.Live(now_ + 15);
  ASSERT_EQ(live.size(), 1u);
  EXPECT_EQ(live[0].nonce, "n2");
}

TEST_F(McpSessionTest, EndedSessionsForgetExpiredOnesAsTheyGrow) {
  EndedSessions ended;
  for (int i = 0; i < 1024; ++i) ended.Add("old" + std::to_string(i), now_ + 1, now_);
  ended.Add("new", now_ + 1000, now_ + 500);  // past the old ones' expiry: they are dropped
  EXPECT_FALSE(ended.Contains("old0"));
  EXPECT_TRUE(ended.Contains("new"));
}

TEST(McpSessionKeyTest, FromValueOrFile) {
  InitCrypto();
  const std::string encoded = Base64Encode(std::string(32, 'q'));
  auto direct = LoadMcpSessionKey(encoded, "");
  ASSERT_TRUE(direct.ok());
  EXPECT_EQ(*direct, std::string(32, 'q'));

  std::string path = ::testing::TempDir() + "/mcp_session_key_" + std::to_string(getpid());
  std::ofstream(path) << encoded << "\n";
  auto from_file = LoadMcpSessionKey("", path);
  ASSERT_TRUE(from_file.ok());
  EXPECT_EQ(*from_file, std::string(32, 'q'));
  std::remove(path.c_str());

  EXPECT_EQ(LoadMcpSessionKey("", "").status().code(), Status::Code::kNotFound);
  EXPECT_EQ(LoadMcpSessionKey(Base64Encode("short"), "").status().code(),
            Status::Code::kInvalidArgument);
  EXPECT_EQ(LoadMcpSessionKey("", "/nonexistent/key").status().code(),
            Status::Code::kInvalidArgument);
}

TEST(McpSessionCodecTest, ASessionCarriesTheClientsCapabilities) {
  McpSessionCodec codec(std::string(32, 'k'));
  McpSession s = McpSessionCodec::NewSession("workspace", "2025-11-25", 1000, 60000,
                                             R"({"sampling":{},"elicitation":{}})");
  auto back = codec.Verify(codec.Issue(s, "h"), "h", 2000);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->client_capabilities_json, R"({"sampling":{},"elicitation":{}})");
  EXPECT_EQ(back->nonce, s.nonce);
  // Too long to carry: dropped, and the session still works.
  McpSession big = McpSessionCodec::NewSession("workspace", "2025-11-25", 1000, 60000,
                                               "{\"x\":\"" + std::string(600, 'a') + "\"}");
  EXPECT_EQ(big.client_capabilities_json, "");
  auto plain = codec.Verify(codec.Issue(big, "h"), "h", 2000);
  ASSERT_TRUE(plain.has_value());
  EXPECT_EQ(plain->client_capabilities_json, "");
}

TEST(McpSessionCodecTest, BridgeIdsNameTheirTargetForTheirSessionAndKeyOnly) {
  McpSessionCodec codec(std::string(32, 'k'));
  const std::string nonce(16, 'n');
  std::string id = codec.IssueBridgeId(nonce, {"_INBOX.edge.abc.7", "sampling"}, "key-hash");
  auto target = codec.VerifyBridgeId(id, nonce, "key-hash");
  ASSERT_TRUE(target.has_value());
  EXPECT_EQ(target->subject, "_INBOX.edge.abc.7");
  EXPECT_EQ(target->input_key, "sampling");
  EXPECT_FALSE(codec.VerifyBridgeId(id, std::string(16, 'o'), "key-hash"));  // another session
  EXPECT_FALSE(codec.VerifyBridgeId(id, nonce, "other-key"));
  EXPECT_FALSE(codec.VerifyBridgeId(id + "x", nonce, "key-hash"));
  EXPECT_FALSE(codec.VerifyBridgeId("tgb1.a.b", nonce, "key-hash"));
  EXPECT_FALSE(codec.VerifyBridgeId("7", nonce, "key-hash"));
}

}  // namespace
}  // namespace toolgate::edge
