// The commands of asynchronous calls against a scripted management API on loopback: what
// `invoke --async` sends, how `executions wait` and `executions cancel` map the answers to exit
// codes, and what `webhooks rotate-secret` and `webhooks show` print.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "commands.h"

namespace toolgate::cli {
namespace {

struct Request {
  std::string method;
  std::string target;
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;
};

struct Answer {
  int status = 200;
  std::string body;
  std::string content_type = "application/json";
};

// An HTTP/1.1 server on 127.0.0.1 that answers each request with answer(request, n), n the
// request's number from 0, one connection at a time, and closes each connection after its
// answer. Records every request.
class ScriptedApi {
 public:
  using Script = std::function<Answer(const Request&, int)>;

  explicit ScriptedApi(Script script) : script_(std::move(script)) {
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

  ~ScriptedApi() {
    shutdown(listen_fd_, SHUT_RDWR);  // wakes accept()
    thread_.join();
    close(listen_fd_);
  }

  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

  std::vector<Request> requests() {
    std::lock_guard<std::mutex> lock(mu_);
    return requests_;
  }

 private:
  void Serve() {
    for (;;) {
      int fd = accept(listen_fd_, nullptr, nullptr);
      if (fd < 0) return;
      ServeOne(fd);
      close(fd);
    }
  }

  void ServeOne(int fd) {
    std::string buffer;
    size_t end;
    while ((end = buffer.find("\r\n\r\n")) == std::string::npos) {
      if (!Read(fd, &buffer)) return;
    }
    Request req = ParseHead(buffer.substr(0, end));
    buffer.erase(0, end + 4);
    auto cl = req.headers.find("content-length");
    const size_t length = cl == req.headers.end() ? 0 : std::stoul(cl->second);
    while (buffer.size() < length) {
      if (!Read(fd, &buffer)) return;
    }
    req.body = buffer.substr(0, length);
    int n = 0;
    {
      std::lock_guard<std::mutex> lock(mu_);
      n = static_cast<int>(requests_.size());
      requests_.push_back(req);
    }
    const Answer a = script_(req, n);
    std::string response = "HTTP/1.1 " + std::to_string(a.status) +
                           " X\r\nContent-Type: " + a.content_type +
                           "\r\nContent-Length: " + std::to_string(a.body.size()) +
                           "\r\nConnection: close\r\n\r\n" + a.body;
    send(fd, response.data(), response.size(), MSG_NOSIGNAL);
  }

  static bool Read(int fd, std::string* buffer) {
    char chunk[16384];
    ssize_t n = recv(fd, chunk, sizeof chunk, 0);
    if (n <= 0) return false;
    buffer->append(chunk, static_cast<size_t>(n));
    return true;
  }

  static Request ParseHead(const std::string& head) {
    Request req;
    size_t line_end = head.find("\r\n");
    std::string first = head.substr(0, line_end);
    size_t sp1 = first.find(' ');
    size_t sp2 = first.find(' ', sp1 + 1);
    req.method = first.substr(0, sp1);
    req.target = first.substr(sp1 + 1, sp2 - sp1 - 1);
    size_t pos = line_end == std::string::npos ? head.size() : line_end + 2;
    while (pos < head.size()) {
      size_t next = head.find("\r\n", pos);
      if (next == std::string::npos) next = head.size();
      std::string line = head.substr(pos, next - pos);
      size_t colon = line.find(':');
      if (colon != std::string::npos) {
        std::string name = line.substr(0, colon);
        for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        size_t v = line.find_first_not_of(' ', colon + 1);
        req.headers[name] = v == std::string::npos ? "" : line.substr(v);
      }
      pos = next + 2;
    }
    return req;
  }

  Script script_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::thread thread_;
  std::mutex mu_;
  std::vector<Request> requests_;
};

Answer Json(int status, std::string body) {
  return Answer{status, std::move(body), "application/json"};
}

Answer Problem(int status, const std::string& code, const std::string& detail) {
  return Answer{status,
                R"({"type":"about:blank","title":")" + code + R"(","status":)" +
                    std::to_string(status) + R"(,"code":")" + code + R"(","detail":")" + detail +
                    R"("})",
                "application/problem+json"};
}

