// The edge's defences against abusive clients (its front: request size, read deadlines, no
// reactor left busy), CSRF on cookie-signed changes, and sign-in throttling, on a system with
// short timeouts and backoffs so that the cases can watch them pass.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include "raw_connection.h"
#include "system.h"
#include "toolgate/base/crypto.h"

namespace toolgate::testing {
namespace {

const auto* const kEnv = ::testing::AddGlobalTestEnvironment(new SharedSystem(
    {}, {"TOOLGATE_HEADER_TIMEOUT_MS=1500", "TOOLGATE_LOGIN_MAX_FAILURES=5",
         "TOOLGATE_LOGIN_BACKOFF_MS=2000", "TOOLGATE_LOGIN_BACKOFF_MAX_MS=4000",
         "TOOLGATE_MAX_CONNECTIONS_PER_CLIENT=16", "TOOLGATE_BODY_TIMEOUT_MS=3000"}));

using Clock = std::chrono::steady_clock;

// utime + stime of a process, in clock ticks.
int64_t CpuTicks(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::istringstream fields(stat.substr(stat.rfind(')') + 2));
  std::string field;
  int64_t utime = 0, stime = 0;
  for (int i = 3; fields >> field; ++i) {
    if (i == 14) utime = std::stoll(field);
    if (i == 15) {
      stime = std::stoll(field);
      break;
    }
  }
  return utime + stime;
}

// Whether the process's CPU time stops growing for a whole second, watched for up to
// deadline_ms.
::testing::AssertionResult BecomesIdle(pid_t pid, int deadline_ms) {
  auto idle_for_a_second = [&] {
    int64_t before = CpuTicks(pid);
    auto window_end = Clock::now() + std::chrono::seconds(1);
    bool grew = false;
    while (Clock::now() < window_end && !grew) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));  // sampling the window
      grew = CpuTicks(pid) != before;
    }
    return !grew;
  };
  return WaitUntil(idle_for_a_second, deadline_ms, "a second without CPU time", 0);
}

std::string InvokeHead(const std::string& function_id, const std::string& key,
                       const std::string& framing) {
  return "POST /api/v1/functions/" + function_id + "/1/invoke HTTP/1.1\r\nHost: 127.0.0.1\r\n" +
         "Authorization: " + key + "\r\nContent-Type: application/json\r\n" + framing + "\r\n";
}

TEST(EdgeFront, DeclaredOversizeBodyIsRefusedAtOnceAndTheEdgeStaysResponsive) {
  Account acct(*g_system, "Front");
  acct.TopUp(1'000'000);
  std::string key = acct.CreateKey();
  std::string fn = acct.CreateFunction("echo");
  ASSERT_EQ(acct.PublishLua(fn, "1", "function service_handler(e, c) return e end").status, 201);

  // Two clients declare 64 MiB and send what they can of it, up to 20 MiB each (more than
  // Pistache would buffer), until the edge stops them.
  std::vector<std::unique_ptr<RawConnection>> abusers;
  std::vector<std::thread> senders;
  for (int i = 0; i < 2; ++i) {
    abusers.push_back(std::make_unique<RawConnection>());
    abusers.back()->Send(InvokeHead(fn, key, "Content-Length: 67108864\r\n"));
  }
  for (auto& abuser : abusers) {
    senders.emplace_back([&c = *abuser] {
      const std::string piece(256 * 1024, 'x');
      for (int i = 0; i < 80 && c.Send(piece); ++i) {
      }
    });
  }
  // Meanwhile a normal call answers normally.
  auto r = Invoke(*g_system, key, fn, "1", R"({"event": {"n": 1}})");
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_NE(r.body.find("statusCode"), std::string::npos) << r.body;

  for (auto& abuser : abusers) {
    bool closed = false;
    // The body would take minutes to arrive; the answer comes without it.
    std::string answer = abuser->ReadUntilClosed(10000, &closed);
    EXPECT_TRUE(answer.starts_with("HTTP/1.1 413")) << answer;
    EXPECT_NE(answer.find("application/problem+json"), std::string::npos) << answer;
    EXPECT_NE(answer.find(R"("code":"payload_too_large")"), std::string::npos) << answer;
    EXPECT_TRUE(closed);
  }
  for (auto& sender : senders) sender.join();
  for (auto& abuser : abusers) abuser->Close();
  // Nothing keeps the edge busy once they are gone.
  EXPECT_TRUE(BecomesIdle(g_system->Pid("edge"), 10000));
}

