// The `toolgate` CLI against a real system, as a script would use it.
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "system.h"
#include "toolgate/base/crypto.h"

namespace fs = std::filesystem;

namespace toolgate::testing {
namespace {

const auto* const kEnv = ::testing::AddGlobalTestEnvironment(new SharedSystem());

struct CliRun {
  int status;
  std::string out;
};

// Runs `toolgate ARGS` with a private config directory and no server named: the URL comes from
// the profile. Output is stdout and stderr together.
CliRun ToolgateWithProfile(const std::string& config_dir, const std::string& args,
                           const std::string& env = "") {
  std::string cmd =
      "env -u TOOLGATE_URL -u TOOLGATE_API_KEY -u TOOLGATE_PROFILE XDG_CONFIG_HOME=" + config_dir +
      " " + env + " " + TOOLGATE_BIN_DIR + "/toolgate " + args + " 2>&1";
  CliRun r{-1, {}};
  FILE* pipe = ::popen(cmd.c_str(), "r");
  char buf[4096];
  while (pipe && fgets(buf, sizeof buf, pipe)) r.out += buf;
  int status = pipe ? ::pclose(pipe) : -1;
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// Runs `toolgate ARGS` with the system's URL and a private config directory.
CliRun Toolgate(const std::string& config_dir, const std::string& args,
                const std::string& env = "") {
  return ToolgateWithProfile(config_dir, args, "TOOLGATE_URL=" + g_system->url() + " " + env);
}

TEST(CliTest, VersionAndUnknownFlags) {
  std::string config = (fs::path(g_system->data_dir()) / "cli-version").string();
  CliRun r = Toolgate(config, "version");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(r.out, "toolgate 0.1.0\n");
  r = Toolgate(config, "invoke 00000000-0000-4000-8000-000000000000 --evnt '{}'");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.out.find("unknown flag --evnt"), std::string::npos) << r.out;
  // Last, or before any command, a misspelt flag is named as one, not as missing its value.
  for (const char* words : {"--no-such-flag", "balance --no-such-flag"}) {
    r = Toolgate(config, words);
    EXPECT_EQ(r.status, 2) << words << ": " << r.out;
    EXPECT_NE(r.out.find("unknown flag --no-such-flag"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("needs a value"), std::string::npos) << r.out;
  }
}

TEST(CliTest, SignupKeysPublishTopUpInvoke) {
  fs::path dir = fs::path(g_system->data_dir()) / ("cli-" + HexEncode(RandomBytes(4)));
  fs::create_directories(dir / "tool");
  std::string config = (dir / "config").string();
  std::string email = "cli" + HexEncode(RandomBytes(4)) + "@example.com";

  CliRun r = Toolgate(config, "signup --email " + email +
                                  " --password 'long enough secret' --organization 'CLI Org'");
  ASSERT_EQ(r.status, 0) << r.out;
  // The session is kept 0600 for later commands.
  fs::path session = dir / "config" / "toolgate" / "config.json";
  ASSERT_TRUE(fs::exists(session));
  EXPECT_EQ(fs::status(session).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write);

  r = Toolgate(config, "keys create --name script --scopes invoke,manage --json");
  ASSERT_EQ(r.status, 0) << r.out;
  size_t at = r.out.find("tg_");
  ASSERT_NE(at, std::string::npos) << r.out;
  std::string key = r.out.substr(at, r.out.find_first_of("\"\n ", at) - at);

  std::ofstream(dir / "tool" / "toolgate.json") << R"({
  "name": "cli tool", "description": "published by the CLI", "category": "Testing",
  "visibility": "private", "price_micro_usd": 0,
  "version": "1.0.0", "runtime": "lua", "compute_type": "CPU",
  "handler": "handler.lua"
})";
  std::ofstream(dir / "tool" / "handler.lua")
      << "function service_handler(event, context) return {got = event.n * 2} end\n";
  r = Toolgate(config, "publish " + (dir / "tool").string());
  ASSERT_EQ(r.status, 0) << r.out;
  // Where to call it, and a line to try it with.
  EXPECT_NE(r.out.find("invoke URL:    " + g_system->url() + "/api/v1/functions/"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("curl -X POST '" + g_system->url() + "/api/v1/functions/"),
            std::string::npos)
      << r.out;
  std::ifstream manifest(dir / "tool" / "toolgate.json");
  std::string text((std::istreambuf_iterator<char>(manifest)), std::istreambuf_iterator<char>());
  std::string function_id = StringField(text, "function_id");
  ASSERT_TRUE(IsUuid(function_id)) << text;  // written back for the next publish

  // Not funded yet: the platform's 402 is an error (exit 1).
  r = Toolgate(config, "invoke " + function_id + " --event '{\"n\": 21}'",
               "TOOLGATE_API_KEY=" + key);
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find("nsufficient"), std::string::npos) << r.out;

