#include "toolgate/net/http1.h"

#include <gtest/gtest.h>

namespace toolgate::net {
namespace {

TEST(RequestHeadTest, ParsesTheLineAndTheHeaders) {
  auto head = ParseRequestHead(
      "POST /api/v1/functions/f/invoke?x=1 HTTP/1.1\r\nHost: a\r\nAUTHORIZATION:  Bearer k \r\n"
      "Cookie: a=1; tg_session=\"s\"\r\nCookie: b=2\r\nContent-Length: 12\r\n\r\n");
  ASSERT_TRUE(head.has_value());
  EXPECT_EQ(head->method, "POST");
  EXPECT_EQ(head->target, "/api/v1/functions/f/invoke?x=1");
  EXPECT_EQ(head->version, "HTTP/1.1");
  EXPECT_EQ(head->Value("authorization"), "Bearer k");
  EXPECT_EQ(head->Value("x-env-keys"), "");
  EXPECT_EQ(head->Find("x-env-keys"), nullptr);
  EXPECT_EQ(head->Cookie("tg_session"), "s");
  EXPECT_EQ(head->Cookie("b"), "2");
  EXPECT_FALSE(head->Cookie("tg").has_value());
  EXPECT_EQ(head->ContentLength(), 12u);
}

TEST(RequestHeadTest, RefusesWhatIsNotAHead) {
  EXPECT_FALSE(ParseRequestHead("POST / HTTP/1.1\r\nHost: a\r\n").has_value());  // no blank line
  EXPECT_FALSE(ParseRequestHead("POST\r\n\r\n").has_value());
  EXPECT_FALSE(ParseRequestHead("POST / HTTP/1.1\r\nno colon\r\n\r\n").has_value());
  EXPECT_FALSE(ParseRequestHead("\r\n\r\n").has_value());
}

TEST(RequestHeadTest, KeepAliveFollowsTheVersionAndConnection) {
  auto keep = [](const char* text) { return ParseRequestHead(text)->KeepAlive(); };
  EXPECT_TRUE(keep("GET / HTTP/1.1\r\n\r\n"));
  EXPECT_FALSE(keep("GET / HTTP/1.1\r\nConnection: Close\r\n\r\n"));
  EXPECT_FALSE(keep("GET / HTTP/1.1\r\nConnection: keep-alive, close\r\n\r\n"));
  EXPECT_FALSE(keep("GET / HTTP/1.0\r\n\r\n"));
  EXPECT_TRUE(keep("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n"));
}

TEST(ResponseBytesTest, WritesTheLengthAndTheConnection) {
  EXPECT_EQ(ResponseBytes(200, {{"X-A", "1"}}, "hi", true),
            "HTTP/1.1 200 OK\r\nX-A: 1\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\nhi");
  EXPECT_EQ(ResponseBytes(599, {}, "", false),
            "HTTP/1.1 599 Unknown\r\nConnection: close\r\nContent-Length: 0\r\n\r\n");
}

// A 204 or 304 has no body: one written anyway would be read as the start of the next response.
TEST(ResponseBytesTest, NoContentCarriesNoBody) {
  EXPECT_EQ(ResponseBytes(204, {}, "{\"a\":1}", true),
            "HTTP/1.1 204 No Content\r\nConnection: keep-alive\r\n\r\n");
  EXPECT_EQ(ResponseBytes(304, {}, "x", true),
            "HTTP/1.1 304 Not Modified\r\nConnection: keep-alive\r\n\r\n");
}

TEST(ResponseBytesTest, AHeadAnswerDeclaresTheLengthWithoutTheBody) {
  EXPECT_EQ(ResponseHeadBytes(200, {{"Content-Type", "text/plain"}}, 42, false),
            "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nConnection: close\r\n"
            "Content-Length: 42\r\n\r\n");
}

TEST(RequestHeadTest, PathDropsTheQuery) {
  EXPECT_EQ(ParseRequestHead("GET /metrics?x=1 HTTP/1.1\r\n\r\n")->Path(), "/metrics");
  EXPECT_EQ(ParseRequestHead("GET /healthz HTTP/1.1\r\n\r\n")->Path(), "/healthz");
}

// What two parsers could read differently is never relayed (request smuggling).
TEST(FramingErrorTest, RefusesHeadsTwoParsersCouldFrameDifferently) {
  auto why = [](std::string head, bool http10 = false) { return FramingError(head, http10); };
  EXPECT_EQ(why("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n"), "");
  EXPECT_EQ(why("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n"), "");
  EXPECT_EQ(why("POST / HTTP/1.1\r\nHost: a\r\n\r\n"), "");  // with the blank line
  EXPECT_NE(why("POST / HTTP/1.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n"), "");
  EXPECT_NE(why("POST / HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 6\r\n"), "");
  EXPECT_EQ(why("POST / HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 5\r\n"), "");
  EXPECT_NE(why("POST / HTTP/1.1\r\nContent-Length: +5\r\n"), "");
  EXPECT_NE(why("POST / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n"), "");
  EXPECT_NE(why("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n", true), "");
  EXPECT_NE(why("POST / HTTP/1.1\r\nHost: a\r\n b\r\n"), "");                // obs-fold
  EXPECT_NE(why("POST / HTTP/1.1\r\nContent-Length : 5\r\n"), "");           // space before colon
  EXPECT_NE(why("POST / HTTP/1.1\r\nHost: a\nX: b\r\n"), "");                // bare LF
  EXPECT_NE(why("POST / HTTP/1.1\r\nHost: a\rX: b\r\n"), "");                // bare CR
  EXPECT_NE(why(std::string("POST / HTTP/1.1\r\nHost: a\0b\r\n", 29)), "");  // NUL
  EXPECT_NE(why("POST / HTTP/1.1\r\nno colon\r\n"), "");
}

}  // namespace
}  // namespace toolgate::net
