#include "toolgate/auth/client_metadata.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace toolgate::auth {
namespace {

struct Reply {
  int status = 200;
  std::string headers;  // extra header lines, each ending in \r\n
  std::string body;
  bool sized = true;  // false: no Content-Length, the body ends when the connection does
  bool hang = false;  // answer nothing; wait until the client gives up
};

// A plain HTTP/1.1 server on 127.0.0.1 that answers each connection's one request by path (404
// for a path it was not given) and closes it. It counts connections and records every request
// head, so a test can tell whether the fetcher reached it at all.
class DocumentServer {
 public:
  DocumentServer() {
    listen_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    EXPECT_EQ(listen(listen_fd_, 16), 0);
    socklen_t len = sizeof addr;
    getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { Serve(); });
  }

  ~DocumentServer() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
      if (conn_fd_ >= 0) shutdown(conn_fd_, SHUT_RDWR);  // wakes a /hang wait
    }
    shutdown(listen_fd_, SHUT_RDWR);  // wakes accept()
    thread_.join();
    close(listen_fd_);
  }

  int port() const { return port_; }
  std::string Url(std::string_view path) const {
    return "http://127.0.0.1:" + std::to_string(port_) + std::string(path);
  }

  void Route(const std::string& path, Reply reply) {
    std::lock_guard<std::mutex> lock(mu_);
    routes_[path] = std::move(reply);
  }

  int connections() {
    std::lock_guard<std::mutex> lock(mu_);
    return connections_;
  }
  std::vector<std::string> paths() {
    std::lock_guard<std::mutex> lock(mu_);
    return paths_;
  }
  int requests() { return static_cast<int>(paths().size()); }
  std::string last_head() {
    std::lock_guard<std::mutex> lock(mu_);
    return last_head_;
  }

 private:
  void Serve() {
    for (;;) {
      int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
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

  void ServeConnection(int fd) {
    std::string head;
    while (head.find("\r\n\r\n") == std::string::npos) {
      if (!Read(fd, &head)) return;
    }
    const size_t sp1 = head.find(' ');
    const std::string path = head.substr(sp1 + 1, head.find(' ', sp1 + 1) - sp1 - 1);
    Reply reply;
    {
      std::lock_guard<std::mutex> lock(mu_);
      paths_.push_back(path);
      last_head_ = head;
      auto it = routes_.find(path);
      if (it == routes_.end()) {
        reply.status = 404;
        reply.body = "not found";
      } else {
        reply = it->second;
      }
    }
    if (reply.hang) {
      std::string ignored;
      while (Read(fd, &ignored)) {
      }
      return;
    }
    std::string response = "HTTP/1.1 " + std::to_string(reply.status) + " Answer\r\n";
    if (reply.sized) response += "Content-Length: " + std::to_string(reply.body.size()) + "\r\n";
    response += reply.headers + "Connection: close\r\n\r\n" + reply.body;
    // A client that stops reading closes its end; send then fails, which ends the answer.
    for (size_t sent = 0; sent < response.size();) {
      ssize_t n = send(fd, response.data() + sent, response.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) return;
      sent += static_cast<size_t>(n);
    }
  }

  static bool Read(int fd, std::string* buffer) {
    char chunk[4096];
    ssize_t n = recv(fd, chunk, sizeof chunk, 0);
    if (n <= 0) return false;
    buffer->append(chunk, static_cast<size_t>(n));
    return true;
  }

  int listen_fd_ = -1;
  int port_ = 0;
  std::thread thread_;
  std::mutex mu_;
  bool stopping_ = false;                // guarded by mu_
  int conn_fd_ = -1;                     // guarded by mu_
  int connections_ = 0;                  // guarded by mu_
  std::map<std::string, Reply> routes_;  // guarded by mu_
  std::vector<std::string> paths_;       // guarded by mu_
  std::string last_head_;                // guarded by mu_
};

// A document for client_id with the given members after it (each with a leading comma).
std::string Document(const std::string& client_id,
                     std::string_view members = R"(,"client_name":"Example client")") {
  return R"({"client_id":")" + client_id +
         R"(","redirect_uris":["http://127.0.0.1:3000/callback"])" + std::string(members) + "}";
}