  r = Toolgate(config, "topup --amount 100000 --idempotency-key cli-1");
  ASSERT_EQ(r.status, 0) << r.out;
  r = Toolgate(config, "invoke " + function_id + " --event '{\"n\": 21}'",
               "TOOLGATE_API_KEY=" + key);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find(R"("got":42)"), std::string::npos) << r.out;
  r = Toolgate(config, "invoke " + function_id + " --event '{\"n\": 21}' --json",
               "TOOLGATE_API_KEY=" + key);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find(R"(\"got\":42)"), std::string::npos) << r.out;

  r = Toolgate(config, "balance");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("balance_micro_usd"), std::string::npos) << r.out;
  r = Toolgate(config, "executions list --function-id " + function_id);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find(function_id), std::string::npos) << r.out;

  // A second version through the same manifest publishes to the same function.
  std::string updated = text;
  updated.replace(updated.find("1.0.0"), 5, "1.1.0");
  std::ofstream(dir / "tool" / "toolgate.json") << updated;
  r = Toolgate(config, "publish " + (dir / "tool").string());
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find(function_id), std::string::npos) << r.out;

  r = Toolgate(config, "logout");
  EXPECT_EQ(r.status, 0) << r.out;
  r = Toolgate(config, "balance");
  EXPECT_EQ(r.status, 1) << r.out;  // signed out
}

// A fresh organization signed in through the CLI, with a Lua tool published and funds.
struct Publisher {
  fs::path dir;
  std::string config;
  std::string function_id;
};

Publisher SignUpAndPublish(const std::string& tag) {
  Publisher p;
  p.dir = fs::path(g_system->data_dir()) / ("cli-" + tag + "-" + HexEncode(RandomBytes(4)));
  fs::create_directories(p.dir / "tool");
  p.config = (p.dir / "config").string();
  std::string email = tag + HexEncode(RandomBytes(4)) + "@example.com";
  CliRun r =
      Toolgate(p.config, "signup --email " + email +
                             " --password 'long enough secret' --organization 'Org " + tag + "'");
  EXPECT_EQ(r.status, 0) << r.out;
  std::ofstream(p.dir / "tool" / "toolgate.json") << R"({
  "name": "logged tool", "description": "prints what it got", "category": "Testing",
  "visibility": "private", "price_micro_usd": 0,
  "version": "1.0.0", "runtime": "lua", "compute_type": "CPU",
  "handler": "handler.lua",
  "examples": [{"title": "twenty-one", "event": {"n": 21, "tag": "example"}}]
})";
  std::ofstream(p.dir / "tool" / "handler.lua") << "function service_handler(event, context)\n"
                                                   "  print('handled ' .. tostring(event.tag))\n"
                                                   "  return {got = event.n * 2}\n"
                                                   "end\n";
  r = Toolgate(p.config, "publish " + (p.dir / "tool").string() + " --json");
  EXPECT_EQ(r.status, 0) << r.out;
  p.function_id = StringField(r.out.substr(r.out.find('{')), "function_id");
  EXPECT_TRUE(IsUuid(p.function_id)) << r.out;
  r = Toolgate(p.config, "topup --amount 100000");
  EXPECT_EQ(r.status, 0) << r.out;
  return p;
}

