// Tenants cannot hurt each other: each attack of a hostile tool author or caller, through the
// real system, and what the platform must do about it (limits for the whole sandbox, nothing of
// a call outliving it, a worker protocol the handler cannot forge, fair execution slots).
#include <dirent.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "system.h"
#include "toolgate/base/json_writer.h"
#include "toolgate/base/time.h"
#include "toolgate/executor/cgroup.h"

namespace toolgate::testing {
namespace {

// Four slots, two per organization, and a short wait for a slot, so the tests can fill them.
const auto* const kEnv = ::testing::AddGlobalTestEnvironment(new SharedSystem(
    {}, {"TOOLGATE_SLOTS=4", "TOOLGATE_MAX_SLOTS_PER_ORG=2", "TOOLGATE_QUEUE_TIMEOUT_MS=1500"}));

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Host processes whose command line holds marker (a zombie's is empty: it runs no more).
int ProcessesWith(const std::string& marker) {
  int found = 0;
  DIR* proc = ::opendir("/proc");
  while (dirent* e = proc ? ::readdir(proc) : nullptr) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    std::string cmdline = ReadText(std::string("/proc/") + e->d_name + "/cmdline");
    for (char& c : cmdline) c = c == '\0' ? ' ' : c;
    if (cmdline.find(marker) != std::string::npos) ++found;
  }
  if (proc) ::closedir(proc);
  return found;
}

// Polls until no host process holds marker, for at most 5 s.
::testing::AssertionResult GoneWithin5s(const std::string& marker) {
  return WaitUntil([&] { return ProcessesWith(marker) == 0; }, 5000,
                   "no host process to hold " + marker, 0);
}

// The executor's cgroup tree in the freezer hierarchy (cgroup v1, as on the test machines):
// "<executor's cgroup>/toolgate-sandboxes-<pid>".
std::string SandboxTree() {
  executor::CgroupMounts mounts = executor::ParseCgroupMounts(
      ReadText("/proc/self/mountinfo"),
      ReadText("/proc/" + std::to_string(g_system->Pid("executor")) + "/cgroup"));
  auto it = mounts.v1.find("freezer");
  if (it == mounts.v1.end()) return "";
  return it->second + "/toolgate-sandboxes-" + std::to_string(g_system->Pid("executor"));
}

// Sandboxes with a process in them in the cgroup group of org_id.
int RunningSandboxes(const std::string& org_id) {
  std::string group = SandboxTree() + "/" + executor::CgroupTree::GroupFor(org_id);
  int running = 0;
  DIR* dir = ::opendir(group.c_str());
  while (dirent* e = dir ? ::readdir(dir) : nullptr) {
    if (e->d_name[0] != 's') continue;
    if (!ReadText(group + "/" + e->d_name + "/cgroup.procs").empty()) ++running;
  }
  if (dir) ::closedir(dir);
  return running;
}

class IsolationTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    tenant_ = new Account(*g_system, "Hostile Tenant");
    tenant_->TopUp(900'000'000);
    key_ = tenant_->CreateKey();
  }
  static void TearDownTestSuite() { delete tenant_; }

  // Publishes code as version 1 of a new function of account; returns the function's id.
  static std::string Publish(Account& account, const std::string& runtime, const std::string& code,
                             const std::string& extra = "") {
    std::string fn = account.CreateFunction(runtime + " tool");
    std::string body = R"({"version":"1","runtime":")" + runtime +
                       R"(","compute_type":"CPU","input_schema":{"type":"object"},"code":)" +
                       JsonWriter::Quote(code) + (extra.empty() ? "" : "," + extra) + "}";
    auto r = account.session().Post("/api/v1/functions/" + fn + "/versions", body);
    EXPECT_TRUE(r.ok() && r->status == 201) << (r.ok() ? r->body : r.status().ToString());
    return fn;
  }
  static http::HttpResponse Call(const std::string& fn, const std::string& event = "{}",
                                 const std::string& key = "",
                                 const std::vector<std::pair<std::string, std::string>>& h = {}) {
    return Invoke(*g_system, key.empty() ? key_ : key, fn, "1", R"({"event":)" + event + "}", h);
  }
  // The execution log of the execution a response names.
  static std::string LogsOf(const http::HttpResponse& r) {
    auto doc = Json(r.body);
    std::string_view execution_id;
    if (doc.root["summary"]["execution_id"].get(execution_id) != simdjson::SUCCESS) return "";
    auto got = tenant_->session().Get("/api/v1/executions/" + std::string(execution_id));
    if (!got.ok() || got->status != 200) return "";
    return StringField(got->body, "logs");
  }

  static Account* tenant_;
  static std::string key_;
};
Account* IsolationTest::tenant_ = nullptr;
std::string IsolationTest::key_;

