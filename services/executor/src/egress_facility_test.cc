// The HTTP facility of each runtime (Python context.fetch, JavaScript context.fetch, Lua
// http.request), run by real workers in the real sandbox, against a stand-in for the egress
// gateway (tests/egress/egress_servers.py: a forward proxy with the gateway's answers) and
// loopback upstreams, one of them HTTPS with a certificate from a test CA.
//
// The sandbox keeps its own network namespace, as in production. The test reaches into it the
// way the gateway does: a listening socket made inside the namespace (setns from a thread of
// this process) at the port the worker's environment names, relayed to the stand-in proxy on
// the host's loopback. So each facility is exercised exactly as it runs: inside the sandbox,
// with the sandbox's environment, file system and CA bundle, through a CONNECT tunnel or an
// absolute-form request.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <spawn.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "toolgate/base/json.h"
#include "toolgate/base/time.h"
#include "toolgate/executor/ca_bundle.h"
#include "toolgate/executor/egress_fetch.h"
#include "toolgate/executor/egress_gateway.h"
#include "toolgate/executor/process_runtime.h"
#include "toolgate/executor/process_worker.h"

extern char** environ;

namespace toolgate::executor {
namespace {

// egress_servers.py, started once for the whole suite.
class EgressServers {
 public:
  EgressServers() {
    char dir[] = "/tmp/egress-test-XXXXXX";
    if (::mkdtemp(dir) == nullptr) return;
    dir_ = dir;
    ::chmod(dir, 0755);  // the sandboxes' host uids bind the CA bundle written here
    int in[2], out[2];
    if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0) return;
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, in[0], 0);
    posix_spawn_file_actions_adddup2(&actions, out[1], 1);
    std::string script = TOOLGATE_EGRESS_SERVERS;
    char* argv[] = {const_cast<char*>("python3"), script.data(), dir, nullptr};
    if (posix_spawnp(&pid_, "python3", &actions, nullptr, argv, environ) != 0) pid_ = -1;
    posix_spawn_file_actions_destroy(&actions);
    ::close(in[0]);
    ::close(out[1]);
    stdin_ = in[1];
    std::string line;
    char c;
    while (::read(out[0], &c, 1) == 1 && c != '\n') line.push_back(c);
    ::close(out[0]);
    auto doc = ParseJson(line);
    simdjson::dom::object ports;
    if (!doc.ok() || doc->root.get_object().get(ports) != simdjson::SUCCESS) return;
    int64_t proxy = 0, plain = 0, secure = 0;
    GetInt(ports, "proxy", &proxy);
    GetInt(ports, "http", &plain);
    GetInt(ports, "https", &secure);
    proxy_port = static_cast<uint16_t>(proxy);
    http_port = static_cast<uint16_t>(plain);
    https_port = static_cast<uint16_t>(secure);
    auto bundle = WriteCaBundle(dir_ + "/ca.pem", kSystemCaBundle, dir_);
    if (bundle.ok()) ca_bundle = *bundle;
  }
  ~EgressServers() {
    if (stdin_ >= 0) ::close(stdin_);  // the servers exit when their stdin closes
    if (pid_ > 0) ::waitpid(pid_, nullptr, 0);
    if (!dir_.empty()) std::system(("rm -rf " + dir_).c_str());
  }
  bool ok() const { return proxy_port != 0 && http_port != 0 && https_port != 0; }

  uint16_t proxy_port = 0;
  uint16_t http_port = 0;
  uint16_t https_port = 0;
  std::string ca_bundle;  // the system's bundle plus the test CA, as --egress-ca-file makes it

 private:
  pid_t pid_ = -1;
  int stdin_ = -1;
  std::string dir_;
};