// Spending limits from the CLI: set, show, clear, a key's own, a refused bad amount, and a call
// the key's limit stops; usage per key.
TEST(CliTest, BudgetSetShowClearAndUsage) {
  Publisher p = SignUpAndPublish("budget");
  CliRun r = Toolgate(p.config, "keys create --name limited --scopes invoke --json");
  ASSERT_EQ(r.status, 0) << r.out;
  const std::string created = r.out.substr(r.out.find('{'));
  const std::string key = StringField(created, "key");
  const std::string key_id = StringField(created, "id");
  ASSERT_TRUE(IsUuid(key_id)) << r.out;

  r = Toolgate(p.config, "budget show");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(r.out,
            "daily    no limit, $0.00 spent today\n"
            "monthly  no limit, $0.00 spent this month\n");

  r = Toolgate(p.config, "budget set --daily-usd 2.50");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("daily    $2.50 limit, $0.00 spent today (0 %)"), std::string::npos)
      << r.out;
  // A limit not named keeps its value.
  r = Toolgate(p.config, "budget set --monthly-usd 10");
  ASSERT_EQ(r.status, 0) << r.out;
  r = Toolgate(p.config, "budget show --json");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("\"daily_micro_usd\": 2500000"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"monthly_micro_usd\": 10000000"), std::string::npos) << r.out;

  // A bad amount is refused before anything is sent, and nothing changes.
  for (const char* bad : {"--daily-usd 0", "--daily-usd -1", "--monthly-usd 1.0000001",
                          "--daily-usd 5 --monthly-usd lots"}) {
    r = Toolgate(p.config, std::string("budget set ") + bad);
    EXPECT_EQ(r.status, 2) << bad << ": " << r.out;
    EXPECT_NE(r.out.find("error: --"), std::string::npos) << r.out;
  }
  r = Toolgate(p.config, "budget show --json");
  EXPECT_NE(r.out.find("\"daily_micro_usd\": 2500000"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"monthly_micro_usd\": 10000000"), std::string::npos) << r.out;

  r = Toolgate(p.config, "budget set --daily-usd none");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("daily    no limit"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("monthly  $10.00 limit"), std::string::npos) << r.out;
  r = Toolgate(p.config, "budget set --monthly-usd none");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("monthly  no limit"), std::string::npos) << r.out;

  // A charged call with the key, then the key's own limit below what a call holds.
  r = Toolgate(p.config, "invoke " + p.function_id + " --event '{\"n\": 1}'",
               "TOOLGATE_API_KEY=" + key);
  ASSERT_EQ(r.status, 0) << r.out;
  r = Toolgate(p.config, "usage --group-by key");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(r.out.rfind("KEY", 0), 0u) << r.out;
  EXPECT_NE(r.out.find(key_id + "  1"), std::string::npos) << r.out;
  r = Toolgate(p.config, "usage --group-by function --json");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("\"function_id\": \"" + p.function_id + "\""), std::string::npos) << r.out;

  r = Toolgate(p.config, "budget set --key " + key_id + " --daily-usd 0.000001");
  ASSERT_EQ(r.status, 0) << r.out;
  r = Toolgate(p.config, "budget show --key " + key_id + " --json");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("\"daily_micro_usd\": 1,"), std::string::npos) << r.out;
  r = Toolgate(p.config, "budget show");  // the organization's are unchanged
  EXPECT_NE(r.out.find("daily    no limit"), std::string::npos) << r.out;
  r = Toolgate(p.config, "invoke " + p.function_id + " --event '{\"n\": 1}'",
               "TOOLGATE_API_KEY=" + key);
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find("daily spending limit of $0.000001"), std::string::npos) << r.out;
  r = Toolgate(p.config, "budget set --key " + key_id + " --daily-usd none");
  ASSERT_EQ(r.status, 0) << r.out;
}

TEST(CliTest, LoginRemembersTheServerPerProfile) {
  fs::path dir = fs::path(g_system->data_dir()) / ("cli-profiles-" + HexEncode(RandomBytes(4)));
  std::string config = (dir / "config").string();
  std::string email = "profiles" + HexEncode(RandomBytes(4)) + "@example.com";
  CliRun r =
      ToolgateWithProfile(config, "signup --profile work --url " + g_system->url() + " --email " +
                                      email + " --password 'long enough secret' --organization P");
  ASSERT_EQ(r.status, 0) << r.out;
  fs::path file = dir / "config" / "toolgate" / "config.json";
  EXPECT_EQ(fs::status(file).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write);
  // No --url and no TOOLGATE_URL: the profile names the server.
  r = ToolgateWithProfile(config, "balance --profile work");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("balance_micro_usd"), std::string::npos) << r.out;
  r = ToolgateWithProfile(config, "balance --json", "TOOLGATE_PROFILE=work");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("\"balance_micro_usd\": "), std::string::npos) << r.out;
  r = ToolgateWithProfile(config, "balance --profile home");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("no profile \"home\""), std::string::npos) << r.out;

  r = ToolgateWithProfile(config, "logout --profile work");
  EXPECT_EQ(r.status, 0) << r.out;
  // Still the same server, now signed out.
  r = ToolgateWithProfile(config, "balance --profile work");
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find("toolgate login"), std::string::npos) << r.out;
  r = ToolgateWithProfile(
      config, "login --profile work --email " + email + " --password 'long enough secret'");
  EXPECT_EQ(r.status, 0) << r.out;
  r = ToolgateWithProfile(config, "balance --profile work");
  EXPECT_EQ(r.status, 0) << r.out;
}

