#include "subprocess.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "toolgate/base/strings.h"

namespace toolgate::registry {
namespace {

// The user the sandbox runs a child as: the configured one when the test runs as root, which
// can drop to it, else the test's own.
std::string ExpectedUid(const Sandbox& s) {
  return std::to_string(geteuid() == 0 ? s.uid : geteuid());
}

TEST(SandboxedProcess, RunsAsTheUnprivilegedUser) {
  Sandbox sandbox;
  auto uid = RunProcess({"/usr/bin/id", "-u"}, "", 10'000, 4096, sandbox);
  ASSERT_TRUE(uid.ok()) << uid.status().ToString();
  EXPECT_EQ(uid->exit_code, 0) << uid->output;
  EXPECT_EQ(TrimRight(uid->output, "\n "), ExpectedUid(sandbox));

  if (geteuid() == 0) {
    // No supplementary groups left over from root.
    auto groups = RunProcess({"/usr/bin/id", "-G"}, "", 10'000, 4096, sandbox);
    ASSERT_TRUE(groups.ok()) << groups.status().ToString();
    EXPECT_EQ(TrimRight(groups->output, "\n "), std::to_string(sandbox.gid));
  }
}

TEST(SandboxedProcess, HoldsNoCapabilitiesAndNoNewPrivileges) {
  auto status = RunProcess({"/bin/grep", "-E", "^(CapEff|CapPrm|NoNewPrivs)", "/proc/self/status"},
                           "", 10'000, 4096, Sandbox{});
  ASSERT_TRUE(status.ok()) << status.status().ToString();
  EXPECT_NE(status->output.find("CapPrm:\t0000000000000000"), std::string::npos) << status->output;
  EXPECT_NE(status->output.find("CapEff:\t0000000000000000"), std::string::npos) << status->output;
  EXPECT_NE(status->output.find("NoNewPrivs:\t1"), std::string::npos) << status->output;
}

TEST(SandboxedProcess, AddressSpaceIsCapped) {
  Sandbox sandbox;
  sandbox.memory_bytes = 64 << 20;
  auto limits = RunProcess({"/bin/grep", "Max address space", "/proc/self/limits"}, "", 10'000,
                           4096, sandbox);
  ASSERT_TRUE(limits.ok()) << limits.status().ToString();
  EXPECT_NE(limits->output.find(std::to_string(64 << 20)), std::string::npos) << limits->output;
}

TEST(SandboxedProcess, HasNoNetworkButLoopback) {
  auto dev = RunProcess({"/bin/cat", "/proc/net/dev"}, "", 10'000, 16 * 1024, Sandbox{});
  ASSERT_TRUE(dev.ok()) << dev.status().ToString();
  // Two header lines, then one line per interface. Without the privilege to unshare the
  // network (not root) the child keeps the host's, which this test cannot check.
  if (geteuid() == 0) {
    size_t lines = 0;
    for (char c : dev->output) lines += c == '\n';
    EXPECT_EQ(lines, 3u) << dev->output;
    EXPECT_NE(dev->output.find("lo:"), std::string::npos) << dev->output;
  }
}

TEST(SandboxedProcess, ReadsItsInput) {
  auto out = RunProcess({"cat"}, "to the child", 10'000, 4096, Sandbox{});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->output, "to the child");
}

TEST(SandboxedProcess, MissingProgramIsNotFound) {
  EXPECT_EQ(RunProcess({"toolgate-no-such-program"}, "", 1000).status().code(),
            Status::Code::kNotFound);
}

TEST(SandboxedProcess, TimeLimitKillsTheWholeProcessGroup) {
  // The child leaves a grandchild behind and names it in a file; both must be gone.
  char dir[] = "/tmp/toolgate-subprocess-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string pid_file = std::string(dir) + "/pid";
  auto out =
      RunProcess({"/bin/sh", "-c", "sleep 1000 & echo $! > " + pid_file + "; wait"}, "", 300, 4096);
  EXPECT_EQ(out.status().code(), Status::Code::kTimeout);

  std::ifstream in(pid_file);
  pid_t grandchild = 0;
  in >> grandchild;
  unlink(pid_file.c_str());
  rmdir(dir);
  ASSERT_GT(grandchild, 0);
  // A pidfd becomes readable when its process has ended; none when it is already reaped.
  int fd = static_cast<int>(syscall(SYS_pidfd_open, grandchild, 0));
  if (fd >= 0) {
    pollfd p{fd, POLLIN, 0};
    EXPECT_EQ(poll(&p, 1, 10'000), 1) << "the grandchild outlived the time limit";
    close(fd);
  }
}

}  // namespace
}  // namespace toolgate::registry