TEST(EdgeFront, Http11KeepsTheConnectionWithoutAConnectionHeaderAndClosesOnRequest) {
  RawConnection c;
  const std::string get = "GET /api/v1/openapi.json HTTP/1.1\r\nHost: t\r\n";
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(c.Send(get + "\r\n")) << "request " << i;
    std::string head = c.ReadHead(10000);
    ASSERT_TRUE(head.starts_with("HTTP/1.1 200")) << i << ": " << head;
    EXPECT_EQ(head.find("Connection: Close"), std::string::npos) << head;
    // The body, whole, before the next request on the same connection.
    size_t at = head.find("Content-Length: ");
    ASSERT_NE(at, std::string::npos) << head;
    size_t length = std::stoul(head.substr(at + 16));
    std::string body = head.substr(head.find("\r\n\r\n") + 4);
    while (body.size() < length) {
      std::string more = c.ReadHead(10000);
      ASSERT_FALSE(more.empty()) << "the edge closed the connection after request " << i;
      body += more;
    }
  }
  ASSERT_TRUE(c.Send(get + "Connection: close\r\n\r\n"));
  bool closed = false;
  std::string answer = c.ReadUntilClosed(10000, &closed);
  EXPECT_TRUE(answer.starts_with("HTTP/1.1 200")) << answer;
  EXPECT_TRUE(closed) << "Connection: close was not honoured";
}

TEST(EdgeFront, ChunkedBodyIsCutAtTheLimit) {
  Account acct(*g_system, "Chunks");
  std::string key = acct.CreateKey();
  std::string fn = acct.CreateFunction("echo");
  RawConnection c;
  c.Send(InvokeHead(fn, key, "Transfer-Encoding: chunked\r\n"));
  // 8 chunks of 1 MiB: over the edge's 6 MiB, and no end chunk.
  std::string chunk = "100000\r\n" + std::string(1 << 20, 'x') + "\r\n";
  std::thread sender([&] {
    for (int i = 0; i < 8 && c.Send(chunk); ++i) {
    }
  });
  bool closed = false;
  std::string answer = c.ReadUntilClosed(15000, &closed);
  sender.join();
  EXPECT_TRUE(answer.starts_with("HTTP/1.1 413")) << answer;
  EXPECT_NE(answer.find(R"("code":"payload_too_large")"), std::string::npos) << answer;
  EXPECT_TRUE(closed);
}

TEST(EdgeFront, SlowHeadIsCutAtTheHeaderTimeout) {
  RawConnection c;
  c.Send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n");
  c.Send("X-Slow: 1\r\n");  // and never the blank line
  bool closed = false;
  std::string answer = c.ReadUntilClosed(15000, &closed);
  EXPECT_TRUE(answer.starts_with("HTTP/1.1 408")) << answer;
  EXPECT_NE(answer.find(R"("code":"request_timeout")"), std::string::npos) << answer;
  EXPECT_TRUE(closed);
  // The edge still serves.
  EXPECT_EQ(g_system->Client()->Get("/healthz")->status, 200);
}

TEST(EdgeFront, SlowBodyIsCutAtTheBodyTimeout) {
  RawConnection c;
  c.Send(
      "POST /api/v1/auth/login HTTP/1.1\r\nHost: 127.0.0.1\r\n"
      "Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"email\":");
  bool closed = false;
  std::string answer = c.ReadUntilClosed(15000, &closed);
  EXPECT_TRUE(answer.starts_with("HTTP/1.1 408")) << answer;
  EXPECT_NE(answer.find(R"("code":"request_timeout")"), std::string::npos) << answer;
  EXPECT_TRUE(closed);
}

TEST(EdgeFront, AClientLeavingMidBodyLeavesNothingBusy) {
  Account acct(*g_system, "Leaver");
  std::string key = acct.CreateKey();
  std::string fn = acct.CreateFunction("echo");
  for (int i = 0; i < 2; ++i) {
    RawConnection c;
    c.Send(InvokeHead(fn, key, "Content-Length: 4194304\r\n"));
    c.Send(std::string(1 << 20, 'x'));
  }  // both gone, their bodies unfinished
  EXPECT_TRUE(BecomesIdle(g_system->Pid("edge"), 10000));
  EXPECT_EQ(g_system->Client()->Get("/healthz")->status, 200);
}

TEST(EdgeFront, ConnectionsPerClientAreLimited) {
  // The system allows 16 connections per address: of 20 at once, some are refused.
  std::vector<std::unique_ptr<RawConnection>> connections;
  int served = 0, refused = 0;
  for (int i = 0; i < 20; ++i) {
    connections.push_back(std::make_unique<RawConnection>());
    connections.back()->Send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
    std::string head = connections.back()->ReadHead(10000);
    if (head.starts_with("HTTP/1.1 200")) ++served;
    if (head.starts_with("HTTP/1.1 429")) {
      ++refused;
      EXPECT_NE(head.find("application/problem+json"), std::string::npos) << head;
    }
  }
  EXPECT_LE(served, 16);
  EXPECT_GE(refused, 4);
  EXPECT_EQ(served + refused, 20);
  // Closed connections free their places.
  connections.clear();
  int status = 0;
  EXPECT_TRUE(WaitUntil(
      [&] {
        auto r = g_system->Client()->Get("/healthz");
        status = r.ok() ? r->status : 0;
        return status == 200;
      },
      10000, "the edge to serve again", 0));
  EXPECT_EQ(status, 200);
}

