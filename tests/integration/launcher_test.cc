// The launcher never leaves orphans: killed with SIGKILL, every process it started (servers,
// services, PostgreSQL backends, executor workers) goes with it, and a second `toolgate up` on
// the same data directory comes up with the data of the first.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "system.h"
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

// A live process's parent pid; 0 when it is gone or a zombie (which holds nothing).
pid_t LiveParent(pid_t pid) {
  std::string stat = Slurp("/proc/" + std::to_string(pid) + "/stat");
  size_t paren = stat.rfind(')');
  if (paren == std::string::npos || paren + 4 >= stat.size() || stat[paren + 2] == 'Z') return 0;
  return static_cast<pid_t>(std::stoi(stat.substr(paren + 4)));
}

// Every live process below root, found through the parent links in /proc.
std::set<pid_t> Descendants(pid_t root) {
  std::map<pid_t, pid_t> parent;
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    pid_t pid = static_cast<pid_t>(std::stoi(name));
    if (pid_t ppid = LiveParent(pid); ppid > 0) parent[pid] = ppid;
  }
  std::set<pid_t> out = {root};
  for (bool grew = true; grew;) {
    grew = false;
    for (const auto& [pid, ppid] : parent) {
      if (out.count(ppid) && out.insert(pid).second) grew = true;
    }
  }
  out.erase(root);
  return out;
}

std::string Describe(const std::set<pid_t>& pids) {
  std::string out;
  for (pid_t pid : pids) {
    std::string comm = Slurp("/proc/" + std::to_string(pid) + "/comm");
    if (!comm.empty() && comm.back() == '\n') comm.pop_back();
    out += std::to_string(pid) + " (" + comm + ") ";
  }
  return out;
}

constexpr const char* kEcho = "function service_handler(event, context) return event end";

TEST(Launcher, KilledLauncherLeavesNoChildAndTheNextOneComesUp) {
  System system;
  Account owner(system, "orphans");
  std::string key = owner.CreateKey();
  owner.TopUp(1000000);
  std::string fn = owner.CreateFunction("echo");
  ASSERT_EQ(owner.PublishLua(fn, "1.0.0", kEcho).status, 201);
  ASSERT_EQ(Invoke(system, key, fn, "", R"({"event":{"n":1}})").status, 200);

  std::set<pid_t> children = Descendants(system.launcher_pid());
  for (const char* child : {"nats", "redis", "postgres", "auth", "registry", "secrets", "billing",
                            "executor", "edge"}) {
    ASSERT_TRUE(children.count(system.Pid(child))) << child << " is not the launcher's child";
  }

  system.KillLauncher(SIGKILL);
  std::set<pid_t> alive;
  auto all_exited = [&] {
    alive.clear();
    for (pid_t pid : children) {
      if (LiveParent(pid) > 0) alive.insert(pid);
    }
    return alive.empty();
  };
  EXPECT_TRUE(WaitUntil(all_exited, 30000, "the children's exit"))
      << "outlived the launcher: " << Describe(alive);

  system.Restart();  // aborts the binary when the second launcher does not come up
  auto r = Invoke(system, key, fn, "1.0.0", R"({"event":{"n":2}})");
  EXPECT_EQ(r.status, 200) << r.body;
}

pid_t PidFromFile(const fs::path& file) {
  std::string text = Slurp(file);
  return text.empty() ? -1 : static_cast<pid_t>(std::stoi(text));
}

// Servers that outlived whatever started them (a launcher of an older version, killed; an
// operator's manual start) still hold the data directory: the next launcher stops them first.
TEST(Launcher, StaleServersOnTheDataDirectoryAreStoppedByTheNextLauncher) {
  System system;
  Account owner(system, "stale");
  owner.TopUp(777);
  // The ports the first launcher used, free again once it stopped.
  auto port_of = [&](const std::string& field) {
    std::string url = system.State(field);
    size_t colon = url.rfind(':');
    return url.substr(colon + 1, url.find('/', colon) - colon - 1);
  };
  std::string pg_port = port_of("postgres_url");
  std::string redis_port = port_of("redis_url");
  system.KillLauncher(SIGTERM);
  fs::path data = system.data_dir();
  // PostgreSQL and Redis on this directory, detached, as no launcher of ours would leave them.
  auto pg = RunCommand(
      "setpriv --reuid=postgres --regid=postgres --clear-groups "
      "/usr/lib/postgresql/15/bin/pg_ctl -D " +
      (data / "pg").string() + " -l /dev/null -w -o \"-p " + pg_port +
      " -c listen_addresses=127.0.0.1 -c unix_socket_directories=\" start");
  ASSERT_EQ(pg.first, 0) << pg.second;
  auto redis = RunCommand("redis-server " + (data / "redis" / "redis.conf").string() +
                          " --daemonize yes --port " + redis_port + " --logfile /dev/null");
  ASSERT_EQ(redis.first, 0) << redis.second;
  pid_t stale_pg = 0, stale_redis = 0;
  EXPECT_TRUE(WaitUntil(
      [&] {
        stale_pg = PidFromFile(data / "pg" / "postmaster.pid");
        stale_redis = PidFromFile(data / "run" / "redis.pid");
        return stale_pg > 0 && stale_redis > 0;
      },
      30000, "the pid files of PostgreSQL and Redis"));
  ASSERT_GT(stale_pg, 0);
  ASSERT_GT(stale_redis, 0);

  system.Restart();  // aborts the binary when it does not come up
  EXPECT_EQ(LiveParent(stale_pg), 0) << "the stale PostgreSQL still runs";
  EXPECT_EQ(LiveParent(stale_redis), 0) << "the stale Redis still runs";
  EXPECT_NE(system.Pid("postgres"), stale_pg);
  Account after(system, "fresh");
  after.TopUp(5);
  EXPECT_EQ(after.Balance(), 5);
}

}  // namespace
}  // namespace toolgate::testing