// Listens at 127.0.0.1:port inside the network namespace of process pid and relays every
// connection to 127.0.0.1:target on this process's own loopback.
class NamespaceRelay {
 public:
  NamespaceRelay(pid_t pid, uint16_t port, uint16_t target) : target_(target) {
    // setns changes the namespace of the calling thread only: a thread of its own makes the
    // socket, which stays in that namespace when the thread ends.
    std::thread([&] {
      int ns = ::open(("/proc/" + std::to_string(pid) + "/ns/net").c_str(), O_RDONLY | O_CLOEXEC);
      if (ns < 0 || ::setns(ns, CLONE_NEWNET) != 0) return;
      ::close(ns);
      int control = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
      struct ifreq lo {};
      std::snprintf(lo.ifr_name, sizeof lo.ifr_name, "lo");
      lo.ifr_flags = IFF_UP;
      ::ioctl(control, SIOCSIFFLAGS, &lo);  // the sandbox's loopback starts down
      ::close(control);
      listener_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
      sockaddr_in addr = Loopback(port);
      if (::bind(listener_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
          ::listen(listener_, 16) != 0) {
        ::close(listener_);
        listener_ = -1;
      }
    }).join();
    if (listener_ >= 0) acceptor_ = std::thread([this] { AcceptLoop(); });
  }
  ~NamespaceRelay() {
    stopping_ = true;
    if (listener_ >= 0) ::shutdown(listener_, SHUT_RDWR);
    if (acceptor_.joinable()) acceptor_.join();
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (int fd : open_) ::shutdown(fd, SHUT_RDWR);
    }
    for (std::thread& t : pipes_) t.join();
    if (listener_ >= 0) ::close(listener_);
  }
  bool ok() const { return listener_ >= 0; }

 private:
  static sockaddr_in Loopback(uint16_t port) {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return addr;
  }
  void AcceptLoop() {
    for (;;) {
      int inside = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
      if (inside < 0 || stopping_) {
        if (inside >= 0) ::close(inside);
        return;
      }
      int outside = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
      sockaddr_in addr = Loopback(target_);
      if (::connect(outside, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
        ::close(inside);
        ::close(outside);
        continue;
      }
      std::lock_guard<std::mutex> lock(mu_);
      open_.push_back(inside);
      open_.push_back(outside);
      pipes_.emplace_back([inside, outside] { Pipe(inside, outside); });
    }
  }
  // Copies bytes both ways until either side closes.
  static void Pipe(int a, int b) {
    pollfd fds[2] = {{a, POLLIN, 0}, {b, POLLIN, 0}};
    char buf[16384];
    while (::poll(fds, 2, -1) > 0) {
      for (int i = 0; i < 2; ++i) {
        if (fds[i].revents == 0) continue;
        ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
        if (n <= 0 || ::send(fds[1 - i].fd, buf, static_cast<size_t>(n), MSG_NOSIGNAL) != n) {
          ::shutdown(a, SHUT_RDWR);
          ::shutdown(b, SHUT_RDWR);
          return;
        }
      }
    }
  }

  uint16_t target_;
  int listener_ = -1;
  std::atomic<bool> stopping_{false};
  std::thread acceptor_;
  std::mutex mu_;
  std::vector<int> open_;           // guarded by mu_; closed by the process at exit
  std::vector<std::thread> pipes_;  // guarded by mu_
};

// One handler per runtime: fetches event.url with event's method, headers, body (json_body:
// a value the facility sends as JSON) and timeout_ms; returns {status, body, content_type} or,
// when the facility raised its error, {error: message}.
constexpr const char* kPythonHandler = R"(import toolgate

def service_handler(event, context):
    body = event.get("json_body", event.get("body"))
    try:
        r = context.fetch(event["url"], method=event.get("method", "GET"),
                          headers=event.get("headers"), body=body,
                          timeout_ms=event.get("timeout_ms"))
    except toolgate.EgressError as e:
        assert isinstance(e, context.EgressError)
        return {"error": str(e)}
    return {"status": r.status, "body": r.text(), "content_type": r.headers.get("content-type")}
)";

constexpr const char* kJavaScriptHandler = R"(exports.service_handler = (event, context) => {
  let r;
  try {
    r = context.fetch(event.url, {method: event.method, headers: event.headers,
                                  body: event.json_body !== undefined ? event.json_body : event.body,
                                  timeout_ms: event.timeout_ms});
  } catch (e) {
    if (!(e instanceof context.EgressError) || e.name !== 'EgressError') throw e;
    return {error: e.message};
  }
  return {status: r.status, body: r.text(), content_type: r.headers['content-type']};
};
)";

