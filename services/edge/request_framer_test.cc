#include "request_framer.h"

#include <gtest/gtest.h>

namespace toolgate::edge {
namespace {

RequestFramer Framer(size_t max_body = 100, size_t max_upload = 0) {
  return RequestFramer(
      1024, max_body,
      [](std::string_view forwarded_for) {
        return "t 10.0.0.1" + std::string(forwarded_for.empty() ? "" : " ") +
               std::string(forwarded_for);
      },
      max_upload);
}

TEST(RequestFramerTest, PassesAGetWithTheClientHeader) {
  auto f = Framer();
  std::string out;
  f.Feed("GET / HTTP/1.1\r\nHost: a\r\n\r\n", 5, &out);
  EXPECT_EQ(out,
            "GET / HTTP/1.1\r\nHost: a\r\nConnection: keep-alive\r\n"
            "X-Toolgate-Client: t 10.0.0.1\r\n\r\n");
  EXPECT_EQ(f.phase(), RequestFramer::Phase::kIdle);
  EXPECT_EQ(f.completed(), 1u);
}

TEST(RequestFramerTest, DropsTheClientsOwnClientHeaderAndReadsForwardedFor) {
  auto f = Framer();
  std::string out;
  f.Feed("GET / HTTP/1.1\r\nx-toolgate-client: t 1.2.3.4\r\nX-Forwarded-For: 9.9.9.9\r\n\r\n", 0,
         &out);
  EXPECT_EQ(out,
            "GET / HTTP/1.1\r\nX-Forwarded-For: 9.9.9.9\r\nConnection: keep-alive\r\n"
            "X-Toolgate-Client: t 10.0.0.1 9.9.9.9\r\n\r\n");
}

TEST(RequestFramerTest, KeepAliveIsHttp11sDefaultAndTheClientsWordWins) {
  auto framed = [](std::string_view request) {
    auto f = Framer();
    std::string out;
    f.Feed(request, 0, &out);
    return out;
  };
  // The client's own Connection header is passed on as it is, and nothing is added.
  EXPECT_EQ(framed("GET / HTTP/1.1\r\nConnection: close\r\n\r\n"),
            "GET / HTTP/1.1\r\nConnection: close\r\nX-Toolgate-Client: t 10.0.0.1\r\n\r\n");
  EXPECT_EQ(framed("GET / HTTP/1.1\r\nconnection: Keep-Alive\r\n\r\n"),
            "GET / HTTP/1.1\r\nconnection: Keep-Alive\r\nX-Toolgate-Client: t 10.0.0.1\r\n\r\n");
  // HTTP/1.0 closes by default: nothing is added.
  EXPECT_EQ(framed("GET / HTTP/1.0\r\n\r\n"),
            "GET / HTTP/1.0\r\nX-Toolgate-Client: t 10.0.0.1\r\n\r\n");
}

TEST(RequestFramerTest, HeadArrivingByteByByteRecordsItsStart) {
  auto f = Framer();
  std::string out;
  std::string req = "POST /x HTTP/1.1\r\nContent-Length: 3\r\n\r\nabcGET";
  for (size_t i = 0; i < req.size(); ++i) f.Feed(req.substr(i, 1), 100 + int64_t(i), &out);
  EXPECT_EQ(f.completed(), 1u);
  EXPECT_EQ(f.phase(), RequestFramer::Phase::kHead);  // "GET" of the next request
  EXPECT_EQ(f.phase_started_ms(), 100 + int64_t(req.size()) - 3);
  EXPECT_NE(out.find("\r\n\r\nabc"), std::string::npos);
}

TEST(RequestFramerTest, BodyPhaseTracksTheHeadsEnd) {
  auto f = Framer();
  std::string out;
  f.Feed("POST /x HTTP/1.1\r\nContent-Length: 10\r\n\r\nab", 7, &out);
  EXPECT_EQ(f.phase(), RequestFramer::Phase::kBody);
  EXPECT_EQ(f.phase_started_ms(), 7);
  f.Feed("cdefghij", 9, &out);
  EXPECT_EQ(f.phase(), RequestFramer::Phase::kIdle);
}

TEST(RequestFramerTest, DeclaredLengthOverTheLimitIsRefusedBeforeTheBody) {
  auto f = Framer(100);
  std::string out;
  f.Feed("POST /x HTTP/1.1\r\nContent-Length: 67108864\r\n\r\nxxxx", 0, &out);
  EXPECT_EQ(f.error(), RequestFramer::Error::kBodyTooLarge);
  EXPECT_TRUE(out.empty());
}

TEST(RequestFramerTest, ChunkedBodyIsPassedWholeAndCutAtTheLimit) {
  auto f = Framer(10);
  std::string out;
  std::string body = "5\r\nhello\r\n3;x=1\r\nabc\r\n0\r\nTrailer: 1\r\n\r\n";
  f.Feed("POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n" + body, 0, &out);
  EXPECT_EQ(f.completed(), 1u);
  EXPECT_EQ(f.phase(), RequestFramer::Phase::kIdle);
  EXPECT_EQ(out.substr(out.size() - body.size()), body);

  out.clear();
  f.Feed("POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n8\r\n12345678\r\n", 0, &out);
  size_t passed = out.size();
  f.Feed("4\r\nabcd\r\n", 0, &out);
  EXPECT_EQ(f.error(), RequestFramer::Error::kBodyTooLarge);
  EXPECT_EQ(out.size(), passed);  // the crossing chunk is not passed on
}

TEST(RequestFramerTest, OnlyPublishingAVersionGetsTheUploadLimit) {
  auto framed = [](std::string_view head) {
    auto f = Framer(100, 1000);
    std::string out;
    f.Feed(std::string(head) + "Content-Length: 500\r\n\r\n", 0, &out);
    return f.error() == RequestFramer::Error::kNone ? f.body_limit() : 0;
  };
  EXPECT_EQ(framed("POST /api/v1/functions/abc/versions HTTP/1.1\r\n"), 1000u);
  EXPECT_EQ(framed("POST /api/v1/functions/abc/versions?x=1 HTTP/1.1\r\n"), 1000u);
  // Every other route keeps the general limit and is refused at the head.
  EXPECT_EQ(framed("POST /api/v1/functions HTTP/1.1\r\n"), 0u);
  EXPECT_EQ(framed("PUT /api/v1/functions/abc/versions HTTP/1.1\r\n"), 0u);
  EXPECT_EQ(framed("POST /api/v1/functions/abc/1.0/invoke HTTP/1.1\r\n"), 0u);
  EXPECT_EQ(framed("POST /api/v1/functions/a/b/versions HTTP/1.1\r\n"), 0u);
  EXPECT_EQ(framed("POST /api/v1/secrets/versions HTTP/1.1\r\n"), 0u);
  // The upload limit holds too, chunked included.
  auto f = Framer(100, 1000);
  std::string out;
  f.Feed("POST /api/v1/functions/abc/versions HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", 0,
         &out);
  f.Feed("3e9\r\n", 0, &out);  // 1001 bytes
  EXPECT_EQ(f.error(), RequestFramer::Error::kBodyTooLarge);
}

TEST(RequestFramerTest, SmugglingShapesAreRefused) {
  for (const char* head : {
           "POST / HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n",
           "POST / HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n",
           "POST / HTTP/1.1\r\nContent-Length: +3\r\n\r\n",
           "POST / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
           "POST / HTTP/1.1\r\nContent-Length : 3\r\n\r\n",
           "POST / HTTP/1.1\r\nA: b\r\n folded\r\n\r\n",
           "garbage\r\n\r\n",
       }) {
    auto f = Framer();
    std::string out;
    f.Feed(head, 0, &out);
    EXPECT_EQ(f.error(), RequestFramer::Error::kBadFraming) << head;
    EXPECT_TRUE(out.empty()) << head;
  }
  auto f = Framer();
  std::string out;
  f.Feed("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 0, &out);
  EXPECT_EQ(f.error(), RequestFramer::Error::kBadFraming);
}

TEST(RequestFramerTest, HeadOverTheLimitIsRefused) {
  auto f = Framer();
  std::string out;
  f.Feed("GET / HTTP/1.1\r\nX: " + std::string(2000, 'a'), 0, &out);
  EXPECT_EQ(f.error(), RequestFramer::Error::kHeadTooLarge);
  EXPECT_TRUE(out.empty());
}

TEST(ResponseCloseWatchTest, FindsTheEndOfAResponseThatClosesTheConnection) {
  ResponseCloseWatch w;
  const std::string keep = "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc";
  const std::string close =
      "HTTP/1.1 200 OK\r\nConnection: Close\r\nContent-Length: 5\r\n\r\nhello";
  std::string all = keep + keep + close;
  for (char c : all) w.Feed(std::string_view(&c, 1));  // in any chunking
  EXPECT_EQ(w.close_offset(), all.size());
  ResponseCloseWatch whole;
  whole.Feed(all + "HTTP/1.1 200 OK\r\n");
  EXPECT_EQ(whole.close_offset(), all.size());
}

TEST(ResponseCloseWatchTest, ResponsesThatKeepTheConnectionOrCannotBeMeasuredEndNothing) {
  ResponseCloseWatch keep;
  keep.Feed("HTTP/1.1 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 2\r\n\r\nok");
  EXPECT_EQ(keep.close_offset(), 0u);
  ResponseCloseWatch stream;  // no Content-Length: its end is unknown, so is what follows
  stream.Feed(
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n"
      "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n");
  EXPECT_EQ(stream.close_offset(), 0u);
  ResponseCloseWatch informational;  // a 100 Continue is not the answer
  const std::string cont = "HTTP/1.1 100 Continue\r\nConnection: close\r\n\r\n";
  const std::string answer =
      "HTTP/1.1 201 Created\r\nConnection: close\r\nContent-Length: 1\r\n\r\nx";
  informational.Feed(cont + answer);
  EXPECT_EQ(informational.close_offset(), cont.size() + answer.size());
}

}  // namespace
}  // namespace toolgate::edge
