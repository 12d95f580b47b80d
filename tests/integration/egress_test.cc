// Outbound HTTP through the egress gateway, against a real outside host: the test makes a network
// namespace of its own joined by a veth pair (a private /30), runs an HTTP and HTTPS server
// there (egress_upstream.py, with a certificate made by openssl for its address), and starts the
// system with that /30 in --egress-allow-cidr and the certificate in --egress-ca-file. Every
// case publishes a tool with its own egress declaration and calls it; the table has a column per
// runtime's code: Python's standard urllib, and each runtime's HTTP facility (Python and
// JavaScript context.fetch, Lua http.request), held to the same cases.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "system.h"
#include "toolgate/base/json_writer.h"
#include "toolgate/base/time.h"

namespace toolgate::testing {
namespace {

namespace fs = std::filesystem;

// The test's own /30, its two ends and its namespace's names, unique per process so that
// parallel runs do not collide.
struct Subnet {
  std::string base;      // "10.231.X.Y"
  std::string host;      // the host's end, .Y+1
  std::string upstream;  // the namespace's end, .Y+2
  std::string outside;   // a private address in the next /30: never allowed
  std::string cidr;      // "10.231.X.Y/30"
  std::string netns;
  std::string veth_host;
  std::string veth_peer;
};

Subnet MakeSubnet() {
  const int pid = static_cast<int>(::getpid());
  const int index = pid % 16000;
  const int third = index / 64;
  const int fourth = (index % 64) * 4;
  auto at = [&](int offset) {
    return "10.231." + std::to_string(third) + "." + std::to_string(fourth + offset);
  };
  Subnet s;
  s.base = at(0);
  s.host = at(1);
  s.upstream = at(2);
  s.outside = fourth + 6 < 256 ? at(6) : "10.231." + std::to_string(third + 1) + ".2";
  s.cidr = s.base + "/30";
  s.netns = "tgeg-" + std::to_string(pid);
  s.veth_host = "tgeg" + std::to_string(pid) + "h";
  s.veth_peer = "tgeg" + std::to_string(pid) + "n";
  return s;
}

const Subnet kNet = MakeSubnet();
constexpr int kHttpPort = 8080;
constexpr int kHttpsPort = 8443;

// A throw-away certificate for the upstream's address, made before the system starts: its
// executor trusts it as the operator's CA (--egress-ca-file), which is how the runtimes' HTTP
// facilities, which take no CA of their own, verify the upstream. The directory; empty when
// openssl failed (Upstream::SetUp then fails the run).
std::string MakeUpstreamCertificate() {
  char dir_template[] = "/tmp/toolgate-egress-XXXXXX";
  if (::mkdtemp(dir_template) == nullptr) return "";
  const std::string dir = dir_template;
  ::chmod(dir.c_str(), 0755);
  const std::string command = "openssl req -x509 -newkey rsa:2048 -nodes -days 1 -keyout " + dir +
                              "/key.pem -out " + dir + "/cert.pem -subj /CN=" + kNet.upstream +
                              " -addext subjectAltName=IP:" + kNet.upstream + " >/dev/null 2>&1";
  return std::system(command.c_str()) == 0 ? dir : "";
}
const std::string kCertDir = MakeUpstreamCertificate();

const auto* const kSystem = ::testing::AddGlobalTestEnvironment(
    new SharedSystem({}, {"TOOLGATE_EGRESS_ALLOW_CIDR=" + kNet.cidr,
                          "TOOLGATE_EGRESS_CA_FILE=" + kCertDir + "/cert.pem"}));

std::string ReadText(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Runs a command line; fails the test with it when it does not exit 0.
bool Run(const std::string& command) {
  int rc = std::system((command + " >/dev/null 2>&1").c_str());
  EXPECT_EQ(rc, 0) << command;
  return rc == 0;
}

// The namespace, its veth pair, a test CA certificate for the upstream's address, and the
// upstream server in the namespace. Removed at the end, whatever the tests did.
class Upstream : public ::testing::Environment {
 public:
  void SetUp() override {
    dir_ = kCertDir;
    ASSERT_FALSE(dir_.empty()) << "openssl could not make the upstream's certificate";
    const std::string n = kNet.netns;
    bool ok =
        Run("ip netns add " + n) &&
        Run("ip link add " + kNet.veth_host + " type veth peer name " + kNet.veth_peer) &&
        Run("ip link set " + kNet.veth_peer + " netns " + n) &&
        Run("ip addr add " + kNet.host + "/30 dev " + kNet.veth_host) &&
        Run("ip link set " + kNet.veth_host + " up") &&
        Run("ip netns exec " + n + " ip addr add " + kNet.upstream + "/30 dev " + kNet.veth_peer) &&
        Run("ip netns exec " + n + " ip link set " + kNet.veth_peer + " up") &&
        Run("ip netns exec " + n + " ip link set lo up");
    ASSERT_TRUE(ok);
    ca_pem_ = ReadText(dir_ + "/cert.pem");
    server_ = ::fork();
    if (server_ == 0) {
      // Gone with the test, however it ends, and off the test's output (whose reader waits for
      // every writer to close it).
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      int log = ::open((dir_ + "/upstream.log").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (log >= 0) {
        ::dup2(log, STDOUT_FILENO);
        ::dup2(log, STDERR_FILENO);
      }
      const std::string script =
          std::string(TOOLGATE_SOURCE_DIR) + "/tests/integration/egress_upstream.py";
      const std::string ready = dir_ + "/ready";
      ::execlp("ip", "ip", "netns", "exec", n.c_str(), "python3", script.c_str(), "--address",
               kNet.upstream.c_str(), "--http-port", std::to_string(kHttpPort).c_str(),
               "--https-port", std::to_string(kHttpsPort).c_str(), "--cert",
               (dir_ + "/cert.pem").c_str(), "--key", (dir_ + "/key.pem").c_str(), "--ready-file",
               ready.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    auto ready_or_exited = [&] {
      int status;
      if (::waitpid(server_, &status, WNOHANG) != 0) {
        ADD_FAILURE() << "the upstream server exited";
        return true;
      }
      return fs::exists(dir_ + "/ready");
    };
    EXPECT_TRUE(WaitUntil(ready_or_exited, 30000, "the upstream server to start", 0));
    ASSERT_TRUE(fs::exists(dir_ + "/ready")) << "the upstream server did not start";
  }

  void TearDown() override {
    if (server_ > 0) {
      ::kill(server_, SIGKILL);
      ::waitpid(server_, nullptr, 0);
    }
    std::system(("ip netns del " + kNet.netns + " >/dev/null 2>&1").c_str());
    std::system(("ip link del " + kNet.veth_host + " >/dev/null 2>&1").c_str());
    if (!dir_.empty()) fs::remove_all(dir_);
  }

  static const std::string& ca_pem() { return ca_pem_; }

 private:
  std::string dir_;
  pid_t server_ = -1;
  static std::string ca_pem_;
};
std::string Upstream::ca_pem_;

const auto* const kUpstream = ::testing::AddGlobalTestEnvironment(new Upstream());

std::string HttpUrl(const std::string& path) {
  return "http://" + kNet.upstream + ":" + std::to_string(kHttpPort) + path;
}
std::string HttpsUrl(const std::string& path) {
  return "https://" + kNet.upstream + ":" + std::to_string(kHttpsPort) + path;
}
std::string Authority(int port) {
  return kNet.upstream + ":" + std::to_string(port);
}

// The Redis port of system, from the configuration the launcher wrote.
int RedisPort(const System& system = *g_system) {
  std::string conf = ReadText(fs::path(system.data_dir()) / "redis" / "redis.conf");
  size_t at = conf.find("\nport ");
  return at == std::string::npos ? 0 : std::atoi(conf.c_str() + at + 6);
}

// --- The runtimes' column ------------------------------------------------------------------------
// Each runtime's handler takes {"url", "ca"?} or {"direct": [host, port]} and answers
// {"outcome": "answered", "status", "body"} | {"outcome": "refused", "status", "message"}
// (the gateway's X-Toolgate-Egress-Refused or -Error) | {"outcome": "error", "message"} |
// {"outcome": "connected"} | {"outcome": "failed"} (a direct socket).

struct Runtime {
  const char* name;     // the column's name
  const char* runtime;  // the version's runtime
  const char* code;
  // The runtime's own HTTP facility (context.fetch, http.request): a refusal is an error
  // carrying the gateway's message and no status, also for a refused CONNECT.
  bool facility = false;
};

constexpr char kPythonCode[] = R"PY(
import socket, ssl, urllib.error, urllib.request

def service_handler(event, context):
    if "direct" in event:
        host, port = event["direct"]
        try:
            socket.create_connection((host, port), timeout=2).close()
            return {"outcome": "connected"}
        except OSError as e:
            return {"outcome": "failed", "error": type(e).__name__}
    tls = ssl.create_default_context(cadata=event["ca"]) if "ca" in event else None
    try:
        with urllib.request.urlopen(event["url"], timeout=30, context=tls) as r:
            return {"outcome": "answered", "status": r.status, "body": r.read().decode()}
    except urllib.error.HTTPError as e:
        message = (e.headers.get("X-Toolgate-Egress-Refused") or
                   e.headers.get("X-Toolgate-Egress-Error") or "")
        return {"outcome": "refused", "status": e.code, "message": message}
    except urllib.error.URLError as e:
        return {"outcome": "error", "message": str(e.reason)}
)PY";

// The HTTP facilities: {"outcome": "refused", "message"} is the error they raise.
constexpr char kPythonFetchCode[] = R"PY(
import socket
import toolgate

def service_handler(event, context):
    if "direct" in event:
        host, port = event["direct"]
        try:
            socket.create_connection((host, port), timeout=2).close()
            return {"outcome": "connected"}
        except OSError as e:
            return {"outcome": "failed", "error": type(e).__name__}
    try:
        r = context.fetch(event["url"], timeout_ms=event.get("timeout_ms"))
    except toolgate.EgressError as e:
        return {"outcome": "refused", "message": str(e)}
    return {"outcome": "answered", "status": r.status, "body": r.text()}
)PY";

// A direct socket in JavaScript is asynchronous and handlers are not: a child node process
// tries it and says what happened.
constexpr char kJavaScriptFetchCode[] = R"JS(
const PROBE = `const [host, port] = JSON.parse(process.argv[1]);
const s = require('net').connect(port, host);
s.setTimeout(2000, () => { console.log('failed'); process.exit(0); });
s.on('connect', () => { console.log('connected'); process.exit(0); });
s.on('error', () => { console.log('failed'); process.exit(0); });`;

exports.service_handler = (event, context) => {
  if (event.direct) {
    const r = require('child_process').spawnSync(
        process.execPath, ['-e', PROBE, JSON.stringify(event.direct)],
        {timeout: 10000, encoding: 'utf8'});
    return {outcome: String(r.stdout).trim() || 'probe failed: ' + String(r.stderr || r.error)};
  }
  let r;
  try {
    r = context.fetch(event.url, {timeout_ms: event.timeout_ms});
  } catch (e) {
    if (!(e instanceof context.EgressError)) throw e;
    return {outcome: 'refused', message: e.message};
  }
  return {outcome: 'answered', status: r.status, body: r.text()};
};
)JS";

// Lua has no socket library at all: a direct connection cannot even be written.
constexpr char kLuaHttpCode[] = R"LUA(
function service_handler(event, context)
  if event.direct then
    return {outcome = socket == nil and "failed" or "connected"}
  end
  local ok, r = pcall(http.request, {url = event.url, timeout_ms = event.timeout_ms})
  if not ok then return {outcome = "refused", message = r} end
  return {outcome = "answered", status = r.status, body = r.body}
end
)LUA";

const Runtime kRuntimes[] = {
    {"python", "python", kPythonCode},
    {"python_fetch", "python", kPythonFetchCode, true},
    {"javascript_fetch", "javascript", kJavaScriptFetchCode, true},
    {"lua_http", "lua", kLuaHttpCode, true},
};

// The runtimes' HTTP facilities alone.
const Runtime kFacilities[] = {kRuntimes[1], kRuntimes[2], kRuntimes[3]};

// --- The cases ---------------------------------------------------------------------------------

struct Case {
  const char* name;
  std::vector<std::string> egress;  // the version's declaration
  std::string event;                // JSON
  std::string outcome;              // the handler's "outcome"
  int status = 0;                   // its "status" (answered or refused), 0: not checked
  std::string text;                 // in its "body" or "message"
  std::string facility_text = {};   // a facility's message where it differs from text
};

std::string UrlEvent(const std::string& url, bool with_ca = false) {
  std::string event = R"({"url":)" + JsonWriter::Quote(url);
  if (with_ca) event += R"(,"ca":)" + JsonWriter::Quote(Upstream::ca_pem());
  return event + "}";
}

std::vector<Case> Cases() {
  const std::string http = Authority(kHttpPort);
  const std::string https = Authority(kHttpsPort);
  const int redis = RedisPort();
  return {
      {"AllowedHttp", {http}, UrlEvent(HttpUrl("/hello")), "answered", 200, "hello from upstream"},
      {"AllowedHttpsEndToEnd",
       {https},
       UrlEvent(HttpsUrl("/hello"), true),
       "answered",
       200,
       "hello from upstream"},
      {"HostNotDeclared",
       {"api.example.com"},
       UrlEvent(HttpUrl("/hello")),
       "refused",
       403,
       http + " is not in this version's egress list"},
      {"NameResolvingToLoopback",
       {"localhost:" + std::to_string(kHttpPort)},
       UrlEvent("http://localhost:" + std::to_string(kHttpPort) + "/"),
       "refused",
       403,
       "is blocked: loopback address"},
      {"PrivateAddressOutsideTheAllowedNet",
       {"*"},
       UrlEvent("http://" + kNet.outside + "/"),
       "refused",
       403,
       "egress to " + kNet.outside + " is blocked: private address"},
      {"CloudMetadata",
       {"*"},
       UrlEvent("http://169.254.169.254/latest/meta-data/"),
       "refused",
       403,
       "egress to 169.254.169.254 is blocked: cloud metadata address"},
      {"PlatformRedis",
       {"127.0.0.1:" + std::to_string(redis)},
       UrlEvent("http://127.0.0.1:" + std::to_string(redis) + "/"),
       "refused",
       403,
       "egress to 127.0.0.1:" + std::to_string(redis) + " is blocked: a platform address"},
      {"RedirectToAForbiddenAddress",
       {http, "*"},
       UrlEvent(HttpUrl("/redirect?to=http://169.254.169.254/")),
       "refused",
       403,
       "egress to 169.254.169.254 is blocked: cloud metadata address"},
      // urllib loses the message of a refused CONNECT; the facilities keep it.
      {"TunnelToAForbiddenAddress",
       {"*"},
       UrlEvent("https://169.254.169.254/", true),
       "error",
       0,
       "403",
       "egress to 169.254.169.254 is blocked: cloud metadata address"},
      {"DirectSocket",
       {http},
       R"({"direct":[)" + JsonWriter::Quote(kNet.upstream) + "," + std::to_string(kHttpPort) + "]}",
       "failed",
       0,
       ""},
  };
}

class EgressTest : public ::testing::TestWithParam<Runtime> {
 protected:
  static void SetUpTestSuite() {
    owner_ = new Account(*g_system, "Egress Owner");
    owner_->TopUp(900'000'000);
    key_ = owner_->CreateKey();
  }
  static void TearDownTestSuite() { delete owner_; }

