#include "system.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

#include "response_recorder.h"
#include "toolgate/base/crypto.h"
#include "toolgate/base/json_writer.h"
#include "toolgate/base/time.h"

namespace fs = std::filesystem;

namespace toolgate::testing {
namespace {

std::string Slurp(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

[[noreturn]] void Abort(const std::string& why, const std::string& data_dir) {
  std::fprintf(stderr, "integration harness: %s\n--- launcher output ---\n%s\n", why.c_str(),
               Slurp(fs::path(data_dir) / "launcher.log").c_str());
  for (const char* svc : {"auth", "registry", "secrets", "billing", "executor", "edge"}) {
    std::string log = Slurp(fs::path(data_dir) / "logs" / (std::string(svc) + ".log"));
    if (log.size() > 3000) log = log.substr(log.size() - 3000);
    std::fprintf(stderr, "--- %s (tail) ---\n%s\n", svc, log.c_str());
  }
  std::abort();
}

// WaitUntil (below) for the harness's own waits, whose callers report the failure themselves.
template <typename Cond>
bool PollUntil(int timeout_ms, Cond cond) {
  return static_cast<bool>(WaitUntil(cond, timeout_ms, "the system"));
}

}  // namespace

System::System(std::vector<std::string> extra_flags, std::vector<std::string> env)
    : flags_(std::move(extra_flags)), env_(std::move(env)) {
  InitCrypto();
  char tmpl[] = "/tmp/toolgate-it-XXXXXX";
  if (!::mkdtemp(tmpl)) Abort("mkdtemp failed", "/tmp");
  data_dir_ = tmpl;
  Launch();
}

void System::KillLauncher(int sig) {
  ASSERT_GT(launcher_, 0);
  ASSERT_EQ(::kill(launcher_, sig), 0);
  int status;
  ::waitpid(launcher_, &status, 0);
  launcher_ = -1;
}

void System::Restart() {
  url_.clear();
  Launch();
}

void System::Launch() {
  std::string launcher = std::string(TOOLGATE_BIN_DIR) + "/toolgate";
  std::vector<std::string> args = {
      launcher,      "up",   "--data-dir",         data_dir_, "--http-port", "0",
      "--log-level", "info", "--executor-threads", "4"};
  args.insert(args.end(), flags_.begin(), flags_.end());
  // Suites fund their organizations with top-ups (Account::TopUp), which only play money
  // allows; a suite that names --funding (funding_test.cc) tests the real modes instead.
  if (std::none_of(flags_.begin(), flags_.end(),
                   [](const std::string& f) { return f.rfind("--funding", 0) == 0; })) {
    args.push_back("--dev-funding");
  }
  std::vector<std::string> env = env_;
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::string log = data_dir_ + "/launcher.log";
  pid_t parent = ::getpid();
  launcher_ = ::fork();
  if (launcher_ == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != parent) ::_exit(1);
    FILE* f = std::freopen(log.c_str(), "w", stdout);
    (void)f;
    ::dup2(STDOUT_FILENO, STDERR_FILENO);
    for (auto& e : env) ::putenv(e.data());
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  bool up = PollUntil(180000, [&] {
    int status;
    if (::waitpid(launcher_, &status, WNOHANG) == launcher_) Abort("launcher exited", data_dir_);
    std::string state = ReadState();
    std::string url = StringField(state.empty() ? "{}" : state, "url");
    // A state file left by an earlier launcher on this directory names another pid.
    if (url.empty() || IntField(state, "pid") != launcher_) return false;
    url_ = url;
    RecordEdgeResponses(url_);
    return true;
  });
  if (!up || !WaitHealthy(60000)) Abort("system did not come up", data_dir_);
}

System* g_system = nullptr;

void SharedSystem::SetUp() {
  g_system = new System(flags_, env_);
}

void SharedSystem::TearDown() {
  delete g_system;
  g_system = nullptr;
}

System::~System() {
  if (launcher_ > 0) {
    ::kill(launcher_, SIGTERM);
    int status;
    ::waitpid(launcher_, &status, 0);
  }
  std::error_code ec;
  if (!::getenv("TOOLGATE_KEEP_TEST_DATA")) fs::remove_all(data_dir_, ec);
}

std::string System::ReadState() const {
  return Slurp(fs::path(data_dir_) / "run" / "state.json");
}

std::string System::State(const std::string& field) const {
  std::string state = ReadState();
  return StringField(state.empty() ? "{}" : state, field);
}

std::string System::Secret(const std::string& file) const {
  std::string value = Slurp(fs::path(data_dir_) / "keys" / file);
  while (!value.empty() && value.back() == '\n') value.pop_back();
  return value;
}

pid_t System::Pid(const std::string& child) const {
  auto doc = ParseJson(ReadState());
  if (!doc.ok()) return -1;
  int64_t pid = -1;
  simdjson::dom::element pids;
  simdjson::dom::object obj;
  if (doc->root["pids"].get(pids) || pids.get_object().get(obj)) return -1;
  if (GetInt(obj, child, &pid) != Field::kOk) return -1;
  return static_cast<pid_t>(pid);
}

void System::Kill(const std::string& child, int sig) {
  pid_t pid = Pid(child);
  ASSERT_GT(pid, 0) << child;
  ASSERT_EQ(::kill(pid, sig), 0) << child;
}

bool System::WaitRestarted(const std::string& child, pid_t old_pid, int timeout_ms) {
  bool restarted = PollUntil(timeout_ms, [&] {
    pid_t pid = Pid(child);
    return pid > 0 && pid != old_pid;
  });
  return restarted && WaitHealthy(timeout_ms);
}

bool System::WaitHealthy(int timeout_ms) {
  auto client = Client();
  client->SetTimeout(std::chrono::milliseconds(3000));
  return PollUntil(timeout_ms, [&] {
    auto r = client->Get("/healthz");
    return r.ok() && r->status == 200;
  });
}

std::unique_ptr<http::HttpClient> System::Client() const {
  return std::make_unique<http::HttpClient>(url_);
}

Account::Account(const System& system, const std::string& organization)
    : session_(system.Client()) {
  // As the web app and the CLI do: the edge refuses cookie-signed changes without it.
  session_->SetDefaultHeader("X-Toolgate-CSRF", "1");
  std::string email = "u" + HexEncode(RandomBytes(6)) + "@example.com";
  auto r = session_->Post("/api/v1/auth/signup", R"({"email":")" + email +
                                                     R"(","password":"correct horse battery",)"
                                                     R"("organization":")" +
                                                     organization + R"("})");
  if (!r.ok() || r->status != 201) {
    ADD_FAILURE() << "signup failed: " << (r.ok() ? r->body : r.status().ToString());
    return;
  }
  auto doc = Json(r->body);
  std::string_view id;
  if (doc.root["organization"]["id"].get(id) == simdjson::SUCCESS) org_id_ = std::string(id);
}