Reply Ok(std::string body, std::string headers = "") {
  Reply reply;
  reply.body = std::move(body);
  reply.headers = std::move(headers);
  return reply;
}

// What the tests run under: plain HTTP, loopback allowed, the clock in the test's hands.
ClientMetadataOptions LoopbackOptions(std::atomic<int64_t>* now) {
  ClientMetadataOptions options;
  options.allow_http_for_tests = true;
  options.allowed_cidrs = {core::Cidr::Parse("127.0.0.0/8").value()};
  options.now_ms = [now] { return now->load(); };
  return options;
}

testing::AssertionResult FailsWith(const Result<ClientMetadata>& result, Status::Code code,
                                   std::string_view part) {
  if (result.ok()) return testing::AssertionFailure() << "it succeeded";
  if (result.status().code() != code) {
    return testing::AssertionFailure() << "wrong code: " << result.status().ToString();
  }
  if (result.status().message().find(part) == std::string::npos) {
    return testing::AssertionFailure()
           << "\"" << part << "\" is not in: " << result.status().message();
  }
  return testing::AssertionSuccess();
}

constexpr auto kInvalid = Status::Code::kInvalidArgument;
constexpr auto kUnavailable = Status::Code::kUnavailable;

TEST(ClientMetadataUrlTest, AcceptsHttpsUrlsWithAPath) {
  for (const char* url : {
           "https://example.com/client.json",
           "https://example.com:8443/oauth/client",
           "https://example.com/client.json?version=2",
           "https://app.example.com/a/b/c/",
           "https://1.2.3.4/client.json",
           "https://[2001:db8::1]:443/client.json",
           "https://example.com/a/.well-known/...x",
       }) {
    EXPECT_TRUE(ClientMetadataFetcher::IsMetadataUrl(url)) << url;
  }
}

TEST(ClientMetadataUrlTest, RefusesWhatTheDraftForbids) {
  for (const char* url : {
           "",
           "client-123",
           "http://example.com/client.json",  // https only
           "ftp://example.com/client.json",
           "https://example.com",  // no path
           "https://example.com/",
           "https://example.com?x=1",
           "https://example.com/client.json#frag",
           "https://example.com/client.json#",
           "https://user@example.com/client.json",
           "https://user:pw@example.com/client.json",
           "https://example.com/a/../client.json",
           "https://example.com/./client.json",
           "https://example.com/a/..",
           "https://example.com/a/%2E%2E/client.json",
           "https://example.com/a/.%2e/client.json",
           "https:///client.json",  // no host
           "https://:443/client.json",
           "https://example.com:0/client.json",
           "https://example.com:65536/client.json",
           "https://example.com:/client.json",
           "https://example.com:x/client.json",
           "https://exa mple.com/client.json",
           "https://ex%61mple.com/client.json",
           "https://example.com/client.json\n",
           "https://example.com/client\".json",
           "https://[10.0.0.1]/client.json",  // brackets hold IPv6 only
           "https://[::1/client.json",
       }) {
    EXPECT_FALSE(ClientMetadataFetcher::IsMetadataUrl(url)) << url;
  }
  EXPECT_FALSE(
      ClientMetadataFetcher::IsMetadataUrl("https://example.com/" + std::string(2048, 'a')));
}

TEST(ClientMetadataFetcherTest, RefusesANonMetadataUrlSayingWhy) {
  ClientMetadataFetcher fetcher({});
  EXPECT_TRUE(FailsWith(fetcher.Fetch("https://example.com/"), kInvalid,
                        "the client metadata document at https://example.com/ is refused: "
                        "the URL has no path"));
  EXPECT_TRUE(FailsWith(fetcher.Fetch("https://example.com/a#b"), kInvalid, "fragment"));
  // Without allow_http_for_tests, http is refused before any fetch.
  EXPECT_TRUE(
      FailsWith(fetcher.Fetch("http://example.com/client.json"), kInvalid, "not an https URL"));
  // The client's text is repeated only as printable ASCII.
  auto result = fetcher.Fetch("https://example.com/\x01\n");
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().message().find('\n'), std::string::npos);
}