  // Publishes the runtime's handler as version 1 with egress and extra members.
  static std::string Publish(const std::vector<std::string>& egress,
                             const std::string& extra = "") {
    const Runtime& rt = GetParam();
    std::string fn = owner_->CreateFunction(std::string(rt.name) + " egress tool");
    JsonWriter list;
    list.BeginArray();
    for (const auto& entry : egress) list.String(entry);
    list.EndArray();
    std::string body = R"({"version":"1","runtime":")" + std::string(rt.runtime) +
                       R"(","compute_type":"CPU","input_schema":{"type":"object"},"code":)" +
                       JsonWriter::Quote(rt.code) + R"(,"egress":)" + list.Take() +
                       (extra.empty() ? "" : "," + extra) + "}";
    auto r = owner_->session().Post("/api/v1/functions/" + fn + "/versions", body);
    EXPECT_TRUE(r.ok() && r->status == 201) << (r.ok() ? r->body : r.status().ToString());
    return fn;
  }
  static http::HttpResponse Call(const std::string& fn, const std::string& event) {
    return Invoke(*g_system, key_, fn, "1", R"({"event":)" + event + "}");
  }
  // The execution a response names, as its owner sees it.
  static std::string ExecutionOf(const http::HttpResponse& r) {
    auto doc = Json(r.body);
    std::string_view execution_id;
    if (doc.root["summary"]["execution_id"].get(execution_id) != simdjson::SUCCESS) return "";
    auto got = owner_->session().Get("/api/v1/executions/" + std::string(execution_id));
    EXPECT_TRUE(got.ok() && got->status == 200);
    return got.ok() ? got->body : "";
  }

