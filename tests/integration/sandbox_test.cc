// Escape attempts, each through a published tool: every one must fail inside the worker's
// sandbox while the platform stays healthy.
#include <gtest/gtest.h>
#include <signal.h>

#include <string>
#include <thread>

#include "system.h"
#include "toolgate/base/json_writer.h"

namespace toolgate::testing {
namespace {

const auto* const kEnv = ::testing::AddGlobalTestEnvironment(new SharedSystem());

// The port of a "scheme://[user@]host:port[/path]" URL.
int PortOf(const std::string& url) {
  size_t at = url.rfind(':');
  return at == std::string::npos ? -1 : std::atoi(url.c_str() + at + 1);
}

// Each attempt is a function attempt(arg) that returns a description of what happened; the
// handler runs it and reports {"escaped": bool, "detail": ...}. An exception counts as blocked.
constexpr const char* kPythonAttempts = R"PY(
import ctypes, os, signal, socket

def read_file(path):
    with open(path, 'rb') as f:
        return f.read(64).hex()

def list_dir(path):
    return os.listdir(path)

def write_file(path):
    with open(path, 'w') as f:
        f.write('pwned')
    return path

def connect(address):
    host, port = address.rsplit(':', 1)
    s = socket.create_connection((host, int(port)), timeout=2)
    s.close()
    return 'connected'

def kill(pid):
    os.kill(int(pid), signal.SIGKILL)
    return 'killed'

def ptrace(pid):
    libc = ctypes.CDLL(None, use_errno=True)
    PTRACE_ATTACH = 16
    if libc.ptrace(PTRACE_ATTACH, int(pid), None, None) != 0:
        raise OSError(ctypes.get_errno(), 'ptrace refused')
    return 'attached'

def fill_tmp(_):
    written = 0
    chunk = b'x' * (1 << 20)
    with open('/tmp/fill', 'wb') as f:
        while written < (1 << 30):
            f.write(chunk)
            written += len(chunk)
    return written

def fork_bomb(_):
    children = 0
    while True:
        pid = os.fork()
        if pid == 0:
            while True:
                pass
        children += 1

def scan_proc(needle):
    found = []
    pids = [p for p in os.listdir('/proc') if p.isdigit()]
    for pid in pids:
        for name in ('environ', 'cmdline'):
            try:
                with open('/proc/%s/%s' % (pid, name), 'rb') as f:
                    if needle.encode() in f.read():
                        found.append(pid + '/' + name)
            except OSError:
                pass
    if found:
        return found
    raise LookupError('%d processes visible, none holds it' % len(pids))

ATTEMPTS = {name: fn for name, fn in globals().items() if callable(fn) and not name.startswith('_')}

def service_handler(event, context):
    try:
        detail = ATTEMPTS[event['attempt']](event.get('arg'))
        return {'escaped': True, 'detail': repr(detail)}
    except Exception as e:
        return {'escaped': False, 'detail': type(e).__name__ + ': ' + str(e)}
)PY";

constexpr const char* kJavaScriptAttempts = R"JS(
const fs = require('fs');
const attempts = {
  read_file: (path) => fs.readFileSync(path).subarray(0, 64).toString('hex'),
  write_file: (path) => { fs.writeFileSync(path, 'pwned'); return path; },
  kill: (pid) => { process.kill(Number(pid), 'SIGKILL'); return 'killed'; },
  spawn: (cmd) => require('child_process').execSync(cmd).toString(),
};
exports.service_handler = (event) => {
  try {
    return {escaped: true, detail: String(attempts[event.attempt](event.arg))};
  } catch (e) {
    return {escaped: false, detail: String(e && e.message)};
  }
};
)JS";

class SandboxTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    attacker_ = new Account(*g_system, "Attacker Org");
    attacker_->TopUp(500'000'000);
    key_ = attacker_->CreateKey();
    python_ = Publish(kPythonAttempts, "python", R"("timeout_ms":5000)");
    javascript_ = Publish(kJavaScriptAttempts, "javascript", R"("timeout_ms":5000)");
  }
  static void TearDownTestSuite() { delete attacker_; }

  static std::string Publish(const std::string& code, const std::string& runtime,
                             const std::string& extra) {
    std::string fn = attacker_->CreateFunction(runtime + " attempts");
    std::string body = R"({"version":"1","runtime":")" + runtime +
                       R"(","compute_type":"CPU","input_schema":{"type":"object"},"code":)" +
                       JsonWriter::Quote(code) + "," + extra + "}";
    auto r = attacker_->session().Post("/api/v1/functions/" + fn + "/versions", body);
    EXPECT_TRUE(r.ok() && r->status == 201) << (r.ok() ? r->body : r.status().ToString());
    return fn;
  }

  static http::HttpResponse Attempt(const std::string& fn, const std::string& attempt,
                                    const std::string& arg) {
    JsonWriter w;
    w.BeginObject().Key("event").BeginObject().Field("attempt", attempt).Field("arg", arg);
    w.EndObject().EndObject();
    return Invoke(*g_system, key_, fn, "1", w.Take());
  }

  // Runs an attempt that must be refused inside the sandbox; returns what the handler saw.
  static std::string ExpectBlocked(const std::string& fn, const std::string& attempt,
                                   const std::string& arg) {
    auto r = Attempt(fn, attempt, arg);
    EXPECT_EQ(r.status, 200) << attempt << " " << arg << ": " << r.body;
    auto body = Json(StringField(r.body, "body"));
    bool escaped = true;
    std::string_view detail;
    EXPECT_EQ(body.root["escaped"].get(escaped), simdjson::SUCCESS) << r.body;
    if (body.root["detail"].get(detail) != simdjson::SUCCESS) detail = "";
    EXPECT_FALSE(escaped) << attempt << " " << arg << " escaped: " << detail;
    return std::string(detail);
  }

  static void ExpectHealthy() {
    EXPECT_TRUE(g_system->WaitHealthy(10000));
    auto r = Attempt(python_, "list_dir", "/tmp");  // a harmless call still works
    EXPECT_EQ(r.status, 200) << r.body;
  }

  static Account* attacker_;
  static std::string key_, python_, javascript_;
};
Account* SandboxTest::attacker_ = nullptr;
std::string SandboxTest::key_, SandboxTest::python_, SandboxTest::javascript_;

TEST_F(SandboxTest, CannotReadShadowOrTheDataDirectory) {
  ExpectBlocked(python_, "read_file", "/etc/shadow");
  ExpectBlocked(python_, "list_dir", g_system->data_dir());
  ExpectBlocked(python_, "read_file", g_system->data_dir() + "/keys/master.key");
  ExpectBlocked(python_, "read_file", g_system->data_dir() + "/keys/executor.key");
  ExpectBlocked(python_, "list_dir", "/root");
  ExpectBlocked(javascript_, "read_file", "/etc/shadow");
  ExpectBlocked(javascript_, "read_file", g_system->data_dir() + "/keys/master.key");
  ExpectHealthy();
}

TEST_F(SandboxTest, CannotWriteOutsideTmp) {
  for (const std::string& path :
       {std::string("/usr/lib/pwned"), std::string("/pwned"), std::string("/etc/passwd"),
        std::string("/runtime/python/worker.py"), g_system->data_dir() + "/pwned"}) {
    ExpectBlocked(python_, "write_file", path);
    ExpectBlocked(javascript_, "write_file", path);
  }
  auto r = Attempt(python_, "write_file", "/tmp/allowed");
  EXPECT_NE(r.body.find(R"(\"escaped\":true)"), std::string::npos) << r.body;
  ExpectHealthy();
}

