#include "toolgate/http_client/http_client.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <map>
#include <mutex>
#include <thread>

namespace toolgate::http {
namespace {

struct RecordedRequest {
  std::string method;
  std::string target;
  std::multimap<std::string, std::string> headers;  // lower-case names
  std::string body;
};

// A small HTTP/1.1 server on 127.0.0.1 that serves one connection at a time (as a blocking
// client needs) and records every request. It answers by path:
//   /login         200 and Set-Cookie: tg_session=tok123
//   /status/NNN    status NNN
//   /big           200 with a 3 MB body
//   /hang          no answer; waits until the client gives up and closes
//   anything else  200, the request body echoed, two X-Multi headers
class TestServer {
 public:
  TestServer() {
    listen_fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    EXPECT_EQ(listen(listen_fd_, 8), 0);
    socklen_t len = sizeof addr;
    getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { Serve(); });
  }

  ~TestServer() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
      if (conn_fd_ >= 0) shutdown(conn_fd_, SHUT_RDWR);
    }
    shutdown(listen_fd_, SHUT_RDWR);  // wakes accept()
    thread_.join();
    close(listen_fd_);
  }

  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

  std::vector<RecordedRequest> requests() {
    std::lock_guard<std::mutex> lock(mu_);
    return requests_;
  }

  int connections() {
    std::lock_guard<std::mutex> lock(mu_);
    return connections_;
  }

 private:
  void Serve() {
    for (;;) {
      int fd = accept(listen_fd_, nullptr, nullptr);
      if (fd < 0) return;
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (stopping_) {
          close(fd);
          return;
        }
        conn_fd_ = fd;
        ++connections_;
      }
      ServeConnection(fd);
      {
        std::lock_guard<std::mutex> lock(mu_);
        conn_fd_ = -1;
      }
      close(fd);
    }
  }

  // Serves requests on fd until the client closes it.
  void ServeConnection(int fd) {
    std::string buffer;
    for (;;) {
      size_t end;
      while ((end = buffer.find("\r\n\r\n")) == std::string::npos) {
        if (!Read(fd, &buffer)) return;
      }
      RecordedRequest req = ParseHead(buffer.substr(0, end));
      buffer.erase(0, end + 4);
      auto cl = req.headers.find("content-length");
      size_t length = cl == req.headers.end() ? 0 : std::stoul(cl->second);
      while (buffer.size() < length) {
        if (!Read(fd, &buffer)) return;
      }
      req.body = buffer.substr(0, length);
      buffer.erase(0, length);
      {
        std::lock_guard<std::mutex> lock(mu_);
        requests_.push_back(req);
      }
      if (req.target == "/hang") {
        while (Read(fd, &buffer)) {
        }
        return;
      }
      std::string response = Answer(req);
      if (send(fd, response.data(), response.size(), MSG_NOSIGNAL) < 0) return;
    }
  }

  static bool Read(int fd, std::string* buffer) {
    char chunk[65536];
    ssize_t n = recv(fd, chunk, sizeof chunk, 0);
    if (n <= 0) return false;
    buffer->append(chunk, static_cast<size_t>(n));
    return true;
  }

  static RecordedRequest ParseHead(const std::string& head) {
    RecordedRequest req;
    size_t line_end = head.find("\r\n");
    std::string request_line = head.substr(0, line_end);
    size_t sp1 = request_line.find(' ');
    size_t sp2 = request_line.find(' ', sp1 + 1);
    req.method = request_line.substr(0, sp1);
    req.target = request_line.substr(sp1 + 1, sp2 - sp1 - 1);
    size_t pos = line_end == std::string::npos ? head.size() : line_end + 2;
    while (pos < head.size()) {
      size_t next = head.find("\r\n", pos);
      if (next == std::string::npos) next = head.size();
      std::string line = head.substr(pos, next - pos);
      size_t colon = line.find(':');
      std::string name = line.substr(0, colon);
      for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      size_t value_start = line.find_first_not_of(' ', colon + 1);
      req.headers.emplace(name, value_start == std::string::npos ? "" : line.substr(value_start));
      pos = next + 2;
    }
    return req;
  }

  static std::string Answer(const RecordedRequest& req) {
    int status = 200;
    std::string extra;
    std::string body = req.body;
    if (req.target == "/login") {
      extra = "Set-Cookie: tg_session=tok123; Path=/; HttpOnly; SameSite=Lax\r\n";
      body = R"({"user":{"id":"u1"}})";
    } else if (req.target.rfind("/status/", 0) == 0) {
      status = std::stoi(req.target.substr(8));
      body = R"({"code":"x"})";
    } else if (req.target == "/big") {
      body = std::string(3 << 20, 'b');
    } else {
      extra = "X-Multi: one\r\nX-Multi: two\r\nX-Method: " + req.method + "\r\n";
    }
    return "HTTP/1.1 " + std::to_string(status) + " Whatever\r\n" + extra +
           "Content-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
           "\r\n\r\n" + body;
  }

  int listen_fd_ = -1;
  int port_ = 0;
  std::thread thread_;
  std::mutex mu_;
  bool stopping_ = false;                  // guarded by mu_
  int conn_fd_ = -1;                       // guarded by mu_
  int connections_ = 0;                    // guarded by mu_
  std::vector<RecordedRequest> requests_;  // guarded by mu_
};