  static Account* owner_;
  static std::string key_;
};
Account* EgressTest::owner_ = nullptr;
std::string EgressTest::key_;

TEST_P(EgressTest, EveryCaseAnswersAsItsRuleSays) {
  for (const Case& c : Cases()) {
    SCOPED_TRACE(c.name);
    std::string fn = Publish(c.egress);
    auto r = Call(fn, c.event);
    ASSERT_EQ(r.status, 200) << r.body;
    std::string answer = StringField(r.body, "body");
    // A facility's refusal is its error, with the gateway's message and no status.
    const bool facility = GetParam().facility;
    const std::string outcome = facility && c.outcome == "error" ? "refused" : c.outcome;
    const std::string& expected = facility && !c.facility_text.empty() ? c.facility_text : c.text;
    EXPECT_EQ(StringField(answer, "outcome"), outcome) << answer;
    if (c.status != 0 && !(facility && outcome == "refused")) {
      EXPECT_EQ(IntField(answer, "status"), c.status) << answer;
    }
    std::string text = StringField(answer, outcome == "answered" ? "body" : "message");
    EXPECT_NE(text.find(expected), std::string::npos) << answer;
  }
  EXPECT_TRUE(g_system->WaitHealthy(10000));
}

TEST_P(EgressTest, TheExecutionLogListsRequestsWithoutQueriesAndTheSummaryCountsTheirBytes) {
  std::string fn = Publish({Authority(kHttpPort)});
  auto r = Call(fn, UrlEvent(HttpUrl("/hello?token=s3cret-value")));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(StringField(StringField(r.body, "body"), "outcome"), "answered") << r.body;
  auto doc = Json(r.body);
  int64_t summary_bytes = 0;
  ASSERT_EQ(doc.root["summary"]["egress_bytes"].get(summary_bytes), simdjson::SUCCESS) << r.body;
  EXPECT_GT(summary_bytes, 0);

  std::string execution = ExecutionOf(r);
  EXPECT_EQ(execution.find("s3cret"), std::string::npos) << execution;
  EXPECT_EQ(execution.find("/hello"), std::string::npos) << execution;
  auto log = Json(execution);
  simdjson::dom::array requests;
  ASSERT_EQ(log.root["egress"].get(requests), simdjson::SUCCESS) << execution;
  int count = 0;
  int64_t logged_bytes = 0;
  for (simdjson::dom::element request : requests) {
    ++count;
    std::string_view method, host, address;
    int64_t port = 0, status = 0, sent = 0, received = 0;
    ASSERT_EQ(request["method"].get(method), simdjson::SUCCESS);
    ASSERT_EQ(request["host"].get(host), simdjson::SUCCESS);
    ASSERT_EQ(request["port"].get(port), simdjson::SUCCESS);
    ASSERT_EQ(request["address"].get(address), simdjson::SUCCESS);
    ASSERT_EQ(request["status"].get(status), simdjson::SUCCESS);
    ASSERT_EQ(request["bytes_sent"].get(sent), simdjson::SUCCESS);
    ASSERT_EQ(request["bytes_received"].get(received), simdjson::SUCCESS);
    EXPECT_EQ(method, "GET");
    EXPECT_EQ(host, kNet.upstream);
    EXPECT_EQ(port, kHttpPort);
    EXPECT_EQ(address, kNet.upstream);
    EXPECT_EQ(status, 200);
    logged_bytes += sent + received;
  }
  EXPECT_EQ(count, 1);
  EXPECT_EQ(logged_bytes, summary_bytes);
  int64_t execution_bytes = 0;
  ASSERT_EQ(Json(execution).root["egress_bytes"].get(execution_bytes), simdjson::SUCCESS);
  EXPECT_EQ(execution_bytes, summary_bytes);
}