// A client with the account's session cookie and nothing else: what a page on another site
// can make the browser send.
std::unique_ptr<http::HttpClient> CookieOnly(Account& acct) {
  auto client = g_system->Client();
  client->SetDefaultHeader("Cookie", "tg_session=" + acct.session().Cookie("tg_session"));
  return client;
}

TEST(Csrf, ForeignOriginAndTextPlainAreRefusedAndCreateNothing) {
  Account acct(*g_system, "Csrf");
  std::string fn = acct.CreateFunction("target");
  auto forged = CookieOnly(acct);
  const http::HeaderList from_elsewhere = {{"Origin", "http://127.0.0.1:9999"},
                                           {"Content-Type", "text/plain"}};
  struct Case {
    std::string path;
    std::string body;
  };
  for (const Case& c : std::vector<Case>{
           {"/api/v1/api-keys", R"({"name":"stolen"})"},
           {"/api/v1/billing/top-ups", R"({"amount_micro_usd":5000})"},
           {"/api/v1/secrets", R"({"name":"S","value":"v"})"},
           {"/api/v1/functions/" + fn + "/versions",
            R"({"version":"1","runtime":"lua","compute_type":"CPU","input_schema":{"type":)"
            R"("object"},"code":"function service_handler(e) return e end"})"},
       }) {
    auto r = forged->Post(c.path, c.body, from_elsewhere);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->status, 403) << c.path << " " << r->body;
    EXPECT_EQ(r->Header("content-type"), "application/problem+json");
    EXPECT_EQ(StringField(r->body, "code"), "csrf_rejected") << c.path;
    // JSON from a foreign origin, and the cookie alone without the header, are refused too.
    EXPECT_EQ(forged->Post(c.path, c.body, {{"Origin", "http://127.0.0.1:9999"}})->status, 403);
    EXPECT_EQ(forged->Post(c.path, c.body)->status, 403) << c.path;
  }
  // Nothing was created.
  EXPECT_EQ(Json(acct.session().Get("/api/v1/api-keys")->body).root["items"].get_array().size(),
            0u);
  EXPECT_EQ(acct.Balance(), 0);
  EXPECT_EQ(Json(acct.session().Get("/api/v1/secrets")->body).root["items"].get_array().size(), 0u);
  EXPECT_TRUE(
      Json(acct.session().Get("/api/v1/functions/" + fn)->body).root["latest_version"].is_null());

  // With the header (the web app, the CLI) the same request goes through.
  auto ok = forged->Post("/api/v1/api-keys", R"({"name":"mine"})", {{"X-Toolgate-CSRF", "1"}});
  EXPECT_EQ(ok->status, 201) << ok->body;
  // And from the app's own origin.
  std::string own = g_system->url();
  auto same = forged->Post("/api/v1/secrets", R"({"name":"S","value":"v"})", {{"Origin", own}});
  EXPECT_EQ(same->status, 201) << same->body;
  // A login form posted from another site cannot sign the browser in either.
  auto login = g_system->Client()->Post(
      "/api/v1/auth/login", R"({"email":"a@example.com","password":"x"})", from_elsewhere);
  EXPECT_EQ(StringField(login->body, "code"), "csrf_rejected");
}

http::HttpResponse Login(const std::string& email, const std::string& password) {
  auto r = g_system->Client()->Post(
      "/api/v1/auth/login", R"({"email":")" + email + R"(","password":")" + password + "\"}");
  EXPECT_TRUE(r.ok());
  return r.ok() ? *r : http::HttpResponse{};
}

TEST(SignInThrottle, WrongPasswordsLockTheAccountUntilTheBackoffPasses) {
  std::string email = "t" + HexEncode(RandomBytes(5)) + "@example.com";
  const std::string password = "correct horse battery";
  auto signup = g_system->Client()->Post(
      "/api/v1/auth/signup",
      R"({"email":")" + email + R"(","password":")" + password + R"(","organization":"T"})");
  ASSERT_EQ(signup->status, 201) << signup->body;
  std::string unknown = "nobody" + HexEncode(RandomBytes(5)) + "@example.com";

  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(Login(email, "wrong password").status, 401);
    EXPECT_EQ(Login(unknown, "wrong password").status, 401);
  }
  // Locked: even the right password is refused.
  auto locked = Login(email, password);
  EXPECT_EQ(locked.status, 429) << locked.body;
  EXPECT_EQ(StringField(locked.body, "code"), "rate_limited");
  EXPECT_FALSE(locked.Header("retry-after").empty());
  // An e-mail without an account locks and answers the same way.
  auto unknown_locked = Login(unknown, password);
  EXPECT_EQ(unknown_locked.status, 429);
  EXPECT_EQ(StringField(unknown_locked.body, "detail"), StringField(locked.body, "detail"));

  // Once the backoff passes the right password works; until then it is refused.
  int status = 429;
  EXPECT_TRUE(WaitUntil(
      [&] {
        status = Login(email, password).status;
        return status != 429;
      },
      30000, "the backoff to pass", 200));
  EXPECT_EQ(status, 200);
}

}  // namespace
}  // namespace toolgate::testing