std::string Only(const RecordedRequest& req, const std::string& name) {
  EXPECT_EQ(req.headers.count(name), 1u) << name;
  auto it = req.headers.find(name);
  return it == req.headers.end() ? "" : it->second;
}

TEST(HttpClientTest, GetReturnsStatusBodyAndLowerCaseHeaders) {
  TestServer server;
  HttpClient client(server.url());
  auto r = client.Get("/echo?x=1");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "");
  EXPECT_EQ(r->Header("X-Method"), "GET");
  EXPECT_EQ(r->Header("content-type"), "application/json");
  EXPECT_EQ(r->Header("absent"), "");
  EXPECT_EQ(r->headers.count("x-multi"), 2u);
  ASSERT_EQ(server.requests().size(), 1u);
  EXPECT_EQ(server.requests()[0].method, "GET");
  EXPECT_EQ(server.requests()[0].target, "/echo?x=1");
  EXPECT_EQ(server.requests()[0].headers.count("content-length"), 0u);
}

TEST(HttpClientTest, PostSendsTheBodyAsJson) {
  TestServer server;
  HttpClient client(server.url());
  auto r = client.Post("/echo", R"({"a":1})");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->body, R"({"a":1})");
  const RecordedRequest req = server.requests().at(0);
  EXPECT_EQ(req.method, "POST");
  EXPECT_EQ(req.body, R"({"a":1})");
  EXPECT_EQ(Only(req, "content-type"), "application/json");
  EXPECT_EQ(Only(req, "content-length"), "7");
}

TEST(HttpClientTest, EmptyPostSendsContentLengthZero) {
  TestServer server;
  HttpClient client(server.url());
  ASSERT_TRUE(client.Post("/logout", "").ok());
  EXPECT_EQ(Only(server.requests().at(0), "content-length"), "0");
}

TEST(HttpClientTest, EveryMethodIsSentAsNamed) {
  TestServer server;
  HttpClient client(server.url());
  ASSERT_TRUE(client.Put("/p", "{}").ok());
  ASSERT_TRUE(client.Patch("/p", R"({"b":2})").ok());
  ASSERT_TRUE(client.Delete("/p").ok());
  ASSERT_TRUE(client.Get("/p").ok());  // after DELETE: the method must not stick
  ASSERT_TRUE(client.Send("POST", "/p", "x", {{"Content-Type", "text/plain"}}).ok());
  auto reqs = server.requests();
  ASSERT_EQ(reqs.size(), 5u);
  EXPECT_EQ(reqs[0].method, "PUT");
  EXPECT_EQ(reqs[0].body, "{}");
  EXPECT_EQ(reqs[1].method, "PATCH");
  EXPECT_EQ(reqs[1].body, R"({"b":2})");
  EXPECT_EQ(reqs[2].method, "DELETE");
  EXPECT_EQ(reqs[2].headers.count("content-length"), 0u);
  EXPECT_EQ(reqs[3].method, "GET");
  EXPECT_EQ(reqs[4].method, "POST");
  EXPECT_EQ(Only(reqs[4], "content-type"), "text/plain");
}