TEST_P(EgressTest, ASlowUpstreamIsCutAtTheDeadlineAndNotCharged) {
  std::string fn = Publish({Authority(kHttpPort)}, R"("timeout_ms":1500)");
  int64_t before = owner_->Balance();
  auto r = Call(fn, UrlEvent(HttpUrl("/slow?s=60")));
  EXPECT_EQ(r.status, 408) << r.body;
  EXPECT_EQ(owner_->Balance(), before);
  EXPECT_TRUE(g_system->WaitHealthy(10000));
}

// Publishes version 1 of a new function of owner's that runs runtime's code with this egress
// list; its id ("" when publishing failed, which fails the test).
std::string PublishProbe(Account& owner, const Runtime& runtime,
                         const std::vector<std::string>& egress) {
  std::string list;
  for (const std::string& entry : egress)
    list += (list.empty() ? "" : ",") + JsonWriter::Quote(entry);
  std::string fn = owner.CreateFunction(std::string(runtime.name) + " probe");
  std::string body = R"({"version":"1","runtime":")" + std::string(runtime.runtime) +
                     R"(","compute_type":"CPU","input_schema":{"type":"object"},"code":)" +
                     JsonWriter::Quote(runtime.code) + R"(,"egress":[)" + list + "]}";
  auto published = owner.session().Post("/api/v1/functions/" + fn + "/versions", body);
  EXPECT_TRUE(published.ok() && published->status == 201)
      << (published.ok() ? published->body : published.status().ToString());
  return published.ok() && published->status == 201 ? fn : "";
}