std::string Execution(const std::string& status) {
  return R"({"execution_id":"x1","function_id":"f1","version":"1.0.0","status":")" + status +
         R"(","async":true,"cancel_requested":false})";
}

// What a command wrote on stdout and stderr, and its exit code.
struct CommandRun {
  int rc;
  std::string out;
  std::string err;
};

class AsyncCommandsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    unsetenv("TOOLGATE_API_KEY");
    unsetenv("TOOLGATE_PROFILE");
    unsetenv("TOOLGATE_URL");
    setenv("XDG_CONFIG_HOME", "/nonexistent-config-dir", 1);
  }
  void TearDown() override { unsetenv("XDG_CONFIG_HOME"); }

  // Runs `toolgate words... --url <api> --api-key k`.
  static CommandRun Toolgate(ScriptedApi& api, std::vector<std::string> words) {
    words.insert(words.end(), {"--url", api.url(), "--api-key", "tg_test_key"});
    ::testing::internal::CaptureStdout();
    ::testing::internal::CaptureStderr();
    const int rc = RunClientCommand(words);
    std::fflush(stdout);
    std::string out = ::testing::internal::GetCapturedStdout();
    std::string err = ::testing::internal::GetCapturedStderr();
    return {rc, out, err};
  }
};

TEST_F(AsyncCommandsTest, InvokeAsyncSendsPreferCallbackAndIdempotencyKeyAndExitsZeroOn202) {
  ScriptedApi api([](const Request&, int) {
    return Json(202,
                R"({"execution_id":"x1","status":"queued","status_url":"/api/v1/executions/x1"})");
  });
  CommandRun run = Toolgate(
      api, {"invoke", "f1", "--version", "1.0.0", "--event", R"({"n":1})", "--async",
            "--callback-url", "https://hooks.example.com/t", "--idempotency-key", "order-42"});
  EXPECT_EQ(run.rc, 0) << run.err;
  auto requests = api.requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].method, "POST");
  EXPECT_EQ(requests[0].target, "/api/v1/functions/f1/1.0.0/invoke");
  EXPECT_EQ(requests[0].headers["prefer"], "respond-async");
  EXPECT_EQ(requests[0].headers["x-callback-url"], "https://hooks.example.com/t");
  EXPECT_EQ(requests[0].headers["idempotency-key"], "order-42");
  EXPECT_EQ(requests[0].body, R"({"event":{"n":1}})");
  EXPECT_NE(run.out.find("x1"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("/api/v1/executions/x1"), std::string::npos) << run.out;
  EXPECT_NE(run.err.find("toolgate executions wait x1"), std::string::npos) << run.err;
}

TEST_F(AsyncCommandsTest, InvokeWithoutAsyncSendsNoPreferHeader) {
  ScriptedApi api([](const Request&, int) {
    return Json(200, R"({"statusCode":200,"body":"ok","summary":{}})");
  });
  CommandRun run = Toolgate(api, {"invoke", "f1", "--idempotency-key", "k1"});
  EXPECT_EQ(run.rc, 0) << run.err;
  auto requests = api.requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].headers.count("prefer"), 0u);
  EXPECT_EQ(requests[0].headers.count("x-callback-url"), 0u);
  EXPECT_EQ(requests[0].headers["idempotency-key"], "k1");
}