TEST(ClientMetadataFetcherTest, RefusesALoopbackAddressUnlessAllowed) {
  DocumentServer server;
  const std::string url = server.Url("/client.json");
  server.Route("/client.json", Ok(Document(url)));
  std::atomic<int64_t> now{0};
  ClientMetadataOptions options = LoopbackOptions(&now);
  options.allowed_cidrs.clear();
  ClientMetadataFetcher fetcher(options);

  EXPECT_TRUE(FailsWith(fetcher.Fetch(url), kInvalid, "loopback address"));

  // The server takes connections in order: had the refused fetch connected, this would be its
  // second connection.
  ClientMetadataFetcher allowed(LoopbackOptions(&now));
  ASSERT_TRUE(allowed.Fetch(url).ok());
  EXPECT_EQ(server.connections(), 1);
  EXPECT_EQ(server.paths(), std::vector<std::string>{"/client.json"});
}

TEST(ClientMetadataFetcherTest, RefusesLoopbackWithProductionOptions) {
  DocumentServer server;
  ClientMetadataFetcher fetcher({});
  const std::string port = std::to_string(server.port());
  EXPECT_TRUE(FailsWith(fetcher.Fetch("https://127.0.0.1:" + port + "/client.json"), kInvalid,
                        "the host's address is not public: loopback address"));
  // A name is judged by the address it resolves to, whatever its spelling.
  EXPECT_TRUE(
      FailsWith(fetcher.Fetch("https://localhost:" + port + "/client.json"), kInvalid, "loopback"));
  EXPECT_TRUE(FailsWith(fetcher.Fetch("https://[::ffff:127.0.0.1]:" + port + "/client.json"),
                        kInvalid, "loopback address"));

  std::atomic<int64_t> now{0};
  ClientMetadataFetcher allowed(LoopbackOptions(&now));
  const std::string url = server.Url("/client.json");
  server.Route("/client.json", Ok(Document(url)));
  ASSERT_TRUE(allowed.Fetch(url).ok());
  EXPECT_EQ(server.connections(), 1);
}

TEST(ClientMetadataFetcherTest, FetchesAndParsesAValidDocument) {
  DocumentServer server;
  const std::string url = server.Url("/client.json");
  server.Route("/client.json",
               Ok(Document(url, R"(,"client_name":"Example client",)"
                                R"("logo_uri":"https://example.com/logo.png",)"
                                R"("client_uri":"http://example.com/",)"
                                R"("grant_types":["authorization_code","refresh_token"],)"
                                R"("token_endpoint_auth_method":"none","scope":"ignored")"),
                  "Content-Type: application/json\r\n"));
  std::atomic<int64_t> now{0};
  ClientMetadataFetcher fetcher(LoopbackOptions(&now));

  auto result = fetcher.Fetch(url);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(result->client_id, url);
  EXPECT_EQ(result->client_name, "Example client");
  EXPECT_EQ(result->logo_uri, "https://example.com/logo.png");
  EXPECT_EQ(result->client_uri, "");  // not https
  EXPECT_EQ(result->redirect_uris, std::vector<std::string>{"http://127.0.0.1:3000/callback"});
  EXPECT_EQ(result->grant_types, (std::vector<std::string>{"authorization_code", "refresh_token"}));
  EXPECT_EQ(result->token_endpoint_auth_method, "none");

  const std::string head = server.last_head();
  EXPECT_EQ(head.rfind("GET /client.json HTTP/1.1\r\n", 0), 0u) << head;
  EXPECT_NE(head.find("\r\nAccept: application/json\r\n"), std::string::npos) << head;
  EXPECT_NE(head.find("\r\nUser-Agent: Toolgate\r\n"), std::string::npos) << head;
}