TEST_P(EgressTest, PlatformAddressesStayRefusedWhenLoopbackIsAllowed) {
  // A second, short-lived system whose operator allows 127.0.0.1: the platform's own services
  // on it are still refused.
  System local({}, {"TOOLGATE_EGRESS_ALLOW_CIDR=127.0.0.1/32"});
  Account owner(local, "Loopback Owner");
  owner.TopUp(100'000'000);
  std::string key = owner.CreateKey();
  const std::string edge = local.url().substr(local.url().rfind(':') + 1);
  const std::string redis = std::to_string(RedisPort(local));
  for (const std::string& port : {redis, edge}) {
    SCOPED_TRACE(port);
    const std::string authority = "127.0.0.1:" + port;
    std::string fn = PublishProbe(owner, GetParam(), {authority});
    ASSERT_FALSE(fn.empty());
    auto r =
        Invoke(local, key, fn, "1", R"({"event":)" + UrlEvent("http://" + authority + "/") + "}");
    ASSERT_EQ(r.status, 200) << r.body;
    std::string answer = StringField(r.body, "body");
    EXPECT_EQ(StringField(answer, "outcome"), "refused") << answer;
    EXPECT_EQ(StringField(answer, "message"),
              "egress to " + authority + " is blocked: a platform address")
        << answer;
  }
  EXPECT_TRUE(local.WaitHealthy(10000));
}