TEST_F(AsyncCommandsTest, InvokeAsyncWithoutAWebhookSecretSaysHowToMakeOne) {
  ScriptedApi api([](const Request&, int) {
    return Problem(409, "callback_secret_missing", "Make a webhook secret first.");
  });
  CommandRun run =
      Toolgate(api, {"invoke", "f1", "--async", "--callback-url", "https://h.example/t"});
  EXPECT_EQ(run.rc, 1);
  EXPECT_NE(run.err.find("callback_secret_missing"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("toolgate webhooks rotate-secret"), std::string::npos) << run.err;
}

TEST_F(AsyncCommandsTest, WaitPollsUntilSucceededAndPrintsTheDocument) {
  ScriptedApi api([](const Request&, int n) {
    return Json(200, Execution(n == 0 ? "queued" : n == 1 ? "running" : "succeeded"));
  });
  CommandRun run = Toolgate(api, {"executions", "wait", "x1", "--interval-ms", "100"});
  EXPECT_EQ(run.rc, 0) << run.err;
  auto requests = api.requests();
  ASSERT_EQ(requests.size(), 3u);
  for (const auto& r : requests) {
    EXPECT_EQ(r.method, "GET");
    EXPECT_EQ(r.target, "/api/v1/executions/x1");
  }
  // The final document, as `executions show` prints it; the progress on stderr.
  EXPECT_NE(run.out.find("status"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("succeeded"), std::string::npos) << run.out;
  EXPECT_EQ(run.out.find("queued"), std::string::npos) << run.out;
  EXPECT_NE(run.err.find("execution x1 is queued"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("execution x1 is running"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("execution x1 succeeded"), std::string::npos) << run.err;
}

TEST_F(AsyncCommandsTest, WaitExitsOneForEveryOtherEnding) {
  for (const char* ending : {"failed", "timed_out", "cancelled"}) {
    ScriptedApi api([ending](const Request&, int) { return Json(200, Execution(ending)); });
    CommandRun run = Toolgate(api, {"executions", "wait", "x1", "--json"});
    EXPECT_EQ(run.rc, 1) << ending;
    EXPECT_NE(run.out.find(std::string("\"status\": \"") + ending + "\""), std::string::npos)
        << run.out;
    EXPECT_EQ(api.requests().size(), 1u) << ending;
  }
}

TEST_F(AsyncCommandsTest, WaitGivesUpAtTheTimeoutWithExitThree) {
  ScriptedApi api([](const Request&, int) { return Json(200, Execution("running")); });
  CommandRun run =
      Toolgate(api, {"executions", "wait", "x1", "--timeout-s", "1", "--interval-ms", "300"});
  EXPECT_EQ(run.rc, 3) << run.err;
  EXPECT_TRUE(run.out.empty()) << run.out;
  EXPECT_NE(run.err.find("execution x1 is still running after 1 s"), std::string::npos) << run.err;
  // Reads at about 0, 300, 600, 900 and 1000 ms (fewer on a slow machine; the exact schedule
  // is execution_feed_test.cc's, on a clock of its own).
  EXPECT_GE(api.requests().size(), 2u);
  EXPECT_LE(api.requests().size(), 5u);
}

TEST_F(AsyncCommandsTest, WaitStopsAtARefusalAndWaitsThroughAServerError) {
  {
    ScriptedApi api([](const Request&, int) {
      return Problem(404, "not_found", "No execution with this id in your organization.");
    });
    CommandRun run = Toolgate(api, {"executions", "wait", "x1", "--timeout-s", "30"});
    EXPECT_EQ(run.rc, 1);
    EXPECT_NE(run.err.find("error: not_found: No execution with this id"), std::string::npos)
        << run.err;
    EXPECT_EQ(api.requests().size(), 1u);
  }
  {
    ScriptedApi api([](const Request&, int n) {
      return n == 1 ? Problem(503, "unavailable", "Try again.")
                    : Json(200, Execution(n == 0 ? "running" : "succeeded"));
    });
    CommandRun run = Toolgate(api, {"executions", "wait", "x1", "--interval-ms", "100"});
    EXPECT_EQ(run.rc, 0) << run.err;
    EXPECT_NE(run.err.find("(still waiting)"), std::string::npos) << run.err;
    EXPECT_EQ(api.requests().size(), 3u);
  }
}

TEST_F(AsyncCommandsTest, CancelPostsAndMapsTheAnswers) {
  ScriptedApi api([](const Request&, int n) {
    if (n == 0) {
      return Json(202, R"({"execution_id":"x1","status":"cancelled","cancel_requested":true,)"
                       R"("status_url":"/api/v1/executions/x1"})");
    }
    if (n == 1) {
      return Json(202, R"({"execution_id":"x1","status":"running","cancel_requested":true,)"
                       R"("status_url":"/api/v1/executions/x1"})");
    }
    return Problem(409, "conflict", "This execution has finished; there is nothing to cancel.");
  });
  CommandRun queued = Toolgate(api, {"executions", "cancel", "x1"});
  EXPECT_EQ(queued.rc, 0) << queued.err;
  EXPECT_NE(queued.out.find("cancelled"), std::string::npos) << queued.out;
  EXPECT_NE(queued.err.find("never ran"), std::string::npos) << queued.err;
  CommandRun running = Toolgate(api, {"executions", "cancel", "x1"});
  EXPECT_EQ(running.rc, 0) << running.err;
  EXPECT_NE(running.err.find("being stopped"), std::string::npos) << running.err;
  CommandRun finished = Toolgate(api, {"executions", "cancel", "x1"});
  EXPECT_EQ(finished.rc, 1);
  EXPECT_NE(finished.err.find("nothing to cancel"), std::string::npos) << finished.err;
  auto requests = api.requests();
  ASSERT_EQ(requests.size(), 3u);
  for (const auto& r : requests) {
    EXPECT_EQ(r.method, "POST");
    EXPECT_EQ(r.target, "/api/v1/executions/x1/cancel");
  }
}

TEST_F(AsyncCommandsTest, WebhookSecretIsPrintedOnceAndShownWithoutIt) {
  ScriptedApi api([](const Request& r, int) {
    if (r.method == "POST") {
      return Json(201, R"({"secret":"whsec_c2VjcmV0","created_at":"2026-12-02T15:04:05Z",)"
                       R"("previous_valid_until":"2026-12-03T15:04:05Z"})");
    }
    return Json(200, R"({"created_at":"2026-12-02T15:04:05Z","previous_valid_until":null})");
  });
  CommandRun rotated = Toolgate(api, {"webhooks", "rotate-secret"});
  EXPECT_EQ(rotated.rc, 0) << rotated.err;
  EXPECT_NE(rotated.out.find("whsec_c2VjcmV0"), std::string::npos) << rotated.out;
  EXPECT_NE(rotated.err.find("shown only now"), std::string::npos) << rotated.err;
  EXPECT_NE(rotated.err.find("previous secret also signs until 2026-12-03T15:04:05Z"),
            std::string::npos)
      << rotated.err;
  CommandRun shown = Toolgate(api, {"webhooks", "show"});
  EXPECT_EQ(shown.rc, 0) << shown.err;
  EXPECT_NE(shown.out.find("created_at"), std::string::npos) << shown.out;
  EXPECT_EQ(shown.out.find("whsec_"), std::string::npos) << shown.out;
  auto requests = api.requests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(requests[0].method, "POST");
  EXPECT_EQ(requests[0].target, "/api/v1/webhooks/secret");
  EXPECT_EQ(requests[1].method, "GET");
  EXPECT_EQ(requests[1].target, "/api/v1/webhooks/secret");
}

TEST_F(AsyncCommandsTest, WebhooksShowWithoutASecretSaysHowToMakeOne) {
  ScriptedApi api([](const Request&, int) {
    return Problem(404, "not_found", "Your organization has no webhook secret.");
  });
  CommandRun run = Toolgate(api, {"webhooks", "show"});
  EXPECT_EQ(run.rc, 1);
  EXPECT_NE(run.err.find("toolgate webhooks rotate-secret"), std::string::npos) << run.err;
}

TEST_F(AsyncCommandsTest, UsageErrorsNeverReachTheApi) {
  ScriptedApi api([](const Request&, int) { return Json(500, "{}"); });
  const std::vector<std::vector<std::string>> cases = {
      {"invoke", "f1", "--callback-url", "https://h.example/t"},  // needs --async
      {"invoke", "f1", "--async", "--callback-url", "ftp://h.example/t"},
      {"invoke", "f1", "--async=yes"},
      {"invoke", "f1", "--idempotency-key", ""},
      {"invoke", "f1", "--idempotency-key", std::string(256, 'k')},
      {"invoke", "f1", "--idempotency-key", "tab\there"},
      {"executions", "wait"},
      {"executions", "wait", "x1", "--timeout-s", "0"},
      {"executions", "wait", "x1", "--timeout-s", "soon"},
      {"executions", "wait", "x1", "--interval-ms", "5"},
      {"executions", "cancel"},
      {"executions", "cancel", "x1", "x2"},
      {"webhooks"},
      {"webhooks", "show", "extra"},
  };
  for (const auto& words : cases) {
    EXPECT_EQ(Toolgate(api, words).rc, 2) << words[0] << " " << (words.size() > 1 ? words[1] : "");
  }
  EXPECT_TRUE(api.requests().empty());
}

}  // namespace
}  // namespace toolgate::cli