constexpr const char* kLuaHandler = R"(function service_handler(event, context)
  local headers = event.headers or {}
  local body = event.body
  if event.json_body then
    body = json.encode(event.json_body)
    headers["content-type"] = "application/json"
  end
  local ok, r = pcall(http.request, {url = event.url, method = event.method, headers = headers,
                                     body = body, timeout_ms = event.timeout_ms})
  if not ok then return {error = r} end
  return {status = r.status, body = r.body, content_type = r.headers["content-type"]}
end
)";

struct Answer {
  WorkerReply reply;
  int64_t status = 0;
  std::string body;
  std::string content_type;
  std::string error;
};

class EgressFacilityTest : public ::testing::TestWithParam<Language> {
 protected:
  static void SetUpTestSuite() { servers_ = new EgressServers(); }
  static void TearDownTestSuite() {
    delete servers_;
    servers_ = nullptr;
  }
  void SetUp() override { ASSERT_TRUE(servers_->ok()) << "egress_servers.py did not start"; }

  // A worker of this test's language in the sandbox; with egress, reachable through a relay.
  void StartWorker(bool egress = true, bool test_ca = true) {
    ProcessRuntimeConfig config;
    config.runtime_dir = TOOLGATE_RUNTIME_DIR;
    if (test_ca) config.ca_bundle = servers_->ca_bundle;
    SandboxSpec spec = WorkerSandboxSpec(GetParam(), config, 128, /*slot=*/7, /*device=*/-1);
    if (egress) {
      for (std::string& line : EgressProxyEnv()) spec.env.push_back(line);
    }
    auto plan = BuildSandboxPlan(spec);
    ASSERT_TRUE(plan.ok()) << plan.status().ToString();
    ProcessWorkerOptions options;
    if (GetParam() == Language::kLua) {
      options.stops_at_deadline = true;
      options.kill_grace_ms = 100;
    }
    auto worker = ProcessWorker::Start(*plan, options);
    ASSERT_TRUE(worker.ok()) << worker.status().ToString();
    worker_ = std::move(*worker);
    if (egress) {
      relay_ =
          std::make_unique<NamespaceRelay>(worker_->pid(), kEgressProxyPort, servers_->proxy_port);
      ASSERT_TRUE(relay_->ok()) << "cannot listen in the sandbox's network namespace";
    }
  }

  const char* Handler() const {
    switch (GetParam()) {
      case Language::kPython:
        return kPythonHandler;
      case Language::kJavaScript:
        return kJavaScriptHandler;
      case Language::kLua:
        return kLuaHandler;
    }
    return "";
  }

  // Runs the handler with event; the Lua worker answers the normalised response, whose body is
  // the handler's return value as JSON.
  Answer Fetch(const std::string& event, int64_t timeout_ms = 10000) {
    Invocation inv;
    inv.code = Handler();
    inv.event_json = event;
    inv.execution_id = "exec-1";
    inv.function_id = "fn-1";
    inv.version = "1";
    inv.caller_org_id = "org-1";
    inv.timeout_ms = timeout_ms;
    Answer answer;
    answer.reply = worker_->Call(inv, MonotonicUs() + timeout_ms * 1000);
    EXPECT_EQ(answer.reply.kind, WorkerReply::Kind::kValue)
        << answer.reply.error_type << ": " << answer.reply.error_message << "\n"
        << answer.reply.logs;
    std::string value = answer.reply.value;
    if (GetParam() == Language::kLua) {
      auto envelope = ParseJson(value);
      if (envelope.ok()) GetString(envelope->root.get_object().value(), "body", &value);
    }
    auto doc = ParseJson(value);
    simdjson::dom::object obj;
    if (!doc.ok() || doc->root.get_object().get(obj) != simdjson::SUCCESS) {
      ADD_FAILURE() << "not an object: " << value;
      return answer;
    }
    GetInt(obj, "status", &answer.status);
    GetString(obj, "body", &answer.body);
    GetString(obj, "content_type", &answer.content_type);
    GetString(obj, "error", &answer.error);
    return answer;
  }

  std::string HttpUrl(const std::string& path) const {
    return "http://127.0.0.1:" + std::to_string(servers_->http_port) + path;
  }
  std::string HttpsUrl(const std::string& path) const {
    return "https://127.0.0.1:" + std::to_string(servers_->https_port) + path;
  }