// The attack: admin ports on every address (TOOLGATE_ADMIN_ADDRESS=0.0.0.0, as containers are
// told to) and an allowed CIDR that holds one of the host's own addresses (the veth's host end):
// a tool read every service's /metrics through that address. The host's addresses are refused
// on every port, whatever the allow list says, and so are the edge's and the data stores' ports.
TEST(EgressHostTest, NoToolReachesThePlatformThroughAnAddressOfTheHost) {
  System exposed({}, {"TOOLGATE_EGRESS_ALLOW_CIDR=" + kNet.cidr, "TOOLGATE_ADMIN_ADDRESS=0.0.0.0"});
  Account owner(exposed, "Host Probe Owner");
  owner.TopUp(100'000'000);
  const std::string key = owner.CreateKey();
  std::vector<std::string> ports = {exposed.url().substr(exposed.url().rfind(':') + 1),
                                    std::to_string(RedisPort(exposed))};
  ParsedJson state = Json(exposed.State());
  simdjson::dom::object admin;
  ASSERT_EQ(state.root["admin"].get_object().get(admin), simdjson::SUCCESS) << exposed.State();
  for (auto [name, url] : admin) {
    std::string_view text = url.get_string().value_unsafe();
    ports.emplace_back(text.substr(text.rfind(':') + 1));
  }
  ASSERT_GE(ports.size(), 8u);
  for (const Runtime& runtime : kRuntimes) {
    SCOPED_TRACE(runtime.name);
    std::vector<std::string> egress;
    for (const std::string& port : ports) egress.push_back(kNet.host + ":" + port);
    std::string fn = PublishProbe(owner, runtime, egress);
    ASSERT_FALSE(fn.empty());
    for (const std::string& authority : egress) {
      SCOPED_TRACE(authority);
      auto r = Invoke(exposed, key, fn, "1",
                      R"({"event":)" + UrlEvent("http://" + authority + "/metrics") + "}");
      ASSERT_EQ(r.status, 200) << r.body;
      std::string answer = StringField(r.body, "body");
      EXPECT_EQ(StringField(answer, "outcome"), "refused") << answer;
      EXPECT_EQ(StringField(answer, "message"),
                "egress to " + kNet.host + " is blocked: an address of this host")
          << answer;
    }
  }
  EXPECT_TRUE(exposed.WaitHealthy(10000));
}