TEST(CliTest, ASessionRunsEveryCommandInvokeIncluded) {
  Publisher p = SignUpAndPublish("session");
  const std::string& fn = p.function_id;
  // No API key anywhere: the session invokes, like the web app's Try it.
  CliRun r = Toolgate(p.config, "invoke " + fn + " --event '{\"n\": 4, \"tag\": \"first\"}'");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find(R"("got":8)"), std::string::npos) << r.out;

  // A key without the manage scope does not hide the session from the management commands...
  r = Toolgate(p.config, "keys create --name narrow --scopes invoke --json");
  ASSERT_EQ(r.status, 0) << r.out;
  std::string narrow = StringField(r.out.substr(r.out.find('{')), "key");
  ASSERT_FALSE(narrow.empty()) << r.out;
  r = Toolgate(p.config, "keys list", "TOOLGATE_API_KEY=" + narrow);
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("narrow"), std::string::npos) << r.out;
  // ...which is what answered: alone, the key may not list keys.
  r = Toolgate((p.dir / "other-config").string(), "keys list", "TOOLGATE_API_KEY=" + narrow);
  EXPECT_EQ(r.status, 1) << r.out;

  r = Toolgate(p.config, "functions list");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(r.out.rfind("FUNCTION", 0), 0u) << r.out;  // a table, headings first
  EXPECT_NE(r.out.find(fn + "  logged tool  1.0.0"), std::string::npos) << r.out;
  r = Toolgate(p.config, "functions list --json");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("\"owned\": ["), std::string::npos) << r.out;

  r = Toolgate(p.config, "functions show " + fn);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("latest_version"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("versions:"), std::string::npos) << r.out;

  // --bump: the next version after the highest published, written back to the manifest.
  r = Toolgate(p.config, "publish " + (p.dir / "tool").string() + " --bump minor");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("published logged tool 1.1.0"), std::string::npos) << r.out;
  std::ifstream manifest(p.dir / "tool" / "toolgate.json");
  std::string text((std::istreambuf_iterator<char>(manifest)), std::istreambuf_iterator<char>());
  EXPECT_EQ(StringField(text, "version"), "1.1.0") << text;
  r = Toolgate(p.config, "publish " + (p.dir / "tool").string() + " --bump patch --json");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(StringField(r.out.substr(r.out.find('{')), "version"), "1.1.1") << r.out;
  r = Toolgate(p.config, "versions list " + fn);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(r.out.rfind("VERSION", 0), 0u) << r.out;
  for (const char* v : {"1.0.0 ", "1.1.0 ", "1.1.1 "}) {
    EXPECT_NE(r.out.find(std::string("\n") + v), std::string::npos) << v << r.out;
  }

  // The publisher's say over single versions.
  r = Toolgate(p.config, "versions deprecate " + fn + " 1.0.0");
  ASSERT_EQ(r.status, 0) << r.out;
  r = Toolgate(p.config, "versions list " + fn);
  EXPECT_NE(r.out.find("\n1.0.0    true "), std::string::npos) << r.out;
  r = Toolgate(p.config, "versions deprecate " + fn + " 1.0.0 --undo --json");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("\"deprecated\": false"), std::string::npos) << r.out;
  r = Toolgate(p.config, "versions unpublish " + fn + " 1.1.1");
  ASSERT_EQ(r.status, 0) << r.out;
  r = Toolgate(p.config, "versions unpublish " + fn + " 1.1.1");
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find("Version not found"), std::string::npos) << r.out;
  r = Toolgate(p.config, "versions list " + fn);
  EXPECT_EQ(r.out.find("1.1.1"), std::string::npos) << r.out;

  r = Toolgate(p.config, "executions list --function-id " + fn + " --json");
  ASSERT_EQ(r.status, 0) << r.out;
  // The newest execution, the first of the page.
  const std::string member = "\"execution_id\": \"";
  size_t at = r.out.find(member);
  ASSERT_NE(at, std::string::npos) << r.out;
  std::string execution = r.out.substr(at + member.size(), 36);
  ASSERT_TRUE(IsUuid(execution)) << r.out;
  r = Toolgate(p.config, "executions list --function-id " + fn);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(r.out.rfind("EXECUTION", 0), 0u) << r.out;
  EXPECT_NE(r.out.find(execution), std::string::npos) << r.out;
  r = Toolgate(p.config, "executions show " + execution);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("logs:\n  handled first"), std::string::npos) << r.out;
  r = Toolgate(p.config, "logs " + fn);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find(execution + "  v1.0.0  200"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\n  handled first"), std::string::npos) << r.out;

  r = Toolgate(p.config, "functions delete " + fn);
  ASSERT_EQ(r.status, 0) << r.out;
  r = Toolgate(p.config, "functions show " + fn);
  EXPECT_EQ(r.status, 1) << r.out;
}