  static EgressServers* servers_;
  std::unique_ptr<ProcessWorker> worker_;
  std::unique_ptr<NamespaceRelay> relay_;
};

EgressServers* EgressFacilityTest::servers_ = nullptr;

// A field of the upstream's /echo answer.
std::string Echoed(const std::string& body, const char* field) {
  auto doc = ParseJson(body);
  std::string value;
  if (doc.ok()) GetString(doc->root.get_object().value(), field, &value);
  return value;
}

TEST_P(EgressFacilityTest, PlainGetGoesThroughTheGatewayInAbsoluteForm) {
  StartWorker();
  Answer a = Fetch(R"({"url":")" + HttpUrl("/echo?q=1") + R"(","headers":{"X-Test":"yes"}})");
  EXPECT_EQ(a.error, "");
  EXPECT_EQ(a.status, 200);
  EXPECT_EQ(a.content_type, "application/json");
  EXPECT_EQ(Echoed(a.body, "method"), "GET");
  EXPECT_EQ(Echoed(a.body, "path"), "/echo?q=1");
  EXPECT_EQ(Echoed(a.body, "x_test"), "yes");
  // Any status but the gateway's own answers is a response.
  a = Fetch(R"({"url":")" + HttpUrl("/status/418") + R"("})");
  EXPECT_EQ(a.error, "");
  EXPECT_EQ(a.status, 418);
  EXPECT_EQ(a.body, "status 418");
  // The worker that used the facility serves again (the JavaScript fetch thread started with
  // the process, so the call left no new thread behind).
  EXPECT_TRUE(a.reply.reusable) << a.reply.logs;
}

TEST_P(EgressFacilityTest, PostWithAJsonBodyOverHttpsThroughConnectTrustingTheOperatorCa) {
  StartWorker();
  Answer a = Fetch(R"({"url":")" + HttpsUrl("/echo") +
                   R"(","method":"POST","json_body":{"name":"ada","n":[1,2]}})");
  EXPECT_EQ(a.error, "");
  EXPECT_EQ(a.status, 200);
  EXPECT_EQ(Echoed(a.body, "method"), "POST");
  EXPECT_EQ(Echoed(a.body, "content_type"), "application/json");
  auto sent = ParseJson(Echoed(a.body, "body"));
  ASSERT_TRUE(sent.ok()) << a.body;
  std::string name;
  GetString(sent->root.get_object().value(), "name", &name);
  EXPECT_EQ(name, "ada");
}

TEST_P(EgressFacilityTest, WithoutTheOperatorCaTheCertificateIsRefused) {
  StartWorker(/*egress=*/true, /*test_ca=*/false);
  Answer a = Fetch(R"({"url":")" + HttpsUrl("/echo") + R"("})");
  EXPECT_EQ(a.status, 0);
  EXPECT_EQ(a.error.rfind("TLS: ", 0), 0u) << a.error;
}

