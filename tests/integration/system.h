// The black-box test harness: a whole Toolgate system, started for real.
//
// System runs the `toolgate up` launcher (built beside the tests) on a fresh data directory with
// every port picked free, so NATS, Redis, PostgreSQL and all six services run as real processes,
// exactly as in production. Tests talk to it only over HTTP, and may kill any child process to
// watch the supervisor restart it.
#pragma once

#include <gtest/gtest.h>
#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "toolgate/base/json.h"
#include "toolgate/http_client/http_client.h"

namespace toolgate::testing {

class System {
 public:
  // Starts the system with extra `toolgate up` flags and environment ("NAME=value", inherited by
  // every service); aborts the test binary with a message (and the logs) when it does not come
  // up in time.
  explicit System(std::vector<std::string> extra_flags = {}, std::vector<std::string> env = {});
  // Stops the launcher (which stops everything in order) and removes the data directory.
  ~System();
  System(const System&) = delete;
  System& operator=(const System&) = delete;

  const std::string& url() const { return url_; }
  const std::string& data_dir() const { return data_dir_; }
  // A string of the launcher's state file: "nats_url", "redis_url" or "postgres_url".
  std::string State(const std::string& field) const;
  // A credential the launcher generated, DATA/keys/<file> ("postgres.password",
  // "redis.password", "nats-<user>.password") without its newline; "" when absent.
  std::string Secret(const std::string& file) const;
  // The current pid of a child ("redis", "billing", ...) from the launcher's state file.
  pid_t Pid(const std::string& child) const;
  // Sends sig to the child.
  void Kill(const std::string& child, int sig);
  // Waits until the child runs with a pid other than old_pid and /healthz answers 200.
  bool WaitRestarted(const std::string& child, pid_t old_pid, int timeout_ms);
  bool WaitHealthy(int timeout_ms);
  // The launcher's pid (-1 once KillLauncher reaped it).
  pid_t launcher_pid() const { return launcher_; }
  // Sends sig to the launcher itself and reaps it; what its children do then is the test's
  // business.
  void KillLauncher(int sig);
  // Runs `toolgate up` again on the same data directory, after KillLauncher; aborts like the
  // constructor when it does not come up.
  void Restart();
  // The launcher's state file: URLs of NATS, Redis, PostgreSQL and the edge, child pids.
  std::string State() const { return ReadState(); }
  // A new HTTP client for the edge.
  std::unique_ptr<http::HttpClient> Client() const;

 private:
  std::string ReadState() const;
  void Launch();
  std::vector<std::string> flags_;
  std::vector<std::string> env_;
  std::string data_dir_;
  std::string url_;
  pid_t launcher_ = -1;
};

// One System for a whole test binary, started before its first case and stopped after its
// last. A suite registers it once at namespace scope:
//   const auto* const kEnv = ::testing::AddGlobalTestEnvironment(new SharedSystem());
// and its cases reach it through g_system.
class SharedSystem : public ::testing::Environment {
 public:
  explicit SharedSystem(std::vector<std::string> extra_flags = {},
                        std::vector<std::string> env = {})
      : flags_(std::move(extra_flags)), env_(std::move(env)) {}
  void SetUp() override;
  void TearDown() override;

 private:
  std::vector<std::string> flags_;
  std::vector<std::string> env_;
};

// The running SharedSystem's System; null outside a test binary's run.
extern System* g_system;

// A signed-up user with an organization of their own, driving the management API with a
// session cookie.
class Account {
 public:
  Account(const System& system, const std::string& organization);

  http::HttpClient& session() { return *session_; }
  const std::string& org_id() const { return org_id_; }

  // Each helper fails the current test (ADD_FAILURE) and returns empty on an unexpected status.
  std::string CreateKey(const std::string& scopes_json = R"(["invoke"])",
                        const std::string& expires_at = "");
  void TopUp(int64_t micro_usd);
  int64_t Balance();
  int64_t Available();
  // Creates a function (fields as JSON members, e.g.
  // R"("visibility":"public","price_micro_usd":5)") and returns its id.
  std::string CreateFunction(const std::string& name, const std::string& extra_members = "");
  // Publishes a Lua version; extra_members adds fields such as "timeout_ms":100.
  http::HttpResponse PublishLua(const std::string& function_id, const std::string& version,
                                const std::string& code, const std::string& extra_members = "");
  std::string CreateSecret(const std::string& name, const std::string& value);
  void AddToWorkspace(const std::string& function_id);
  // GET /billing/ledger, all pages, parsed.
  std::vector<std::map<std::string, std::string>> Ledger();

 private:
  std::unique_ptr<http::HttpClient> session_;
  std::string org_id_;
};

// A platform operator (docs/operations.md "Operators"), created with `toolgate admin create` on
// the system's data directory and signed in over the API.
struct Operator {
  std::string email;
  std::string user_id;
  std::string password;
  std::unique_ptr<http::HttpClient> session;  // sends X-Toolgate-CSRF with its cookie
};
// Fails the current test (EXPECT) when the operator cannot be created or signed in.
Operator CreateOperator(const System& system);

// POST …/invoke with key; version empty uses the latest form of the path.
http::HttpResponse Invoke(const System& system, const std::string& key,
                          const std::string& function_id, const std::string& version,
                          const std::string& body,
                          const std::vector<std::pair<std::string, std::string>>& headers = {});

// Parses a JSON body; fails the test and returns an empty document when it is not JSON.
ParsedJson Json(const std::string& body);
// Runs a shell command; its exit status (-1 when it did not exit) and its output, stderr merged.
std::pair<int, std::string> RunCommand(const std::string& command);
// The string member "field" of a JSON object body ("" when absent).
std::string StringField(const std::string& body, const std::string& field);
int64_t IntField(const std::string& body, const std::string& field);

// The one way an integration test waits for something the system does in its own time: polls
// condition every poll_ms (0: yields between polls instead of sleeping) until it holds or
// timeout_ms has passed, and evaluates it once more at the deadline. Returns success, or a
// failure that says what was awaited and for how long, so a caller states the wait as an
// assertion: ASSERT_TRUE(WaitUntil([&] { ... }, 10'000, "the key to be refused")).
// condition runs on the calling thread and may itself assert.
::testing::AssertionResult WaitUntil(const std::function<bool()>& condition, int timeout_ms,
                                     const std::string& what, int poll_ms = 50);

}  // namespace toolgate::testing