TEST(ClientMetadataFetcherTest, FillsInDefaults) {
  DocumentServer server;
  const std::string url = server.Url("/minimal");
  server.Route("/minimal", Ok(Document(url, R"json(,"logo_uri":"javascript:alert(1)")json")));
  std::atomic<int64_t> now{0};
  ClientMetadataFetcher fetcher(LoopbackOptions(&now));

  auto result = fetcher.Fetch(url);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(result->client_name, "127.0.0.1");  // the URL's host
  EXPECT_EQ(result->logo_uri, "");
  EXPECT_EQ(result->grant_types, std::vector<std::string>{"authorization_code"});
  EXPECT_EQ(result->token_endpoint_auth_method, "none");
}

TEST(ClientMetadataFetcherTest, CachesADocumentForTheDefaultTtl) {
  DocumentServer server;
  const std::string url = server.Url("/client.json");
  server.Route("/client.json", Ok(Document(url)));
  std::atomic<int64_t> now{1000};
  ClientMetadataOptions options = LoopbackOptions(&now);
  ClientMetadataFetcher fetcher(options);

  ASSERT_TRUE(fetcher.Fetch(url).ok());
  EXPECT_EQ(server.requests(), 1);
  auto again = fetcher.Fetch(url);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->client_name, "Example client");
  EXPECT_EQ(server.requests(), 1);

  now += options.default_ttl_ms - 1;
  ASSERT_TRUE(fetcher.Fetch(url).ok());
  EXPECT_EQ(server.requests(), 1);
  now += 1;
  ASSERT_TRUE(fetcher.Fetch(url).ok());
  EXPECT_EQ(server.requests(), 2);
}