INSTANTIATE_TEST_SUITE_P(Runtimes, EgressTest, ::testing::ValuesIn(kRuntimes),
                         [](const ::testing::TestParamInfo<Runtime>& info) {
                           return std::string(info.param.name);
                         });

using FacilityTest = EgressTest;

// A facility's timeout_ms bounds its whole request, not each wait on the network: the upstream
// sends a byte of its answer every 300 ms, so no single wait reaches 1000 ms, and the request
// still fails at its timeout with the error the handler catches, long before the call's own
// deadline (which would end the call as a 408 instead of the handler's answer).
TEST_P(FacilityTest, ATimeoutBoundsTheWholeRequestNotEachWait) {
  std::string fn = Publish({Authority(kHttpPort), Authority(kHttpsPort)}, R"("timeout_ms":15000)");
  for (const std::string& url : {HttpUrl("/dribble"), HttpsUrl("/dribble")}) {
    SCOPED_TRACE(url);
    auto r = Call(fn, R"({"url":)" + JsonWriter::Quote(url) + R"(,"timeout_ms":1000})");
    ASSERT_EQ(r.status, 200) << r.body;
    std::string answer = StringField(r.body, "body");
    EXPECT_EQ(StringField(answer, "outcome"), "refused") << answer;
    EXPECT_EQ(StringField(answer, "message"),
              "the request to " + kNet.upstream + " took longer than 1000 ms")
        << answer;
  }
}