// Six children of 200 MB each, unless the event asks for calm: under a 128 MB limit each process
// alone is within its own address-space rlimit, the sandbox together is not.
constexpr const char* kSixChildren = R"PY(
import os
def service_handler(event, context):
    if event.get('calm'):
        return 'calm'
    children = []
    for _ in range(6):
        pid = os.fork()
        if pid == 0:
            block = b'x' * (200 << 20)
            os._exit(0)
        children.append(pid)
    for pid in children:
        os.waitpid(pid, 0)
    return 'survived'
)PY";

TEST_F(IsolationTest, MemoryIsLimitedForTheWholeSandboxNotPerProcess) {
  std::string fn =
      Publish(*tenant_, "python", kSixChildren, R"("memory_mb":128,"timeout_ms":20000)");
  int64_t before = tenant_->Balance();
  auto r = Call(fn);
  EXPECT_EQ(r.status, 500) << r.body;  // the handler ran: its 500 is the response
  EXPECT_EQ(IntField(r.body, "statusCode"), 500) << r.body;
  EXPECT_NE(r.body.find("MemoryLimitExceeded"), std::string::npos) << r.body;
  auto doc = Json(r.body);
  int64_t used = 0;
  ASSERT_EQ(doc.root["summary"]["memory_used_mb"].get(used), simdjson::SUCCESS) << r.body;
  EXPECT_LE(used, 129) << "the sandbox went past its limit";
  EXPECT_LT(tenant_->Balance(), before);  // charged: the handler's own failure
}

TEST_F(IsolationTest, TheSandboxsMemoryLimitHoldsOnAWarmWorker) {
  // A warm worker's call takes its OOM baseline from the end of the call before: the kernel
  // killing a child for memory in a later call must still answer MemoryLimitExceeded.
  std::string fn =
      Publish(*tenant_, "python", kSixChildren, R"("memory_mb":128,"timeout_ms":20000)");
  for (int i = 0; i < 3; ++i) {
    auto calm = Call(fn, R"({"calm":true})");
    ASSERT_EQ(calm.status, 200) << calm.body;
  }
  auto r = Call(fn);
  EXPECT_EQ(r.status, 500) << r.body;
  EXPECT_NE(r.body.find("MemoryLimitExceeded"), std::string::npos) << r.body;
  // The worker the kernel struck in is not used again: the next call is calm on a new one.
  auto after = Call(fn, R"({"calm":true})");
  EXPECT_EQ(after.status, 200) << after.body;
}

TEST_F(IsolationTest, AThreadLeftSpinningIsStoppedWithItsWorker) {
  std::string fn = Publish(*tenant_, "python", R"PY(
import threading
calls = 0
def spin():
    while True:
        pass
def service_handler(event, context):
    global calls
    calls += 1
    if event.get('spin'):
        threading.Thread(target=spin, daemon=True).start()
    return calls
)PY");
  auto first = Call(fn, R"({"spin":true})");
  ASSERT_EQ(first.status, 200) << first.body;
  EXPECT_NE(LogsOf(first).find("thread(s) running; the worker was stopped"), std::string::npos);
  // The next call runs in a fresh worker: the module's counter starts again.
  auto second = Call(fn);
  EXPECT_EQ(second.status, 200) << second.body;
  EXPECT_EQ(StringField(second.body, "body"), "1") << second.body;
  auto third = Call(fn);
  EXPECT_EQ(StringField(third.body, "body"), "2") << "a clean call keeps its worker warm";
}

TEST_F(IsolationTest, AWorkerThreadsWorkerIsStoppedWithItsWorker) {
  std::string fn = Publish(*tenant_, "javascript", R"JS(
const { Worker } = require('worker_threads');
let calls = 0;
exports.service_handler = (event) => {
  calls += 1;
  if (event.spin) new Worker('for (;;) {}', { eval: true });
  return calls;
};
)JS");
  auto first = Call(fn, R"({"spin":true})");
  ASSERT_EQ(first.status, 200) << first.body;
  EXPECT_NE(LogsOf(first).find("the worker was stopped"), std::string::npos) << LogsOf(first);
  auto second = Call(fn);
  EXPECT_EQ(StringField(second.body, "body"), "1") << second.body;
}