// Reads fd into *out until it holds needle or 60 s pass (a hung follower fails the test
// instead of hanging it). Returns whether needle came.
bool ReadUntil(int fd, const std::string& needle, std::string* out) {
  for (int waited_ms = 0; out->find(needle) == std::string::npos;) {
    pollfd p{fd, POLLIN, 0};
    int ready = ::poll(&p, 1, 1000);
    if (ready == 0) {
      waited_ms += 1000;
      if (waited_ms >= 60'000) return false;
      continue;
    }
    char buf[4096];
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) return false;
    out->append(buf, static_cast<size_t>(n));
  }
  return true;
}

TEST(CliTest, LogsFollowPrintsEachNewExecutionUntilCtrlC) {
  Publisher p = SignUpAndPublish("follow");
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::dup2(fds[1], STDOUT_FILENO);
    ::dup2(fds[1], STDERR_FILENO);
    ::close(fds[0]);
    ::setenv("TOOLGATE_URL", g_system->url().c_str(), 1);
    ::setenv("XDG_CONFIG_HOME", p.config.c_str(), 1);
    ::unsetenv("TOOLGATE_API_KEY");
    std::string bin = std::string(TOOLGATE_BIN_DIR) + "/toolgate";
    ::execl(bin.c_str(), bin.c_str(), "logs", p.function_id.c_str(), "--follow", "--interval-ms",
            "200", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(fds[1]);
  std::string out;
  // Printed once the follower knows where the list stands: calls from now on are new.
  ASSERT_TRUE(ReadUntil(fds[0], "(Ctrl-C to stop)\n", &out)) << out;
  CliRun r =
      Toolgate(p.config, "invoke " + p.function_id + " --event '{\"n\": 1, \"tag\": \"live-1\"}'");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_TRUE(ReadUntil(fds[0], "  handled live-1\n", &out)) << out;
  r = Toolgate(p.config, "invoke " + p.function_id + " --event '{\"n\": 2, \"tag\": \"live-2\"}'");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_TRUE(ReadUntil(fds[0], "  handled live-2\n", &out)) << out;
  EXPECT_EQ(out.find("handled live-1"), out.rfind("handled live-1")) << "printed twice: " << out;

  ::kill(pid, SIGINT);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 0);
  ::close(fds[0]);
}