INSTANTIATE_TEST_SUITE_P(Facilities, FacilityTest, ::testing::ValuesIn(kFacilities),
                         [](const ::testing::TestParamInfo<Runtime>& info) {
                           return std::string(info.param.name);
                         });

// A handler's own HTTP client, talking to the gateway over a raw socket, sends what no library
// would: a request whose head two parsers could frame differently (request smuggling, RFC 9112,
// 6.1). The gateway answers it 400 and nothing of it reaches the upstream, which notes every
// request it receives for the test to ask about.
constexpr char kRawProxyCode[] = R"PY(
import os
import socket

def service_handler(event, context):
    host, _, port = os.environ["TOOLGATE_EGRESS_PROXY"].rpartition(":")
    answer = b""
    with socket.create_connection((host, int(port)), timeout=10) as s:
        s.sendall(event["request"].encode())
        while True:
            data = s.recv(65536)
            if not data:
                break
            answer += data
    return {"answer": answer.decode("latin-1")}
)PY";

class GatewayFramingTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    owner_ = new Account(*g_system, "Framing Owner");
    owner_->TopUp(100'000'000);
    key_ = owner_->CreateKey();
  }
  static void TearDownTestSuite() { delete owner_; }

  // Whether a request for id reached the upstream, as the upstream says.
  static std::string Recorded(const std::string& id) {
    http::HttpClient upstream("http://" + Authority(kHttpPort));
    auto r = upstream.Get("/recorded?id=" + id);
    EXPECT_TRUE(r.ok() && r->status == 200) << (r.ok() ? r->body : r.status().ToString());
    return r.ok() ? r->body : "";
  }

  static Account* owner_;
  static std::string key_;
};
Account* GatewayFramingTest::owner_ = nullptr;
std::string GatewayFramingTest::key_;

TEST_F(GatewayFramingTest, TransferEncodingWithContentLengthIsAnswered400AndNeverForwarded) {
  const std::string http = Authority(kHttpPort);
  std::string fn = owner_->CreateFunction("raw proxy client");
  std::string body = R"({"version":"1","runtime":"python","compute_type":"CPU",)"
                     R"("input_schema":{"type":"object"},"code":)" +
                     JsonWriter::Quote(kRawProxyCode) + R"(,"egress":[)" + JsonWriter::Quote(http) +
                     "]}";
  auto published = owner_->session().Post("/api/v1/functions/" + fn + "/versions", body);
  ASSERT_TRUE(published.ok() && published->status == 201)
      << (published.ok() ? published->body : published.status().ToString());

  // An upstream that honours Content-Length reads "0\r\n\r\n" as the body; one that honours
  // chunked (as RFC 9112 says it must) takes the rest for a second request, one the gateway
  // never saw.
  const std::string id = "framing-" + std::to_string(::getpid());
  const std::string smuggled =
      "GET /record?id=" + id + "-smuggled HTTP/1.1\r\nHost: " + http + "\r\n\r\n";
  const std::string request = "POST http://" + http + "/record?id=" + id +
                              " HTTP/1.1\r\nHost: " + http +
                              "\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n"
                              "0\r\n\r\n" +
                              smuggled;
  auto r = Invoke(*g_system, key_, fn, "1",
                  R"({"event":{"request":)" + JsonWriter::Quote(request) + "}}");
  ASSERT_EQ(r.status, 200) << r.body;
  std::string answer = StringField(StringField(r.body, "body"), "answer");
  EXPECT_TRUE(answer.starts_with("HTTP/1.1 400 Bad Request\r\n")) << answer;
  EXPECT_NE(answer.find("\r\nX-Toolgate-Egress-Error: the request has both Transfer-Encoding "
                        "and Content-Length\r\n"),
            std::string::npos)
      << answer;
  EXPECT_EQ(Recorded(id), "no");
  EXPECT_EQ(Recorded(id + "-smuggled"), "no");
  EXPECT_TRUE(g_system->WaitHealthy(10000));
}

}  // namespace
}  // namespace toolgate::testing