TEST_F(IsolationTest, ADetachedChildDiesWithTheCallInJavaScript) {
  const std::string marker = "4242.1717";
  std::string fn = Publish(*tenant_, "javascript", R"JS(
exports.service_handler = (event) => {
  const cp = process.mainModule.require('child_process');
  const child = cp.spawn('/bin/sleep', [event.marker], { detached: true, stdio: 'ignore' });
  child.unref();
  return 'spawned';
};
)JS");
  auto r = Call(fn, R"({"marker":")" + marker + R"("})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(StringField(r.body, "body"), "\"spawned\"") << r.body;
  EXPECT_TRUE(GoneWithin5s(marker)) << "the child outlived its call";
}

TEST_F(IsolationTest, ADetachedChildDiesWithTheCallEvenWithAPatchedBootstrap) {
  const std::string marker = "4343.1717";
  std::string fn = Publish(*tenant_, "python", R"PY(
import os, subprocess, sys
def service_handler(event, context):
    # Switch off whatever the bootstrap would do after the call.
    main = sys.modules['__main__']
    for name in dir(main):
        if callable(getattr(main, name)) and name in ('stop_strays', 'reap'):
            setattr(main, name, lambda *a: None)
    subprocess.Popen(['/bin/sleep', event['marker']], start_new_session=True)
    return 'spawned'
)PY");
  auto r = Call(fn, R"({"marker":")" + marker + R"("})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(StringField(r.body, "body"), "\"spawned\"") << r.body;
  EXPECT_TRUE(GoneWithin5s(marker)) << "the child outlived its call";
}

TEST_F(IsolationTest, TheNextCallCannotReadThePreviousCallsSecret) {
  // The handler keeps what it is lent in a global and in a child process, and shows the next
  // call whatever it finds of it.
  std::string fn = Publish(*tenant_, "javascript", R"JS(
let kept = null;
exports.service_handler = (event, context) => {
  const seen = kept;
  kept = context.env.API_TOKEN;
  const cp = process.mainModule.require('child_process');
  let child = '';
  try { child = cp.execSync('cat /tmp/kept 2>/dev/null || true').toString(); } catch (e) {}
  cp.spawn('/bin/sh', ['-c', 'echo "$0" > /tmp/kept; exec sleep 60', kept],
           { detached: true, stdio: 'ignore' }).unref();
  return { seen, child };
};
)JS",
                           R"("declared_keys":["API_TOKEN"])");
  std::string first = tenant_->CreateSecret("first", "first-secret-9d1e");
  std::string second = tenant_->CreateSecret("second", "second-secret-2b7c");
  auto r1 = Call(fn, "{}", "", {{"X-Env-Keys", "API_TOKEN=" + first}});
  ASSERT_EQ(r1.status, 200) << r1.body;
  auto r2 = Call(fn, "{}", "", {{"X-Env-Keys", "API_TOKEN=" + second}});
  ASSERT_EQ(r2.status, 200) << r2.body;
  EXPECT_EQ(r2.body.find("first-secret-9d1e"), std::string::npos) << r2.body;
}

TEST_F(IsolationTest, AForgedFrameNeverAnswersAnotherCall) {
  // The handler writes a reply frame of its own on the worker's protocol pipe, then returns.
  std::string fn = Publish(*tenant_, "python", R"PY(
import json, os, struct
def service_handler(event, context):
    if event.get('forge'):
        payload = b'0' * 32 + json.dumps({'statusCode': 200, 'body': 'forged'}).encode()
        os.write(4, struct.pack('<IB', len(payload), ord('V')) + payload)
    return {'statusCode': 200, 'body': 'real ' + str(event.get('n'))}
)PY");
  auto forged = Call(fn, R"({"forge":true,"n":0})");
  EXPECT_EQ(forged.status, 500) << forged.body;
  EXPECT_EQ(IntField(forged.body, "statusCode"), 500) << forged.body;
  EXPECT_NE(forged.body.find("WorkerProtocolError"), std::string::npos) << forged.body;
  for (int n = 1; n <= 3; ++n) {
    auto r = Call(fn, R"({"n":)" + std::to_string(n) + "}");
    EXPECT_EQ(StringField(r.body, "body"), "real " + std::to_string(n)) << r.body;
  }
}

