// `toolgate up --detach`, `toolgate status` and `toolgate down` as a user types them, and
// `toolgate up` refusing to start with the cause on its console and a non-zero exit. Each case
// runs the launcher itself on a data directory of its own.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "system.h"
#include "toolgate/base/crypto.h"
#include "toolgate/base/json.h"
#include "toolgate/http_client/http_client.h"

namespace fs = std::filesystem;

namespace toolgate::testing {
namespace {

struct CommandRun {
  int status;
  std::string out;
};

// Runs `toolgate ARGS`, stdout and stderr together, and waits for it to exit; env: NAME=VALUE
// words added to its environment.
CommandRun Toolgate(const std::string& args, const std::string& env = "") {
  std::string cmd =
      "env " + env + " " + std::string(TOOLGATE_BIN_DIR) + "/toolgate " + args + " 2>&1";
  CommandRun r{-1, {}};
  FILE* pipe = ::popen(cmd.c_str(), "r");
  char buf[4096];
  while (pipe && fgets(buf, sizeof buf, pipe)) r.out += buf;
  int status = pipe ? ::pclose(pipe) : -1;
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A process that exists and is not a zombie (a zombie has exited; only its parent's wait is
// missing, and the parent of a detached launcher is whoever adopted it).
bool Alive(pid_t pid) {
  std::string stat = ReadFile("/proc/" + std::to_string(pid) + "/stat");
  size_t paren = stat.rfind(')');
  return paren != std::string::npos && paren + 2 < stat.size() && stat[paren + 2] != 'Z';
}

// The pids a launcher's state file lists: its own ("pid") and each child's.
std::map<std::string, pid_t> StatePids(const fs::path& data) {
  std::map<std::string, pid_t> out;
  auto state = ParseJson(ReadFile(data / "run" / "state.json"));
  if (!state.ok()) return out;
  int64_t pid = 0;
  if (state->root["pid"].get_int64().get(pid) == simdjson::SUCCESS) out["launcher"] = pid;
  simdjson::dom::object pids;
  if (state->root["pids"].get_object().get(pids) == simdjson::SUCCESS) {
    for (auto [name, value] : pids) {
      if (value.get_int64().get(pid) == simdjson::SUCCESS) out[std::string(name)] = pid;
    }
  }
  return out;
}

class UpDown : public ::testing::Test {
 protected:
  void SetUp() override {
    data_ = fs::temp_directory_path() / ("toolgate-updown-" + HexEncode(RandomBytes(4)));
  }
  void TearDown() override {
    // Whatever a failed case left running stops with the data directory's launcher.
    Toolgate("down --data-dir " + data_.string());
    fs::remove_all(data_);
  }
  fs::path data_;
};

TEST_F(UpDown, DetachedSystemIsShownByStatusAndStoppedByDown) {
  CommandRun up = Toolgate("up --detach --data-dir " + data_.string() + " --http-port 0");
  ASSERT_EQ(up.status, 0) << up.out;
  const std::string announce = "Toolgate is up at ";
  size_t at = up.out.find(announce);
  ASSERT_NE(at, std::string::npos) << up.out;
  std::string url = up.out.substr(at + announce.size(),
                                  up.out.find(' ', at + announce.size()) - at - announce.size());
  EXPECT_NE(up.out.find("toolgate down --data-dir " + data_.string()), std::string::npos) << up.out;

  // `up` has returned; the system runs on without it.
  auto health = http::HttpClient(url).Get("/healthz");
  ASSERT_TRUE(health.ok()) << health.status().ToString();
  EXPECT_EQ(health->status, 200);

  CommandRun status = Toolgate("status --data-dir " + data_.string());
  EXPECT_EQ(status.status, 0) << status.out;
  EXPECT_NE(status.out.find("Toolgate runs at " + url), std::string::npos) << status.out;
  std::map<std::string, pid_t> pids = StatePids(data_);
  ASSERT_TRUE(pids.count("launcher")) << ReadFile(data_ / "run" / "state.json");
  EXPECT_NE(status.out.find("launcher pid " + std::to_string(pids["launcher"])), std::string::npos)
      << status.out;
  for (const char* child : {"nats", "redis", "postgres", "auth", "registry", "secrets", "billing",
                            "executor", "edge"}) {
    ASSERT_TRUE(pids.count(child)) << child;
    EXPECT_TRUE(Alive(pids[child])) << child;
    std::string line = std::string(child) + " ";
    size_t row = status.out.find("  " + line);
    ASSERT_NE(row, std::string::npos) << child << "\n" << status.out;
    std::string text = status.out.substr(row, status.out.find('\n', row) - row);
    EXPECT_NE(text.find("pid " + std::to_string(pids[child])), std::string::npos) << text;
    EXPECT_NE(text.find("running"), std::string::npos) << text;
    if (std::string(child) != "nats" && std::string(child) != "redis" &&
        std::string(child) != "postgres") {
      EXPECT_NE(text.find("admin http://127.0.0.1:"), std::string::npos) << text;
    }
  }
  // nats-server runs Go code on a quarter of the cores (--nats-cpus 0), at least one.
  std::string nats_env = ReadFile("/proc/" + std::to_string(pids["nats"]) + "/environ");
  const long cores = ::sysconf(_SC_NPROCESSORS_ONLN);
  EXPECT_NE(
      nats_env.find(std::string("GOMAXPROCS=") + std::to_string(std::max(1L, cores / 4)) + '\0'),
      std::string::npos);
  // And collects its garbage less often than Go's default (--nats-gogc 400).
  EXPECT_NE(nats_env.find(std::string("GOGC=400") + '\0'), std::string::npos);
  // The same, for scripts.
  CommandRun json = Toolgate("status --json --data-dir " + data_.string());
  EXPECT_EQ(json.status, 0) << json.out;
  auto doc = ParseJson(json.out);
  ASSERT_TRUE(doc.ok()) << json.out;
  std::string_view phase, json_url;
  EXPECT_EQ(doc->root["state"].get_string().get(phase), simdjson::SUCCESS);
  EXPECT_EQ(phase, "running");
  EXPECT_EQ(doc->root["url"].get_string().get(json_url), simdjson::SUCCESS);
  EXPECT_EQ(json_url, url);
  int64_t edge_pid = 0;
  EXPECT_EQ(doc->root["children"]["edge"]["pid"].get_int64().get(edge_pid), simdjson::SUCCESS);
  EXPECT_EQ(edge_pid, pids["edge"]);
  bool edge_running = false;
  EXPECT_EQ(doc->root["children"]["edge"]["running"].get_bool().get(edge_running),
            simdjson::SUCCESS);
  EXPECT_TRUE(edge_running);
  std::string_view edge_admin;
  EXPECT_EQ(doc->root["children"]["edge"]["admin"].get_string().get(edge_admin), simdjson::SUCCESS);
  EXPECT_TRUE(http::HttpClient(std::string(edge_admin)).Get("/healthz").ok()) << edge_admin;

  CommandRun down = Toolgate("down --data-dir " + data_.string());
  EXPECT_EQ(down.status, 0) << down.out;
  EXPECT_NE(down.out.find("Toolgate stopped"), std::string::npos) << down.out;
  // `down` returns once everything is gone.
  for (const auto& [name, pid] : pids) EXPECT_FALSE(Alive(pid)) << name;
  EXPECT_FALSE(http::HttpClient(url).Get("/healthz").ok());

  CommandRun after = Toolgate("status --data-dir " + data_.string());
  EXPECT_EQ(after.status, 1) << after.out;
  EXPECT_NE(after.out.find("not running"), std::string::npos) << after.out;
  CommandRun after_json = Toolgate("status --json --data-dir " + data_.string());
  EXPECT_EQ(after_json.status, 1) << after_json.out;
  EXPECT_NE(after_json.out.find(R"("state":"stopped")"), std::string::npos) << after_json.out;
  // And the data directory starts again.
  CommandRun again = Toolgate("up --detach --data-dir " + data_.string() + " --http-port 0");
  ASSERT_EQ(again.status, 0) << again.out;
  EXPECT_EQ(Toolgate("down --data-dir " + data_.string()).status, 0);
}

// The NUL-separated command line of a process.
std::vector<std::string> CommandLine(pid_t pid) {
  std::string raw = ReadFile("/proc/" + std::to_string(pid) + "/cmdline");
  std::vector<std::string> out;
  for (size_t start = 0; start < raw.size();) {
    size_t end = raw.find('\0', start);
    if (end == std::string::npos) end = raw.size();
    out.push_back(raw.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

// Whether words holds flag immediately followed by value.
bool HasFlag(const std::vector<std::string>& words, const std::string& flag,
             const std::string& value) {
  for (size_t i = 0; i + 1 < words.size(); ++i) {
    if (words[i] == flag && words[i + 1] == value) return true;
  }
  return false;
}

TEST_F(UpDown, MalformedOrUnknownFlagsStopUpBeforeAnythingStarts) {
  CommandRun up = Toolgate("up --data-dir " + data_.string() + " --no-such-flag");
  EXPECT_EQ(up.status, 2) << up.out;
  EXPECT_NE(up.out.find("unknown flag --no-such-flag"), std::string::npos) << up.out;
  up =
      Toolgate("up --data-dir " + data_.string() + " --http-port 0 --egress-allow-cidr 10.0.0.1/8");
  EXPECT_EQ(up.status, 1) << up.out;
  EXPECT_NE(up.out.find("--egress-allow-cidr 10.0.0.1/8: "), std::string::npos) << up.out;
  up = Toolgate("up --data-dir " + data_.string() + " --http-port 0",
                "TOOLGATE_OTLP_ENDPOINT=ftp://collector");
  EXPECT_EQ(up.status, 1) << up.out;
  EXPECT_NE(up.out.find("--otlp-endpoint: "), std::string::npos) << up.out;
  up = Toolgate("up --data-dir " + data_.string() + " --http-port 0 --demo --no-egress");
  EXPECT_EQ(up.status, 1) << up.out;
  EXPECT_NE(up.out.find("--demo needs egress"), std::string::npos) << up.out;
  EXPECT_TRUE(StatePids(data_).empty()) << ReadFile(data_ / "run" / "state.json");
}

// `toolgate up`'s egress and tracing flags (and their variables) reach the services, and an
// executor told --no-egress refuses a handler's request although its version allows the host.
TEST_F(UpDown, EgressAndOtlpFlagsReachTheServices) {
  // Play money (--dev-funding): the member funds the call with a top-up.
  CommandRun up = Toolgate("up --detach --data-dir " + data_.string() +
                               " --http-port 0 --dev-funding --no-egress --egress-deny-cidr "
                               "10.9.0.0/16 --otlp-endpoint http://127.0.0.1:9",
                           "TOOLGATE_EGRESS_ALLOW_CIDR=10.8.0.0/16");
  ASSERT_EQ(up.status, 0) << up.out;
  const std::string announce = "Toolgate is up at ";
  size_t at = up.out.find(announce);
  ASSERT_NE(at, std::string::npos) << up.out;
  std::string url = up.out.substr(at + announce.size(),
                                  up.out.find(' ', at + announce.size()) - at - announce.size());
  std::map<std::string, pid_t> pids = StatePids(data_);
  ASSERT_TRUE(pids.count("executor")) << ReadFile(data_ / "run" / "state.json");
  std::vector<std::string> executor = CommandLine(pids["executor"]);
  EXPECT_NE(std::find(executor.begin(), executor.end(), "--no-egress"), executor.end());
  EXPECT_TRUE(HasFlag(executor, "--egress-allow-cidr", "10.8.0.0/16"));
  EXPECT_TRUE(HasFlag(executor, "--egress-deny-cidr", "10.9.0.0/16"));
  for (const char* service : {"auth", "registry", "secrets", "billing", "executor", "edge"}) {
    ASSERT_TRUE(pids.count(service)) << service;
    EXPECT_TRUE(HasFlag(CommandLine(pids[service]), "--otlp-endpoint", "http://127.0.0.1:9"))
        << service;
  }

  // A tool whose version may reach example.com: the executor refuses it all the same.
  fs::path tool = data_ / "tool";
  fs::create_directories(tool);
  std::ofstream(tool / "toolgate.json") << R"({
  "name": "egress probe", "description": "d", "category": "Testing",
  "visibility": "private", "price_micro_usd": 0, "egress": ["example.com"],
  "version": "1.0.0", "runtime": "lua", "compute_type": "CPU", "handler": "handler.lua"
})";
  std::ofstream(tool / "handler.lua")
      << "function service_handler(event, context)\n"
         "  local ok, err = pcall(http.request, {url = 'http://example.com/'})\n"
         "  return {ok = ok, error = tostring(err)}\n"
         "end\n";
  const std::string env = "XDG_CONFIG_HOME=" + (data_ / "config").string() + " TOOLGATE_URL=" + url;
  CommandRun r = Toolgate("signup --email egress" + HexEncode(RandomBytes(4)) +
                              "@example.com --password 'long enough secret' --organization E",
                          env);
  ASSERT_EQ(r.status, 0) << r.out;
  r = Toolgate("publish " + tool.string() + " --json", env);
  ASSERT_EQ(r.status, 0) << r.out;
  const std::string fn = StringField(r.out.substr(r.out.find('{')), "function_id");
  ASSERT_EQ(Toolgate("topup --amount 100000", env).status, 0);
  r = Toolgate("invoke " + fn, env);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("egress is turned off on this platform"), std::string::npos) << r.out;
  EXPECT_EQ(Toolgate("down --data-dir " + data_.string()).status, 0);
}

TEST_F(UpDown, APortInUseIsNamedAndUpExitsAtOnce) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::listen(fd, 1), 0);
  ASSERT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  std::string port = std::to_string(ntohs(addr.sin_port));

  for (const std::string mode : {"", "--detach "}) {
    SCOPED_TRACE(mode);
    CommandRun up =
        Toolgate("up " + mode + "--data-dir " + data_.string() + " --http-port " + port);
    EXPECT_EQ(up.status, 1) << up.out;
    EXPECT_NE(up.out.find("port " + port + " is in use"), std::string::npos) << up.out;
    EXPECT_NE(up.out.find("--http-port"), std::string::npos) << up.out;
    // Refused before anything started.
    EXPECT_TRUE(StatePids(data_).empty()) << ReadFile(data_ / "run" / "state.json");
    EXPECT_EQ(Toolgate("status --data-dir " + data_.string()).status, 1);
  }
  ::close(fd);
}

TEST_F(UpDown, AServiceThatDiesWhileStartingIsReportedWithItsLog) {
  // Every service as built, except a registry that cannot start.
  fs::path bin = data_ / "bin";
  fs::create_directories(bin);
  for (const char* service : {"edge", "auth", "secrets", "billing", "executor"}) {
    std::string name = std::string("toolgate-") + service;
    fs::create_symlink(fs::path(TOOLGATE_BIN_DIR) / name, bin / name);
  }
  std::ofstream(bin / "toolgate-registry")
      << "#!/bin/sh\necho 'registry: cannot open the catalogue' >&2\nexit 3\n";
  fs::permissions(bin / "toolgate-registry", fs::perms::owner_all);

  CommandRun up = Toolgate("up --data-dir " + (data_ / "data").string() +
                           " --http-port 0 --bin-dir " + bin.string());
  EXPECT_EQ(up.status, 1) << up.out;
  EXPECT_NE(up.out.find("registry exited with status 3 during start-up"), std::string::npos)
      << up.out;
  EXPECT_NE(up.out.find("registry: cannot open the catalogue"), std::string::npos) << up.out;
  // Not restarted in a loop: started once, and everything else stopped before the exit.
  std::string log = ReadFile(data_ / "data" / "logs" / "registry.log");
  size_t first = log.find("cannot open the catalogue");
  ASSERT_NE(first, std::string::npos) << log;
  EXPECT_EQ(log.find("cannot open the catalogue", first + 1), std::string::npos) << log;
  std::map<std::string, pid_t> pids = StatePids(data_ / "data");
  EXPECT_TRUE(pids.count("postgres")) << ReadFile(data_ / "data" / "run" / "state.json");
  for (const auto& [name, pid] : pids) {
    if (name != "launcher") {
      EXPECT_FALSE(Alive(pid)) << name;
    }
  }
}

}  // namespace
}  // namespace toolgate::testing