TEST(ClientMetadataFetcherTest, CachesForCacheControlWithinBounds) {
  struct Case {
    std::string header;
    int64_t ttl_ms;
  };
  const ClientMetadataOptions defaults;
  const std::vector<Case> cases = {
      {"Cache-Control: max-age=120\r\n", 120'000},
      {"Cache-Control: public, max-age=\"600\"\r\n", 600'000},
      {"Cache-Control: max-age=5\r\n", defaults.min_ttl_ms},
      {"Cache-Control: max-age=0\r\n", defaults.min_ttl_ms},
      {"Cache-Control: max-age=99999999999999999999\r\n", defaults.max_ttl_ms},
      {"Cache-Control: no-store\r\n", defaults.min_ttl_ms},
      {"Cache-Control: max-age=3600\r\nCache-Control: no-cache\r\n", defaults.min_ttl_ms},
      {"Cache-Control: max-age=soon\r\n", defaults.default_ttl_ms},
  };
  DocumentServer server;
  for (size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE(cases[i].header);
    const std::string path = "/client-" + std::to_string(i);
    const std::string url = server.Url(path);
    server.Route(path, Ok(Document(url), cases[i].header));
    std::atomic<int64_t> now{0};
    ClientMetadataFetcher fetcher(LoopbackOptions(&now));
    const int before = server.requests();

    ASSERT_TRUE(fetcher.Fetch(url).ok());
    now = cases[i].ttl_ms - 1;
    ASSERT_TRUE(fetcher.Fetch(url).ok());
    EXPECT_EQ(server.requests(), before + 1);
    now = cases[i].ttl_ms;
    ASSERT_TRUE(fetcher.Fetch(url).ok());
    EXPECT_EQ(server.requests(), before + 2);
  }
}

TEST(ClientMetadataFetcherTest, RemembersAFailureForTheFailureTtl) {
  DocumentServer server;
  const std::string url = server.Url("/missing.json");
  std::atomic<int64_t> now{0};
  ClientMetadataOptions options = LoopbackOptions(&now);
  ClientMetadataFetcher fetcher(options);

  EXPECT_TRUE(FailsWith(fetcher.Fetch(url), kInvalid, "answered 404 instead of 200"));
  EXPECT_TRUE(FailsWith(fetcher.Fetch(url), kInvalid, "answered 404"));
  EXPECT_EQ(server.requests(), 1);

  server.Route("/missing.json", Ok(Document(url)));
  now = options.failure_ttl_ms - 1;
  EXPECT_FALSE(fetcher.Fetch(url).ok());
  EXPECT_EQ(server.requests(), 1);
  now = options.failure_ttl_ms;
  EXPECT_TRUE(fetcher.Fetch(url).ok());
  EXPECT_EQ(server.requests(), 2);
}

TEST(ClientMetadataFetcherTest, RefusesADocumentForAnotherClientId) {
  DocumentServer server;
  const std::string url = server.Url("/client.json");
  std::atomic<int64_t> now{0};
  ClientMetadataFetcher fetcher(LoopbackOptions(&now));

  server.Route("/client.json", Ok(Document("https://other.example/client.json")));
  EXPECT_TRUE(FailsWith(fetcher.Fetch(url), kInvalid,
                        "the document's client_id is not the URL it was fetched from"));
  // Compared as strings: a URL that means the same is still another client_id.
  const std::string url2 = server.Url("/client2.json");
  server.Route("/client2.json", Ok(Document(url2 + "?")));
  EXPECT_TRUE(FailsWith(fetcher.Fetch(url2), kInvalid, "client_id is not the URL"));
}

TEST(ClientMetadataFetcherTest, RefusesADocumentLargerThanMaxBytes) {
  DocumentServer server;
  std::atomic<int64_t> now{0};
  ClientMetadataOptions options = LoopbackOptions(&now);
  ClientMetadataFetcher fetcher(options);
  auto padded = [&](const std::string& url, size_t size) {
    std::string body = Document(url);
    body.insert(body.size() - 1, size - body.size(), ' ');
    return body;
  };

  // Declared by Content-Length, and delimited only by the connection's end.
  const std::string sized = server.Url("/sized");
  server.Route("/sized", Ok(padded(sized, 300 * 1024)));
  EXPECT_TRUE(FailsWith(fetcher.Fetch(sized), kInvalid, "larger than 65536 bytes"));
  const std::string unsized = server.Url("/unsized");
  Reply reply = Ok(padded(unsized, 300 * 1024));
  reply.sized = false;
  server.Route("/unsized", reply);
  EXPECT_TRUE(FailsWith(fetcher.Fetch(unsized), kInvalid, "larger than 65536 bytes"));

  // max_bytes itself is allowed.
  const std::string exact = server.Url("/exact");
  reply = Ok(padded(exact, options.max_bytes));
  reply.sized = false;
  server.Route("/exact", reply);
  auto result = fetcher.Fetch(exact);
  EXPECT_TRUE(result.ok()) << result.status().ToString();
}

TEST(ClientMetadataFetcherTest, DoesNotFollowARedirect) {
  DocumentServer server;
  const std::string target = server.Url("/client.json");
  server.Route("/client.json", Ok(Document(target)));
  Reply redirect;
  redirect.status = 302;
  redirect.headers = "Location: " + target + "\r\n";
  server.Route("/moved", redirect);
  std::atomic<int64_t> now{0};
  ClientMetadataFetcher fetcher(LoopbackOptions(&now));

  EXPECT_TRUE(FailsWith(fetcher.Fetch(server.Url("/moved")), kInvalid,
                        "answered 302, a redirect, which is not followed"));
  EXPECT_EQ(server.paths(), std::vector<std::string>{"/moved"});
}

TEST(ClientMetadataFetcherTest, RefusesABodyThatIsNotAJsonObject) {
  DocumentServer server;
  server.Route("/html", Ok("<html><body>client</body></html>"));
  server.Route("/array", Ok(R"(["https://example.com/client.json"])"));
  server.Route("/empty", Ok(""));
  std::atomic<int64_t> now{0};
  ClientMetadataFetcher fetcher(LoopbackOptions(&now));

  EXPECT_TRUE(FailsWith(fetcher.Fetch(server.Url("/html")), kInvalid, "the document is not JSON"));
  EXPECT_TRUE(FailsWith(fetcher.Fetch(server.Url("/array")), kInvalid, "not a JSON object"));
  EXPECT_TRUE(FailsWith(fetcher.Fetch(server.Url("/empty")), kInvalid, "not JSON"));
}

TEST(ClientMetadataFetcherTest, RefusesADocumentWithoutWhatItMustSay) {
  struct Case {
    std::string members;  // the document after client_id, without its opening comma
    std::string why;
  };
  const std::vector<Case> cases = {
      {R"("client_name":"x")", "no redirect_uris"},
      {R"("redirect_uris":[])", "redirect_uris is empty"},
      {R"("redirect_uris":"https://example.com/cb")", "redirect_uris is not a list of strings"},
      {R"("redirect_uris":["https://example.com/cb",7])", "redirect_uris is not a list"},
      {R"("redirect_uris":["https://example.com/cb"],"token_endpoint_auth_method":
          "private_key_jwt")",
       "token_endpoint_auth_method \"private_key_jwt\" is not supported"},
      {R"("redirect_uris":["https://example.com/cb"],"token_endpoint_auth_method":
          "client_secret_basic","client_secret":"s3cret")",
       "is not supported"},
      {R"("redirect_uris":["https://example.com/cb"],"client_secret":"s3cret")", "client_secret"},
      {R"("redirect_uris":["https://example.com/cb"],"grant_types":"authorization_code")",
       "grant_types is not a list of strings"},
      {R"("redirect_uris":["https://example.com/cb"],"client_name":{"en":"x"})",
       "client_name is not a string"},
  };
  DocumentServer server;
  std::atomic<int64_t> now{0};
  ClientMetadataFetcher fetcher(LoopbackOptions(&now));
  for (size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE(cases[i].members);
    const std::string path = "/client-" + std::to_string(i);
    const std::string url = server.Url(path);
    server.Route(path, Ok(R"({"client_id":")" + url + "\"," + cases[i].members + "}"));
    EXPECT_TRUE(FailsWith(fetcher.Fetch(url), kInvalid, cases[i].why));
  }
  const std::string url = server.Url("/no-id");
  server.Route("/no-id", Ok(R"({"redirect_uris":["https://example.com/cb"]})"));
  EXPECT_TRUE(FailsWith(fetcher.Fetch(url), kInvalid, "the document has no client_id"));
}

TEST(ClientMetadataFetcherTest, ReportsAConnectFailureAsUnavailable) {
  // Bound but not listening: a connection to it is refused at once.
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  socklen_t len = sizeof addr;
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  std::atomic<int64_t> now{0};
  ClientMetadataFetcher fetcher(LoopbackOptions(&now));

  EXPECT_TRUE(FailsWith(
      fetcher.Fetch("http://127.0.0.1:" + std::to_string(ntohs(addr.sin_port)) + "/client.json"),
      kUnavailable, "could not be fetched"));
  close(fd);
}

TEST(ClientMetadataFetcherTest, ReportsATimeoutAsUnavailable) {
  DocumentServer server;
  Reply hang;
  hang.hang = true;
  server.Route("/slow", hang);
  std::atomic<int64_t> now{0};
  ClientMetadataOptions options = LoopbackOptions(&now);
  options.timeout_ms = 200;
  ClientMetadataFetcher fetcher(options);

  EXPECT_TRUE(FailsWith(fetcher.Fetch(server.Url("/slow")), kUnavailable,
                        "no complete answer within 200 ms"));
}

TEST(ClientMetadataFetcherTest, ConcurrentFetchesAgree) {
  DocumentServer server;
  const std::string url = server.Url("/client.json");
  server.Route("/client.json", Ok(Document(url)));
  std::atomic<int64_t> now{0};
  ClientMetadataFetcher fetcher(LoopbackOptions(&now));
  constexpr int kThreads = 4;
  std::atomic<int> good{0};

  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 10; ++i) {
        auto result = fetcher.Fetch(url);
        if (result.ok() && result->client_name == "Example client") ++good;
      }
    });
  }
  for (auto& thread : threads) thread.join();

  EXPECT_EQ(good.load(), kThreads * 10);
  // Each thread fetches at most once: after its own fetch the document is cached.
  EXPECT_GE(server.requests(), 1);
  EXPECT_LE(server.requests(), kThreads);
}

}  // namespace
}  // namespace toolgate::auth