TEST(CliTest, DevRunsAToolLocallyWithItsExamples) {
  fs::path dir = fs::path(g_system->data_dir()) / ("cli-dev-" + HexEncode(RandomBytes(4)));
  fs::create_directories(dir);
  std::ofstream(dir / "toolgate.json") << R"({
  "name": "dev tool", "description": "d", "category": "Testing",
  "visibility": "private", "price_micro_usd": 0,
  "version": "1.0.0", "runtime": "lua", "compute_type": "CPU", "handler": "handler.lua",
  "examples": [{"title": "twenty-one", "event": {"n": 21}}]
})";
  std::ofstream(dir / "handler.lua")
      << "function service_handler(event, context) print('dev run') return {got = event.n * 2} "
         "end\n";
  std::ofstream(dir / "event.json") << R"({"n": 50})";
  // Nothing about the server: no URL, no session.
  std::string config = (dir / "config").string();
  CliRun r = ToolgateWithProfile(config, "dev " + dir.string());
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("== twenty-one: {\"n\":21}"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(R"({"got":42})"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("logs:\n  dev run"), std::string::npos) << r.out;
  r = ToolgateWithProfile(
      config, "dev " + dir.string() + " --event " + (dir / "event.json").string() + " --json");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find(R"(\"got\":100)"), std::string::npos) << r.out;
  // The executor picks the runtime by the handler's extension: a manifest that disagrees is
  // refused instead of running something that publishing would not.
  std::string text;
  {
    std::ifstream in(dir / "toolgate.json");
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  std::string python = text;
  python.replace(python.find("\"lua\""), 5, "\"python\"");
  std::ofstream(dir / "toolgate.json") << python;
  r = ToolgateWithProfile(config, "dev " + dir.string());
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("must be a .py file"), std::string::npos) << r.out;
  std::ofstream(dir / "toolgate.json") << text;
  // A handler that fails is a failed run.
  std::ofstream(dir / "handler.lua")
      << "function service_handler(event, context) error('boom') end\n";
  r = ToolgateWithProfile(config, "dev " + dir.string());
  EXPECT_EQ(r.status, 1) << r.out;
}

// A bundle tool runs as it would once published: its directory packed, checked and unpacked by
// the executor, its modules found beside the entry file.
TEST(CliTest, DevRunsABundleToolWithItsModules) {
  fs::path dir = fs::path(g_system->data_dir()) / ("cli-dev-bundle-" + HexEncode(RandomBytes(4)));
  fs::create_directories(dir / "src" / "lib");
  std::ofstream(dir / "toolgate.json") << R"({
  "name": "dev bundle", "description": "d", "category": "Testing",
  "visibility": "private", "price_micro_usd": 0, "bundle": true,
  "version": "1.0.0", "runtime": "lua", "compute_type": "CPU", "handler": "src/main.lua",
  "examples": [{"title": "greet", "event": {"name": "dev"}}]
})";
  std::ofstream(dir / "src" / "lib" / "greet.lua")
      << "local M = {}\nfunction M.hello(name) return 'hello ' .. name end\nreturn M\n";
  std::ofstream(dir / "src" / "main.lua")
      << "local greet = require('lib.greet')\n"
         "function service_handler(event, context) return {message = greet.hello(event.name)} "
         "end\n";
  std::string config = (dir / "config").string();
  CliRun r = ToolgateWithProfile(config, "dev " + dir.string() + " --json");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find(R"(\"message\":\"hello dev\")"), std::string::npos) << r.out;
}