TEST_P(EgressFacilityTest, TheGatewaysRefusalIsACatchableErrorWithItsExactMessage) {
  StartWorker();
  // Answered to an absolute-form request, and to a CONNECT.
  EXPECT_EQ(Fetch(R"({"url":"http://refused.test/x?key=secret"})").error,
            "refused.test is not in this version's egress list");
  EXPECT_EQ(Fetch(R"({"url":"https://10.0.0.5/"})").error,
            "egress to 10.0.0.5 is blocked: private address");
  EXPECT_EQ(Fetch(R"({"url":"https://broken.test/"})").error,
            "cannot connect to broken.test: connection refused");
}

TEST_P(EgressFacilityTest, RedirectsAreFollowedAndEachHopIsChecked) {
  StartWorker();
  Answer a = Fetch(R"({"url":")" + HttpUrl("/redirect-chain/5") + R"("})");
  EXPECT_EQ(a.error, "");
  EXPECT_EQ(a.status, 200);
  EXPECT_EQ(Echoed(a.body, "path"), "/echo");
  // A redirect from https to a host the gateway refuses goes through the gateway again.
  a = Fetch(R"({"url":")" + HttpsUrl("/redirect?to=http://refused.test/") + R"("})");
  EXPECT_EQ(a.error, "refused.test is not in this version's egress list");
  a = Fetch(R"({"url":")" + HttpUrl("/redirect-chain/6") + R"("})");
  EXPECT_EQ(a.error, "the request to 127.0.0.1 was redirected more than 5 times");
}

TEST_P(EgressFacilityTest, ARequestPastItsTimeoutFailsAndTheHandlerGoesOn) {
  StartWorker();
  Answer a = Fetch(R"({"url":")" + HttpUrl("/slow") + R"(","timeout_ms":300})");
  EXPECT_EQ(a.error, "the request to 127.0.0.1 took longer than 300 ms");
  a = Fetch(R"({"url":")" + HttpsUrl("/slow") + R"(","timeout_ms":300})");
  EXPECT_EQ(a.error, "the request to 127.0.0.1 took longer than 300 ms");
  // The same worker still fetches.
  EXPECT_EQ(Fetch(R"({"url":")" + HttpsUrl("/echo") + R"("})").status, 200);
}

// timeout_ms bounds the whole request, not each wait: an upstream that sends a byte every
// 300 ms never lets one read wait 1000 ms, and the request still fails at its timeout, well
// before the call's own deadline (which would make the call a timeout, not the handler's error).
TEST_P(EgressFacilityTest, ATimeoutBoundsTheWholeRequestNotEachWait) {
  StartWorker();
  Answer a = Fetch(R"({"url":")" + HttpUrl("/dribble") + R"(","timeout_ms":1000})", 20000);
  EXPECT_EQ(a.error, "the request to 127.0.0.1 took longer than 1000 ms");
  a = Fetch(R"({"url":")" + HttpsUrl("/dribble") + R"(","timeout_ms":1000})", 20000);
  EXPECT_EQ(a.error, "the request to 127.0.0.1 took longer than 1000 ms");
}

TEST_P(EgressFacilityTest, ARequestStillRunningAtTheCallsDeadlineEndsTheCallAsATimeout) {
  StartWorker();
  Invocation inv;
  inv.code = Handler();
  const std::string event = R"({"url":")" + HttpUrl("/slow") + R"("})";
  inv.event_json = event;
  inv.caller_org_id = "org-1";
  inv.timeout_ms = 700;
  // Not a caught error and a 200 answered in the last millisecond: the deadline's outcome.
  WorkerReply reply = worker_->Call(inv, MonotonicUs() + 700'000);
  EXPECT_EQ(reply.kind, WorkerReply::Kind::kTimeout)
      << reply.value << reply.error_type << ": " << reply.error_message;
}

TEST_P(EgressFacilityTest, TheGatewaysDeadlineAnswerEndsTheCallAsATimeout) {
  StartWorker();
  Invocation inv;
  inv.code = Handler();
  inv.event_json = R"({"url":"https://deadline.test/"})";
  inv.caller_org_id = "org-1";
  inv.timeout_ms = 1000;
  // The gateway cut the request at the call's deadline (504): not an error for the handler to
  // catch and answer 200 with in its last millisecond, but the deadline's outcome.
  WorkerReply reply = worker_->Call(inv, MonotonicUs() + 1'000'000);
  EXPECT_EQ(reply.kind, WorkerReply::Kind::kTimeout)
      << reply.value << reply.error_type << ": " << reply.error_message;
  // With a timeout_ms of its own shorter than the call, a 504 is the handler's to catch.
  StartWorker();
  EXPECT_EQ(Fetch(R"({"url":"http://deadline.test/","timeout_ms":200})").error,
            "the call's deadline passed");
}

TEST_P(EgressFacilityTest, ASandboxWithoutEgressSaysSo) {
  StartWorker(/*egress=*/false);
  EXPECT_EQ(Fetch(R"({"url":")" + HttpUrl("/echo") + R"("})").error,
            "egress is not available in this sandbox");
}

TEST_P(EgressFacilityTest, AnUncaughtRefusalFailsTheCallWithTheGatewaysMessage) {
  StartWorker();
  Invocation inv;
  const std::string code =
      GetParam() == Language::kPython
          ? "def service_handler(event, context):\n    context.fetch('http://refused.test/')\n"
      : GetParam() == Language::kJavaScript
          ? "exports.service_handler = (e, c) => c.fetch('http://refused.test/');\n"
          : "function service_handler(e, c) http.request{url = 'http://refused.test/'} end\n";
  inv.code = code;
  inv.event_json = "{}";
  inv.caller_org_id = "org-1";
  inv.timeout_ms = 10000;
  WorkerReply reply = worker_->Call(inv, MonotonicUs() + 10'000'000);
  std::string type = reply.error_type, message = reply.error_message;
  if (GetParam() == Language::kLua) {  // the Lua worker answers the normalised 500
    ASSERT_EQ(reply.kind, WorkerReply::Kind::kValue);
    auto envelope = ParseJson(reply.value);
    ASSERT_TRUE(envelope.ok());
    std::string body;
    GetString(envelope->root.get_object().value(), "body", &body);
    auto error = ParseJson(body);
    ASSERT_TRUE(error.ok()) << body;
    GetString(error->root.get_object().value(), "errorType", &type);
    GetString(error->root.get_object().value(), "errorMessage", &message);
    EXPECT_EQ(type, "LuaError");
  } else {
    ASSERT_EQ(reply.kind, WorkerReply::Kind::kError) << reply.value;
    EXPECT_EQ(type, "EgressError");
  }
  EXPECT_EQ(message, "refused.test is not in this version's egress list");
}

// Python's standard client finds the gateway in the sandbox's environment, and trusts the
// bundle SSL_CERT_FILE names, without being told.
TEST(EgressStandardLibraryTest, PythonUrllibGoesThroughTheGateway) {
  EgressServers servers;  // outlives the worker and the relay, declared after it
  ASSERT_TRUE(servers.ok());
  ProcessRuntimeConfig config;
  config.runtime_dir = TOOLGATE_RUNTIME_DIR;
  config.ca_bundle = servers.ca_bundle;
  SandboxSpec spec = WorkerSandboxSpec(Language::kPython, config, 128, /*slot=*/7, -1);
  for (std::string& line : EgressProxyEnv()) spec.env.push_back(line);
  auto plan = BuildSandboxPlan(spec);
  ASSERT_TRUE(plan.ok());
  auto worker = ProcessWorker::Start(*plan, ProcessWorkerOptions{});
  ASSERT_TRUE(worker.ok()) << worker.status().ToString();
  auto relay =
      std::make_unique<NamespaceRelay>((*worker)->pid(), kEgressProxyPort, servers.proxy_port);
  ASSERT_TRUE(relay->ok());
  const std::string code =
      "import json, urllib.request\n"
      "def service_handler(event, context):\n"
      "    out = []\n"
      "    for url in event['urls']:\n"
      "        with urllib.request.urlopen(url, timeout=5) as r:\n"
      "            out.append(json.loads(r.read())['path'])\n"
      "    return out\n";
  const std::string event = R"({"urls":["http://127.0.0.1:)" + std::to_string(servers.http_port) +
                            R"(/echo?via=http","https://127.0.0.1:)" +
                            std::to_string(servers.https_port) + R"(/echo?via=https"]})";
  Invocation inv;
  inv.code = code;
  inv.event_json = event;
  inv.caller_org_id = "org-1";
  inv.timeout_ms = 10000;
  WorkerReply reply = (*worker)->Call(inv, MonotonicUs() + 10'000'000);
  EXPECT_EQ(reply.kind, WorkerReply::Kind::kValue) << reply.error_message << reply.logs;
  EXPECT_EQ(reply.value, R"(["/echo?via=http","/echo?via=https"])");
}

INSTANTIATE_TEST_SUITE_P(Runtimes, EgressFacilityTest,
                         ::testing::Values(Language::kPython, Language::kJavaScript,
                                           Language::kLua),
                         [](const ::testing::TestParamInfo<Language>& info) {
                           switch (info.param) {
                             case Language::kPython:
                               return "Python";
                             case Language::kJavaScript:
                               return "JavaScript";
                             case Language::kLua:
                               return "Lua";
                           }
                           return "";
                         });

}  // namespace
}  // namespace toolgate::executor