std::string Account::CreateKey(const std::string& scopes_json, const std::string& expires_at) {
  std::string body = R"({"name":"test","scopes":)" + scopes_json;
  if (!expires_at.empty()) body += R"(,"expires_at":")" + expires_at + "\"";
  body += "}";
  auto r = session_->Post("/api/v1/api-keys", body);
  if (!r.ok() || r->status != 201) {
    ADD_FAILURE() << "create key: " << (r.ok() ? r->body : r.status().ToString());
    return {};
  }
  return StringField(r->body, "key");
}

void Account::TopUp(int64_t micro_usd) {
  auto r = session_->Post("/api/v1/billing/top-ups",
                          R"({"amount_micro_usd":)" + std::to_string(micro_usd) + "}");
  if (!r.ok() || r->status != 201) {
    ADD_FAILURE() << "top-up: " << (r.ok() ? r->body : r.status().ToString());
  }
}

int64_t Account::Balance() {
  auto r = session_->Get("/api/v1/billing/balance");
  if (!r.ok() || r->status != 200) {
    ADD_FAILURE() << "balance: " << (r.ok() ? r->body : r.status().ToString());
    return -1;
  }
  return IntField(r->body, "balance_micro_usd");
}

int64_t Account::Available() {
  auto r = session_->Get("/api/v1/billing/balance");
  if (!r.ok() || r->status != 200) return -1;
  return IntField(r->body, "available_micro_usd");
}

std::string Account::CreateFunction(const std::string& name, const std::string& extra_members) {
  std::string body = R"({"name":")" + name +
                     R"(","description":"integration test","category":"Testing",)"
                     R"("visibility":"private","price_micro_usd":0)";
  if (!extra_members.empty()) {
    // Later members win: callers override visibility and price.
    body = R"({"name":")" + name + R"(","description":"integration test","category":"Testing",)" +
           extra_members;
    if (extra_members.find("\"visibility\"") == std::string::npos) {
      body += R"(,"visibility":"private")";
    }
    if (extra_members.find("\"price_micro_usd\"") == std::string::npos) {
      body += R"(,"price_micro_usd":0)";
    }
  }
  body += "}";
  auto r = session_->Post("/api/v1/functions", body);
  if (!r.ok() || r->status != 201) {
    ADD_FAILURE() << "create function: " << (r.ok() ? r->body : r.status().ToString());
    return {};
  }
  return StringField(r->body, "function_id");
}

http::HttpResponse Account::PublishLua(const std::string& function_id, const std::string& version,
                                       const std::string& code, const std::string& extra_members) {
  std::string body = R"({"version":")" + version +
                     R"(","runtime":"lua","compute_type":"CPU","input_schema":{"type":"object"},)"
                     R"("code":)" +
                     JsonWriter::Quote(code);
  if (!extra_members.empty()) body += "," + extra_members;
  body += "}";
  auto r = session_->Post("/api/v1/functions/" + function_id + "/versions", body);
  if (!r.ok()) {
    ADD_FAILURE() << "publish: " << r.status().ToString();
    return {};
  }
  return *r;
}

std::string Account::CreateSecret(const std::string& name, const std::string& value) {
  auto r = session_->Post("/api/v1/secrets",
                          R"({"name":")" + name + R"(","value":)" + JsonWriter::Quote(value) + "}");
  if (!r.ok() || r->status != 201) {
    ADD_FAILURE() << "create secret: " << (r.ok() ? r->body : r.status().ToString());
    return {};
  }
  return StringField(r->body, "id");
}