// The workspace as a script manages it: another organization's public function added, its
// declared key given one of our secrets (by name) for /mcp, shown, cleared, and removed.
TEST(CliTest, WorkspaceAddListMapAndRemove) {
  Publisher owner = SignUpAndPublish("wsowner");
  fs::create_directories(owner.dir / "public");
  std::ofstream(owner.dir / "public" / "toolgate.json") << R"({
  "name": "keyed tool", "description": "uses a key", "category": "Testing",
  "visibility": "public", "price_micro_usd": 0,
  "version": "1.0.0", "runtime": "lua", "compute_type": "CPU", "handler": "handler.lua",
  "declared_keys": ["API_KEY"]
})";
  std::ofstream(owner.dir / "public" / "handler.lua")
      << "function service_handler(event, context) return {has = context.env.API_KEY ~= nil} end\n";
  CliRun r = Toolgate(owner.config, "publish " + (owner.dir / "public").string() + " --json");
  ASSERT_EQ(r.status, 0) << r.out;
  const std::string fn = StringField(r.out.substr(r.out.find('{')), "function_id");

  Publisher user = SignUpAndPublish("wsuser");
  r = Toolgate(user.config, "workspace add " + fn);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("added function " + fn + " to the workspace"), std::string::npos) << r.out;
  r = Toolgate(user.config, "workspace add " + fn);
  EXPECT_EQ(r.status, 1) << r.out;  // already there: the server's 409
  EXPECT_NE(r.out.find("already in your workspace"), std::string::npos) << r.out;

  r = Toolgate(user.config, "workspace list");
  ASSERT_EQ(r.status, 0) << r.out;
  const size_t owned = r.out.find("owned:\n"), added = r.out.find("added:\n");
  ASSERT_NE(owned, std::string::npos) << r.out;
  ASSERT_NE(added, std::string::npos) << r.out;
  EXPECT_NE(r.out.find(user.function_id), std::string::npos) << r.out;
  EXPECT_LT(r.out.find(user.function_id), added) << r.out;
  EXPECT_GT(r.out.find(fn), added) << r.out;
  EXPECT_NE(r.out.find("keyed tool"), std::string::npos) << r.out;
  r = Toolgate(user.config, "workspace list --json");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("\"added\": ["), std::string::npos) << r.out;

  r = Toolgate(user.config, "secrets create --name weather-key --value s3cret-value --json");
  ASSERT_EQ(r.status, 0) << r.out;
  const std::string secret_id = StringField(r.out.substr(r.out.find('{')), "id");
  // A key the version does not declare: the server's 422, named.
  r = Toolgate(user.config, "workspace env-keys set " + fn + " OTHER=weather-key");
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find("declares no key OTHER"), std::string::npos) << r.out;
  r = Toolgate(user.config, "workspace env-keys set " + fn + " API_KEY=no-such-secret");
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find("no secret named \"no-such-secret\""), std::string::npos) << r.out;
  r = Toolgate(user.config, "workspace env-keys show " + fn);
  EXPECT_EQ(r.status, 1) << r.out;  // nothing stored yet

  r = Toolgate(user.config, "workspace env-keys set " + fn + " API_KEY=weather-key");
  ASSERT_EQ(r.status, 0) << r.out;
  r = Toolgate(user.config, "workspace env-keys show " + fn);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("KEY"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("API_KEY  " + secret_id), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("s3cret-value"), std::string::npos) << r.out;
  r = Toolgate(user.config, "workspace env-keys show " + fn + " --json");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(StringField(r.out, "env_keys"), "API_KEY=" + secret_id) << r.out;
  // A secret's id does as well as its name.
  r = Toolgate(user.config, "workspace env-keys set " + fn + " API_KEY=" + secret_id);
  ASSERT_EQ(r.status, 0) << r.out;

  r = Toolgate(user.config, "workspace env-keys clear " + fn);
  ASSERT_EQ(r.status, 0) << r.out;
  r = Toolgate(user.config, "workspace env-keys show " + fn);
  EXPECT_EQ(r.status, 1) << r.out;
  r = Toolgate(user.config, "workspace remove " + fn);
  ASSERT_EQ(r.status, 0) << r.out;
  r = Toolgate(user.config, "workspace list --json");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(r.out.find(fn), std::string::npos) << r.out;
}

// `toolgate dev` gives the declared keys the values of .dev.vars and --env, and refuses a name
// the manifest does not declare.
TEST(CliTest, DevGivesTheDeclaredKeysTheirLocalValues) {
  fs::path dir = fs::path(g_system->data_dir()) / ("cli-dev-env-" + HexEncode(RandomBytes(4)));
  fs::create_directories(dir);
  std::ofstream(dir / "toolgate.json") << R"({
  "name": "dev env", "description": "d", "category": "Testing",
  "visibility": "private", "price_micro_usd": 0, "declared_keys": ["API_KEY", "TOKEN"],
  "version": "1.0.0", "runtime": "lua", "compute_type": "CPU", "handler": "handler.lua"
})";
  std::ofstream(dir / "handler.lua")
      << "function service_handler(event, context)\n"
         "  return {api = context.env.API_KEY, token = os.getenv('TOKEN')}\n"
         "end\n";
  std::ofstream(dir / ".dev.vars") << "# local only\nAPI_KEY=\"from file\"\nTOKEN=file-token\n";
  std::string config = (dir / "config").string();
  CliRun r = ToolgateWithProfile(config, "dev " + dir.string() + " --env TOKEN=word-token --json");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find(R"(\"api\":\"from file\")"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(R"(\"token\":\"word-token\")"), std::string::npos) << r.out;

  r = ToolgateWithProfile(config, "dev " + dir.string() + " --env NOT_DECLARED=s3cret");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("NOT_DECLARED is not a declared key"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("s3cret"), std::string::npos) << r.out;
  std::ofstream(dir / ".dev.vars") << "API_KEY=ok\nTOKEN=\"s3cret\n";
  r = ToolgateWithProfile(config, "dev " + dir.string());
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find(".dev.vars:2: unterminated \" quote (TOKEN)"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("s3cret"), std::string::npos) << r.out;
}