TEST(HttpClientTest, ErrorStatusesAreResponses) {
  TestServer server;
  HttpClient client(server.url());
  for (int status : {201, 204, 400, 404, 422, 500, 503}) {
    auto r = client.Get("/status/" + std::to_string(status));
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->status, status);
  }
}

TEST(HttpClientTest, ObserverSeesEveryResponseButNotTransportFailures) {
  struct Seen {
    std::string method, url, request_content_type, request_body, body;
    int status;
  };
  std::vector<Seen> seen;
  SetExchangeObserver([&](const Exchange& e) {
    seen.push_back({std::string(e.method), std::string(e.url), std::string(e.request_content_type),
                    std::string(e.request_body), e.response.body, e.response.status});
  });
  TestServer server;
  HttpClient client(server.url());
  ASSERT_TRUE(client.Post("/echo?x=1", R"({"a":1})").ok());
  ASSERT_TRUE(client.Send("PUT", "/status/404", "x", {{"content-type", "text/plain"}}).ok());
  ASSERT_TRUE(client.Get("/echo").ok());
  HttpClient nowhere("http://127.0.0.1:1");
  EXPECT_FALSE(nowhere.Get("/x").ok());
  SetExchangeObserver(nullptr);
  ASSERT_TRUE(client.Get("/echo").ok());  // removed: no longer seen

  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen[0].method, "POST");
  EXPECT_EQ(seen[0].url, server.url() + "/echo?x=1");
  EXPECT_EQ(seen[0].request_content_type, "application/json");
  EXPECT_EQ(seen[0].request_body, R"({"a":1})");
  EXPECT_EQ(seen[0].body, R"({"a":1})");
  EXPECT_EQ(seen[0].status, 200);
  EXPECT_EQ(seen[1].request_content_type, "text/plain");
  EXPECT_EQ(seen[1].status, 404);
  EXPECT_EQ(seen[2].method, "GET");
  EXPECT_EQ(seen[2].request_content_type, "");
}

TEST(HttpClientTest, DefaultHeadersAreSentAndOverridable) {
  TestServer server;
  HttpClient client(server.url());
  client.SetDefaultHeader("Authorization", "key-1");
  ASSERT_TRUE(client.Get("/a").ok());
  ASSERT_TRUE(client.Get("/a", {{"authorization", "key-2"}, {"Idempotency-Key", "k"}}).ok());
  client.SetDefaultHeader("AUTHORIZATION", "key-3");  // replaces, whatever the case
  ASSERT_TRUE(client.Get("/a").ok());
  client.SetDefaultHeader("Authorization", "");  // removes
  ASSERT_TRUE(client.Get("/a").ok());
  auto reqs = server.requests();
  ASSERT_EQ(reqs.size(), 4u);
  EXPECT_EQ(Only(reqs[0], "authorization"), "key-1");
  EXPECT_EQ(Only(reqs[1], "authorization"), "key-2");
  EXPECT_EQ(Only(reqs[1], "idempotency-key"), "k");
  EXPECT_EQ(Only(reqs[2], "authorization"), "key-3");
  EXPECT_EQ(reqs[3].headers.count("authorization"), 0u);
}

TEST(HttpClientTest, CookieJarKeepsTheSession) {
  TestServer server;
  {
    HttpClient client(server.url());
    EXPECT_EQ(client.Cookie("tg_session"), "");
    auto login = client.Post("/login", R"({"email":"a@b.c"})");
    ASSERT_TRUE(login.ok());
    EXPECT_NE(login->Header("set-cookie").find("tg_session=tok123"), std::string::npos);
    EXPECT_EQ(client.Cookie("tg_session"), "tok123");
    EXPECT_EQ(client.Cookie("other"), "");
    ASSERT_TRUE(client.Get("/me").ok());
  }  // closes its connection: the server serves one at a time
  HttpClient other(server.url());
  ASSERT_TRUE(other.Get("/me").ok());
  auto reqs = server.requests();
  ASSERT_EQ(reqs.size(), 3u);
  EXPECT_EQ(Only(reqs[1], "cookie"), "tg_session=tok123");
  EXPECT_EQ(reqs[2].headers.count("cookie"), 0u);  // jars are per client
  EXPECT_EQ(other.Cookie("tg_session"), "");
}