TEST_F(IsolationTest, AFrameWithTheRightNonceStillCannotAnswerTheNextCall) {
  // A handler that digs its call's nonce out of the bootstrap's frames can answer its own call
  // twice; the second answer must never reach the next call.
  std::string fn = Publish(*tenant_, "python", R"PY(
import json, os, struct, sys
def service_handler(event, context):
    if event.get('forge'):
        frame = sys._getframe()
        nonce = None
        while frame is not None and nonce is None:
            nonce = frame.f_locals.get('nonce')
            frame = frame.f_back
        payload = nonce + json.dumps({'statusCode': 200, 'body': 'forged'}).encode()
        os.write(4, struct.pack('<IB', len(payload), ord('V')) + payload)
    return {'statusCode': 200, 'body': 'real ' + str(event.get('n'))}
)PY");
  auto forged = Call(fn, R"({"forge":true,"n":0})");
  ASSERT_EQ(forged.status, 200) << forged.body;
  for (int n = 1; n <= 3; ++n) {
    auto r = Call(fn, R"({"n":)" + std::to_string(n) + "}");
    EXPECT_EQ(StringField(r.body, "body"), "real " + std::to_string(n)) << r.body;
  }
}

TEST_F(IsolationTest, ASpinningNeighbourLeavesOthersTheirSlots) {
  Account neighbour(*g_system, "Spinning Neighbour");
  neighbour.TopUp(900'000'000);
  std::string neighbour_key = neighbour.CreateKey();
  std::string spin =
      Publish(neighbour, "lua", "function service_handler(event, context) while true do end end",
              R"("timeout_ms":6000)");
  std::string echo =
      Publish(*tenant_, "lua", "function service_handler(event, context) return event end");
  int64_t before = neighbour.Balance();

  // Four spinning calls: two hold the neighbour's two slots, two wait for them.
  std::atomic<int> spun{0};
  std::atomic<int> answered{0};
  std::vector<int> statuses(4, 0);
  std::vector<std::thread> calls;
  for (int i = 0; i < 4; ++i) {
    calls.emplace_back([&, i] {
      statuses[i] = Call(spin, "{}", neighbour_key).status;
      if (statuses[i] == 408) ++spun;
      ++answered;
    });
  }
  EXPECT_TRUE(WaitUntil([&] { return RunningSandboxes(neighbour.org_id()) >= 2; }, 5000,
                        "the neighbour's two sandboxes", 0));
  ASSERT_EQ(RunningSandboxes(neighbour.org_id()), 2) << "the neighbour holds its cap, no more";
  // Meanwhile another organization's calls run at once, in the slots the neighbour may not take.
  for (int i = 0; i < 5; ++i) {
    auto r = Call(echo, R"({"i":)" + std::to_string(i) + "}");
    EXPECT_EQ(r.status, 200) << r.body;
  }
  EXPECT_EQ(spun.load(), 0) << "the other organization waited for the neighbour's slots";
  // Each echo ended while the neighbour's jobs were queued, so the executor held its result to
  // travel with the next one (Settler::SettleSoon); none came until the neighbour's queued calls
  // expired (1.5 s). The hold's own bound (1 ms) must have sent them first.
  EXPECT_EQ(answered.load(), 0) << "a held result waited for the neighbour's jobs";
  for (std::thread& t : calls) t.join();
  // Two spun to their timeout (408); two waited past the queue timeout for a slot (503).
  std::sort(statuses.begin(), statuses.end());
  EXPECT_EQ(statuses, (std::vector<int>{408, 408, 503, 503}));
  EXPECT_EQ(neighbour.Balance(), before) << "neither a 408 nor a 503 is charged";
}

TEST_F(IsolationTest, NoCapacityCarriesRetryAfter) {
  Account busy(*g_system, "Busy Org");
  busy.TopUp(900'000'000);
  std::string busy_key = busy.CreateKey();
  std::string spin =
      Publish(busy, "lua", "function service_handler(event, context) while true do end end",
              R"("timeout_ms":4000)");
  std::vector<std::thread> calls;
  for (int i = 0; i < 2; ++i) calls.emplace_back([&] { Call(spin, "{}", busy_key); });
  EXPECT_TRUE(WaitUntil([&] { return RunningSandboxes(busy.org_id()) >= 2; }, 5000,
                        "the busy organization's two sandboxes", 0));
  ASSERT_EQ(RunningSandboxes(busy.org_id()), 2);
  auto r = Call(spin, "{}", busy_key);
  EXPECT_EQ(r.status, 503) << r.body;
  EXPECT_NE(r.body.find("no_capacity"), std::string::npos) << r.body;
  auto retry = r.headers.find("retry-after");
  ASSERT_NE(retry, r.headers.end());
  EXPECT_EQ(retry->second, "1");
  for (std::thread& t : calls) t.join();
}

}  // namespace
}  // namespace toolgate::testing