TEST(CliTest, CompletionScriptCompletesInBash) {
  std::string bin = std::string(TOOLGATE_BIN_DIR) + "/toolgate";
  std::string cmd = "bash -c 'source <(" + bin +
                    " completion bash); COMP_WORDS=(toolgate functions \"\"); COMP_CWORD=2; "
                    "_toolgate; echo \"${COMPREPLY[*]}\"'";
  std::string out;
  FILE* pipe = ::popen(cmd.c_str(), "r");
  char buf[4096];
  while (pipe && fgets(buf, sizeof buf, pipe)) out += buf;
  ASSERT_NE(pipe, nullptr);
  EXPECT_EQ(::pclose(pipe), 0);
  EXPECT_EQ(out, "list show delete\n");
}

}  // namespace
}  // namespace toolgate::testing

namespace toolgate::testing {
namespace {

// Asynchronous calls from the CLI: invoke --async answers at once with the execution, executions
// wait prints its result once it finished, a finished one cannot be cancelled, and an
// Idempotency-Key makes a repeat answer with the first execution.
TEST(CliTest, InvokeAsyncWaitCancelAndIdempotencyKey) {
  Publisher p = SignUpAndPublish("async");
  CliRun r = Toolgate(p.config, "invoke " + p.function_id + " --async --event '{\"n\": 4}' --json");
  ASSERT_EQ(r.status, 0) << r.out;
  const std::string accepted = r.out.substr(r.out.find('{'));
  const std::string id = StringField(accepted, "execution_id");
  ASSERT_TRUE(IsUuid(id)) << r.out;
  EXPECT_EQ(StringField(accepted, "status"), "queued");

  r = Toolgate(p.config, "executions wait " + id + " --timeout-s 60 --interval-ms 100 --json");
  ASSERT_EQ(r.status, 0) << r.out;
  const std::string done = r.out.substr(r.out.find('{'));
  EXPECT_EQ(StringField(done, "status"), "succeeded") << r.out;
  EXPECT_NE(done.find("got"), std::string::npos) << r.out;  // the handler's answer, {got = 8}

  r = Toolgate(p.config, "executions cancel " + id);
  EXPECT_EQ(r.status, 1) << r.out;  // 409: it has finished

  const std::string keyed =
      "invoke " + p.function_id + " --idempotency-key cli-k1 --event '{\"n\": 1}' --json";
  r = Toolgate(p.config, keyed);
  ASSERT_EQ(r.status, 0) << r.out;
  const std::string first = r.out.substr(r.out.find('{'));
  r = Toolgate(p.config, keyed);
  ASSERT_EQ(r.status, 0) << r.out;
  // The same execution, answered again: nothing ran.
  const std::string first_id = first.substr(first.find("\"execution_id\""), 52);
  EXPECT_NE(r.out.find(first_id), std::string::npos) << first << "\n" << r.out;
  r = Toolgate(p.config,
               "invoke " + p.function_id + " --idempotency-key cli-k1 --event '{\"n\": 2}'");
  EXPECT_NE(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("Idempotency-Key used for another request"), std::string::npos) << r.out;
}

// The webhook secret from the CLI: none at first, made and shown once, rotated with the previous
// one signing on; `show` never prints a secret.
TEST(CliTest, WebhookSecretRotateAndShow) {
  Publisher p = SignUpAndPublish("hooks");
  CliRun r = Toolgate(p.config, "webhooks show");
  EXPECT_NE(r.status, 0) << r.out;
  r = Toolgate(p.config, "webhooks rotate-secret");
  ASSERT_EQ(r.status, 0) << r.out;
  const size_t at = r.out.find("whsec_");
  ASSERT_NE(at, std::string::npos) << r.out;
  const std::string first = r.out.substr(at, 50);
  r = Toolgate(p.config, "webhooks rotate-secret");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(r.out.find(first), std::string::npos) << r.out;  // a new secret
  r = Toolgate(p.config, "webhooks show --json");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(r.out.find("whsec_"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("previous_valid_until"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("\"previous_valid_until\": null"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace toolgate::testing