void Account::AddToWorkspace(const std::string& function_id) {
  auto r = session_->Post("/api/v1/workspace/tools", R"({"function_id":")" + function_id + "\"}");
  if (!r.ok() || r->status != 201) {
    ADD_FAILURE() << "add to workspace: " << (r.ok() ? r->body : r.status().ToString());
  }
}

std::vector<std::map<std::string, std::string>> Account::Ledger() {
  std::vector<std::map<std::string, std::string>> out;
  std::string cursor;
  for (;;) {
    std::string path = "/api/v1/billing/ledger?limit=200";
    if (!cursor.empty()) path += "&cursor=" + http::UrlEncode(cursor);
    auto r = session_->Get(path);
    if (!r.ok() || r->status != 200) {
      ADD_FAILURE() << "ledger: " << (r.ok() ? r->body : r.status().ToString());
      return out;
    }
    auto doc = Json(r->body);
    simdjson::dom::array items;
    if (doc.root["items"].get_array().get(items)) return out;
    for (auto item : items) {
      std::map<std::string, std::string> row;
      simdjson::dom::object obj;
      if (item.get_object().get(obj)) continue;
      for (auto [k, v] : obj) {
        std::string_view s;
        row[std::string(k)] =
            v.get_string().get(s) == simdjson::SUCCESS ? std::string(s) : ToJson(v);
      }
      out.push_back(std::move(row));
    }
    std::string_view next;
    if (doc.root["next_cursor"].get_string().get(next) != simdjson::SUCCESS || next.empty()) break;
    cursor = std::string(next);
  }
  return out;
}

http::HttpResponse Invoke(const System& system, const std::string& key,
                          const std::string& function_id, const std::string& version,
                          const std::string& body,
                          const std::vector<std::pair<std::string, std::string>>& headers) {
  auto client = system.Client();
  http::HeaderList h = headers;
  if (!key.empty()) h.emplace_back("Authorization", key);
  std::string path =
      "/api/v1/functions/" + function_id + "/" + (version.empty() ? "" : version + "/") + "invoke";
  auto r = client->Post(path, body, h);
  if (!r.ok()) {
    ADD_FAILURE() << "invoke transport failure: " << r.status().ToString();
    return {};
  }
  return *r;
}

ParsedJson Json(const std::string& body) {
  auto doc = ParseJson(body);
  if (!doc.ok()) {
    ADD_FAILURE() << "not JSON: " << body;
    return std::move(ParseJson("{}")).value();
  }
  return std::move(doc).value();
}

std::string StringField(const std::string& body, const std::string& field) {
  auto doc = ParseJson(body);
  std::string_view v;
  if (!doc.ok() || doc->root[field].get_string().get(v)) return {};
  return std::string(v);
}

int64_t IntField(const std::string& body, const std::string& field) {
  auto doc = ParseJson(body);
  int64_t v = 0;
  if (!doc.ok() || doc->root[field].get_int64().get(v)) return INT64_MIN;
  return v;
}

Operator CreateOperator(const System& system) {
  Operator op;
  op.email = "ops-" + HexEncode(RandomBytes(4)) + "@example.com";
  auto [status, out] =
      RunCommand(std::string(TOOLGATE_BIN_DIR) + "/toolgate admin create --email " + op.email +
                 " --data-dir " + system.data_dir() + " 2>&1");
  EXPECT_EQ(status, 0) << out;
  std::smatch m;
  if (std::regex_search(out, m, std::regex("password: (\\S+)"))) op.password = m[1];
  if (std::regex_search(out, m, std::regex("user_id: (\\S+)"))) op.user_id = m[1];
  EXPECT_EQ(op.password.size(), 32u) << out;
  op.session = system.Client();
  op.session->SetDefaultHeader("X-Toolgate-CSRF", "1");
  auto r = op.session->Post("/api/v1/auth/login",
                            R"({"email":")" + op.email + R"(","password":")" + op.password + "\"}");
  EXPECT_TRUE(r.ok() && r->status == 200) << (r.ok() ? r->body : r.status().ToString());
  return op;
}

std::pair<int, std::string> RunCommand(const std::string& command) {
  std::string out;
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  char buf[4096];
  while (pipe && fgets(buf, sizeof buf, pipe)) out += buf;
  int status = pipe ? ::pclose(pipe) : -1;
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

::testing::AssertionResult WaitUntil(const std::function<bool()>& condition, int timeout_ms,
                                     const std::string& what, int poll_ms) {
  const int64_t deadline = MonotonicUs() + int64_t{timeout_ms} * 1000;
  for (;;) {
    const bool last = MonotonicUs() >= deadline;
    if (condition()) return ::testing::AssertionSuccess();
    if (last) {
      return ::testing::AssertionFailure()
             << "timed out after " << timeout_ms << " ms waiting for " << what;
    }
    if (poll_ms > 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(poll_ms));  // the poll interval
    } else {
      std::this_thread::yield();
    }
  }
}

}  // namespace toolgate::testing