TEST(HttpClientTest, ReusesOneConnection) {
  TestServer server;
  HttpClient client(server.url());
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(client.Post("/echo", "{}").ok());
  EXPECT_EQ(server.requests().size(), 5u);
  EXPECT_EQ(server.connections(), 1);
}

TEST(HttpClientTest, LargeBodiesBothWaysWithoutExpectContinue) {
  TestServer server;
  HttpClient client(server.url());
  std::string big(3 << 20, 'x');
  auto echoed = client.Post("/echo", big);
  ASSERT_TRUE(echoed.ok()) << echoed.status().ToString();
  EXPECT_EQ(echoed->body, big);
  EXPECT_EQ(server.requests().at(0).headers.count("expect"), 0u);
  auto r = client.Get("/big");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->body.size(), 3u << 20);
}

TEST(HttpClientTest, TimeoutIsATimeoutStatus) {
  TestServer server;
  HttpClient client(server.url());
  client.SetTimeout(std::chrono::milliseconds(100));
  auto r = client.Get("/hang");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kTimeout);
  EXPECT_NE(r.status().message().find("GET " + server.url() + "/hang"), std::string::npos)
      << r.status().message();
  // The client recovers on a fresh connection.
  auto next = client.Get("/echo");
  ASSERT_TRUE(next.ok()) << next.status().ToString();
  EXPECT_EQ(next->status, 200);
}

TEST(HttpClientTest, UnreachableServerIsUnavailable) {
  int port;
  {
    TestServer server;  // a port that was just free; nothing listens once it is gone
    port = std::stoi(server.url().substr(server.url().rfind(':') + 1));
  }
  HttpClient client("http://127.0.0.1:" + std::to_string(port));
  auto r = client.Post("/echo", R"({"password":"hunter2"})");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kUnavailable);
  EXPECT_EQ(r.status().message().find("hunter2"), std::string::npos);  // bodies never leak
}

TEST(HttpClientTest, UnsupportedSchemeIsInvalidArgument) {
  HttpClient client("gopherx://127.0.0.1:1");
  auto r = client.Get("/");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kInvalidArgument);
}

TEST(HttpClientTest, TrailingSlashOfBaseUrlIsIgnored) {
  TestServer server;
  HttpClient client(server.url() + "/");
  EXPECT_EQ(client.base_url(), server.url());
  ASSERT_TRUE(client.Get("/api/v1/me").ok());
  EXPECT_EQ(server.requests().at(0).target, "/api/v1/me");
}

TEST(HttpClientTest, MovedClientKeepsItsConnectionAndCookies) {
  TestServer server;
  HttpClient first(server.url());
  ASSERT_TRUE(first.Post("/login", "{}").ok());
  HttpClient moved = std::move(first);
  ASSERT_TRUE(moved.Get("/me").ok());
  EXPECT_EQ(Only(server.requests().at(1), "cookie"), "tg_session=tok123");
  EXPECT_EQ(server.connections(), 1);
}

TEST(UrlEncodeTest, EncodesReservedAndNonAscii) {
  EXPECT_EQ(UrlEncode("abc-XYZ_0.9~"), "abc-XYZ_0.9~");
  EXPECT_EQ(UrlEncode("a b&c=d/e?f#g"), "a%20b%26c%3Dd%2Fe%3Ff%23g");
  EXPECT_EQ(UrlEncode("\xc3\xa9+%"), "%C3%A9%2B%25");
  EXPECT_EQ(UrlEncode(""), "");
}

}  // namespace
}  // namespace toolgate::http
