#include "stale.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace fs = std::filesystem;

namespace toolgate::cli {
namespace {

TEST(ParsePidFile, FirstLinePidSecondLineKept) {
  auto pg = ParsePidFile("4242\n/var/lib/toolgate/pg\n1700000000\n");
  ASSERT_TRUE(pg.has_value());
  EXPECT_EQ(pg->pid, 4242);
  EXPECT_EQ(pg->second_line, "/var/lib/toolgate/pg");
  auto redis = ParsePidFile("17");
  ASSERT_TRUE(redis.has_value());
  EXPECT_EQ(redis->pid, 17);
  EXPECT_EQ(redis->second_line, "");
  for (const char* bad : {"", "\n", "0\n", "-5\n", "12ab\n", "abc"}) {
    EXPECT_FALSE(ParsePidFile(bad).has_value()) << bad;
  }
}

// A child that sleeps until signalled; deaf to SIGTERM when asked (an ignored signal stays
// ignored across exec), like a hung server.
pid_t SleepingChild(bool ignore_sigterm = false) {
  pid_t pid = ::fork();
  if (pid == 0) {
    if (ignore_sigterm) ::signal(SIGTERM, SIG_IGN);
    ::execl("/bin/sleep", "sleep", "600", nullptr);
    ::_exit(127);
  }
  return pid;
}

bool WaitRunning(pid_t pid, const char* program) {
  for (int i = 0; i < 200; ++i) {
    if (RunsProgram(pid, program)) return true;
    ::usleep(10000);  // until exec has replaced the forked copy's name
  }
  return false;
}

TEST(StopStale, StopsOnlyAProcessRunningTheProgramOnTheDirectory) {
  pid_t pid = SleepingChild();
  ASSERT_TRUE(WaitRunning(pid, "sleep"));
  const std::string here = fs::current_path().string();  // the child's working directory
  // Another program's pid, or the program on another directory, is never signalled.
  auto other = StopStale(pid, "postgres", here, SIGTERM, 1000);
  ASSERT_TRUE(other.ok());
  EXPECT_FALSE(*other);
  auto elsewhere = StopStale(pid, "sleep", "/no/such/data/dir", SIGTERM, 1000);
  ASSERT_TRUE(elsewhere.ok());
  EXPECT_FALSE(*elsewhere);
  EXPECT_TRUE(RunsProgram(pid, "sleep"));
  auto stopped = StopStale(pid, "sleep", here, SIGTERM, 5000);
  ASSERT_TRUE(stopped.ok()) << stopped.status().ToString();
  EXPECT_TRUE(*stopped);
  EXPECT_FALSE(RunsProgram(pid, "sleep"));  // a zombie until reaped: holds nothing
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFSIGNALED(status));
}

TEST(StopStale, KillsWhatIgnoresTheSignalAfterTheGrace) {
  pid_t pid = SleepingChild(/*ignore_sigterm=*/true);
  ASSERT_TRUE(WaitRunning(pid, "sleep"));
  auto stopped = StopStale(pid, "sleep", "", SIGTERM, 100);
  ASSERT_TRUE(stopped.ok()) << stopped.status().ToString();
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGKILL);
}

TEST(StopStaleFromPidFile, RemovesAFileWhosePidRunsSomethingElse) {
  fs::path dir = fs::temp_directory_path() / ("stale-test-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "redis.pid") << ::getpid() << "\n";  // this test, not redis-server
  auto r = StopStaleFromPidFile(dir / "redis.pid", "redis-server", dir.string(), SIGTERM, 100);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(*r);
  EXPECT_FALSE(fs::exists(dir / "redis.pid"));
  auto none = StopStaleFromPidFile(dir / "missing.pid", "redis-server", dir.string(), SIGTERM, 100);
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(*none);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace toolgate::cli