TEST_F(SandboxTest, CannotReachThePlatformOrTheInternet) {
  for (const char* field : {"nats_url", "redis_url", "postgres_url"}) {
    int port = PortOf(g_system->State(field));
    ASSERT_GT(port, 0) << field;
    ExpectBlocked(python_, "connect", "127.0.0.1:" + std::to_string(port));
  }
  int http_port = PortOf(g_system->url());
  ExpectBlocked(python_, "connect", "127.0.0.1:" + std::to_string(http_port));
  ExpectBlocked(python_, "connect", "1.1.1.1:80");
  ExpectBlocked(python_, "connect", "example.com:443");
  // The only network interface is the sandbox's own loopback (where the egress door listens).
  auto r = Attempt(javascript_, "spawn", "cat /proc/net/dev");
  EXPECT_NE(r.body.find("lo:"), std::string::npos) << r.body;
  EXPECT_EQ(r.body.find("eth"), std::string::npos) << r.body;
  ExpectHealthy();
}

TEST_F(SandboxTest, CannotSignalOrTraceTheExecutor) {
  pid_t executor = g_system->Pid("executor");
  ASSERT_GT(executor, 0);
  ExpectBlocked(python_, "kill", std::to_string(executor));
  ExpectBlocked(python_, "ptrace", std::to_string(executor));
  ExpectBlocked(python_, "ptrace", "1");  // not even its own sandbox's init
  ExpectBlocked(javascript_, "kill", std::to_string(executor));
  EXPECT_EQ(g_system->Pid("executor"), executor);
  ExpectHealthy();
}

TEST_F(SandboxTest, AForkBombStaysInItsSandbox) {
  pid_t executor = g_system->Pid("executor");
  auto r = Attempt(python_, "fork_bomb", "");
  // The bomb hits its process limit (and the handler's error is its answer) or its deadline.
  EXPECT_TRUE(r.status == 200 || r.status == 408) << r.body;
  EXPECT_EQ(r.body.find(R"(\"escaped\":true)"), std::string::npos) << r.body;
  EXPECT_EQ(g_system->Pid("executor"), executor);
  ExpectHealthy();
}

TEST_F(SandboxTest, FillingTmpStopsAtItsSize) {
  std::string detail = ExpectBlocked(python_, "fill_tmp", "");
  EXPECT_NE(detail.find("No space left on device"), std::string::npos) << detail;
  ExpectHealthy();
}

TEST_F(SandboxTest, CannotReadAnotherOrganizationsSecret) {
  // A victim's tool holds its secret in the environment while it runs; the attacker scans every
  // process it can see, in its environment and command line, while the victim's call runs.
  Account victim(*g_system, "Victim Org");
  victim.TopUp(50'000'000);
  std::string victim_key = victim.CreateKey();
  std::string fn = victim.CreateFunction("holds a secret");
  std::string code =
      "import os, time\n"
      "def service_handler(event, context):\n"
      "    deadline = time.time() + 3\n"
      "    while time.time() < deadline and os.environ.get('API_TOKEN'):\n"
      "        time.sleep(0.05)\n"
      "    return 'done'\n";
  std::string body = R"({"version":"1","runtime":"python","compute_type":"CPU",)"
                     R"("input_schema":{"type":"object"},"declared_keys":["API_TOKEN"],"code":)" +
                     JsonWriter::Quote(code) + "}";
  auto published = victim.session().Post("/api/v1/functions/" + fn + "/versions", body);
  ASSERT_TRUE(published.ok() && published->status == 201);
  std::string secret = victim.CreateSecret("victim", "victim-secret-7f3a");

  std::thread victim_call([&] {
    auto r = Invoke(*g_system, victim_key, fn, "1", R"({"event": {}})",
                    {{"X-Env-Keys", "API_TOKEN=" + secret}});
    EXPECT_EQ(r.status, 200) << r.body;
  });
  std::string detail = ExpectBlocked(python_, "scan_proc", "victim-secret-7f3a");
  victim_call.join();
  // Only the attacker's own sandbox is visible: its worker and nothing else.
  EXPECT_NE(detail.find("1 processes visible"), std::string::npos) << detail;
  ExpectHealthy();
}

}  // namespace
}  // namespace toolgate::testing
