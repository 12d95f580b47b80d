#include "toolgate/executor/sandbox.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <string>

#include "toolgate/executor/process_runtime.h"

namespace toolgate::executor {
namespace {

SandboxSpec ShellSpec(const std::string& script) {
  SandboxSpec spec;
  spec.argv = {"/bin/sh", "-c", script};
  spec.env = {"PATH=/usr/bin:/bin", "ONLY=this"};
  spec.host_root_uid = 200000;
  spec.host_root_gid = 200000;
  spec.host_uid = 200001;
  spec.host_gid = 200001;
  return spec;
}

const MountOp* FindTarget(const SandboxPlan& plan, const std::string& target) {
  for (const MountOp& op : plan.mounts) {
    if (op.target == target) return &op;
  }
  return nullptr;
}

const MountOp* FindMount(const SandboxPlan& plan, const std::string& target) {
  for (const MountOp& op : plan.mounts) {
    if (op.target == target &&
        (op.kind == MountOp::Kind::kMount || op.kind == MountOp::Kind::kBindReadOnly)) {
      return &op;
    }
  }
  return nullptr;
}

TEST(SandboxPlanTest, EveryNamespaceIsNew) {
  auto plan = BuildSandboxPlan(ShellSpec("true"));
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  for (int flag :
       {CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNS, CLONE_NEWIPC, CLONE_NEWUTS, CLONE_NEWNET}) {
    EXPECT_TRUE(plan->clone_flags & flag) << flag;
  }
  EXPECT_EQ(plan->uid_map, "0 200000 1\n1000 200001 1\n");
  EXPECT_EQ(plan->gid_map, "0 200000 1\n1000 200001 1\n");
  EXPECT_EQ(plan->argv, (std::vector<std::string>{"/bin/sh", "-c", "true"}));
  EXPECT_EQ(plan->env, (std::vector<std::string>{"PATH=/usr/bin:/bin", "ONLY=this"}));
}

TEST(SandboxPlanTest, SystemDirectoriesAreReadOnlyAndSecretsAbsent) {
  auto plan = BuildSandboxPlan(ShellSpec("true"));
  ASSERT_TRUE(plan.ok());
  const MountOp* usr = FindMount(*plan, "/newroot/usr");
  ASSERT_NE(usr, nullptr);
  EXPECT_EQ(usr->kind, MountOp::Kind::kBindReadOnly);
  EXPECT_EQ(usr->source, "/oldroot/usr");
  for (const MountOp& op : plan->mounts) {
    // Nothing of /etc but the loader's and the interpreter's files; no home, no data, no /var.
    EXPECT_EQ(op.target.find("shadow"), std::string::npos);
    EXPECT_NE(op.source, "/oldroot/etc");
    EXPECT_NE(op.source, "/oldroot/root");
    EXPECT_NE(op.source, "/oldroot/var");
    EXPECT_NE(op.source, "/oldroot/home");
    EXPECT_NE(op.source, "/oldroot/tmp");
    if (op.kind == MountOp::Kind::kMount && op.fstype.empty()) {
      EXPECT_EQ(op.source.rfind("/oldroot/dev/", 0), 0u) << op.source;  // only device nodes
    }
  }
  // A host symlink such as /lib64 -> usr/lib64 is recreated, not bound.
  char link[256];
  if (::readlink("/lib64", link, sizeof link) > 0) {
    const MountOp* lib64 = FindTarget(*plan, "/newroot/lib64");
    ASSERT_NE(lib64, nullptr);
    EXPECT_EQ(lib64->kind, MountOp::Kind::kSymlink);
  }
  const MountOp* passwd = FindTarget(*plan, "/newroot/etc/passwd");
  ASSERT_NE(passwd, nullptr);
  EXPECT_EQ(passwd->kind, MountOp::Kind::kFile);
  EXPECT_EQ(passwd->data.find("root"), std::string::npos);
}

TEST(SandboxPlanTest, PrivateTmpProcAndDev) {
  SandboxSpec spec = ShellSpec("true");
  spec.limits.tmp_bytes = 5 << 20;
  spec.devices = {"/dev/null", "/dev/nvidia-does-not-exist"};
  auto plan = BuildSandboxPlan(spec);
  ASSERT_TRUE(plan.ok());
  const MountOp* tmp = FindMount(*plan, "/newroot/tmp");
  ASSERT_NE(tmp, nullptr);
  EXPECT_EQ(tmp->fstype, "tmpfs");
  EXPECT_EQ(tmp->data, "mode=1777,size=5242880");
  EXPECT_TRUE(tmp->flags & MS_NOSUID);
  EXPECT_TRUE(tmp->flags & MS_NODEV);
  const MountOp* proc = FindMount(*plan, "/newroot/proc");
  ASSERT_NE(proc, nullptr);
  EXPECT_EQ(proc->fstype, "proc");
  EXPECT_TRUE(proc->optional);
  EXPECT_FALSE(tmp->optional);
  EXPECT_NE(FindMount(*plan, "/newroot/dev/urandom"), nullptr);
  EXPECT_EQ(FindTarget(*plan, "/newroot/dev/nvidia-does-not-exist"), nullptr);
}

TEST(SandboxPlanTest, LimitsBecomeRlimits) {
  SandboxSpec spec = ShellSpec("true");
  spec.limits.address_space_bytes = 300 << 20;
  spec.limits.processes = 32;
  spec.limits.open_files = 100;
  spec.limits.cpu_seconds = 60;
  auto plan = BuildSandboxPlan(spec);
  ASSERT_TRUE(plan.ok());
  auto has = [&](int resource, uint64_t value) {
    return std::find(plan->rlimits.begin(), plan->rlimits.end(),
                     std::pair<int, uint64_t>{resource, value}) != plan->rlimits.end();
  };
  EXPECT_TRUE(has(RLIMIT_AS, 300 << 20));
  EXPECT_TRUE(has(RLIMIT_NPROC, 32));
  EXPECT_TRUE(has(RLIMIT_NOFILE, 100));
  EXPECT_TRUE(has(RLIMIT_CPU, 60));
  EXPECT_TRUE(has(RLIMIT_CORE, 0));
  for (const auto& [resource, value] : plan->rlimits) EXPECT_NE(resource, RLIMIT_DATA) << value;
}

TEST(SandboxPlanTest, RefusesRootRelativePathsAndSharedIds) {
  SandboxSpec spec = ShellSpec("true");
  spec.host_uid = 0;
  EXPECT_FALSE(BuildSandboxPlan(spec).ok());
  spec = ShellSpec("true");
  spec.host_uid = spec.host_root_uid;
  EXPECT_FALSE(BuildSandboxPlan(spec).ok());
  spec = ShellSpec("true");
  spec.argv[0] = "sh";
  EXPECT_FALSE(BuildSandboxPlan(spec).ok());
  spec = ShellSpec("true");
  spec.read_only_binds = {{"/definitely/not/here", "/x"}};
  EXPECT_FALSE(BuildSandboxPlan(spec).ok());
  spec = ShellSpec("true");
  spec.devices = {"/etc/passwd"};
  EXPECT_FALSE(BuildSandboxPlan(spec).ok());
}

TEST(SandboxPlanTest, WorkersOfEachLanguage) {
  ProcessRuntimeConfig config;
  config.runtime_dir = "/opt/runtimes";
  config.uid_base = 300000;
  SandboxSpec py = WorkerSandboxSpec(Language::kPython, config, 256, 5, -1);
  EXPECT_EQ(py.argv, (std::vector<std::string>{"/usr/bin/python3", "-I", "-S", "-B", "-u",
                                               "/runtime/python/worker.py"}));
  EXPECT_TRUE(py.data_binds.empty());
  SandboxSpec bundled = WorkerSandboxSpec(Language::kPython, config, 256, 5, -1, "/cache/ab12");
  EXPECT_EQ(bundled.data_binds,
            (std::vector<std::pair<std::string, std::string>>{{"/cache/ab12", "/bundle"}}));
  EXPECT_EQ(py.limits.address_space_bytes, (256u + 128u) << 20);
  EXPECT_EQ(py.host_root_uid, 300000u);
  EXPECT_EQ(py.host_uid, 300006u);
  EXPECT_EQ(py.read_only_binds,
            (std::vector<std::pair<std::string, std::string>>{{"/opt/runtimes", "/runtime"}}));
  EXPECT_EQ(py.env, (std::vector<std::string>{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/tmp",
                                              "TMPDIR=/tmp", "LANG=C.UTF-8"}));
  SandboxSpec js = WorkerSandboxSpec(Language::kJavaScript, config, 128, 0, -1);
  EXPECT_EQ(js.argv, (std::vector<std::string>{"/usr/bin/node", "--max-old-space-size=128",
                                               "--no-addons", "/runtime/javascript/worker.js"}));
  EXPECT_EQ(js.limits.address_space_bytes, 0u);  // V8 reserves far more than it uses
  EXPECT_EQ(js.limits.data_bytes, (128u + 96u) << 20);
}

// A shell script run in a real sandbox: what it printed, and how it ended.
struct Ran {
  std::string output;
  int status = -1;
};

Ran RunSandboxed(const SandboxSpec& spec) {
  Ran ran;
  auto plan = BuildSandboxPlan(spec);
  EXPECT_TRUE(plan.ok()) << plan.status().ToString();
  if (!plan.ok()) return ran;
  auto process = SpawnSandboxed(*plan);
  EXPECT_TRUE(process.ok()) << process.status().ToString();
  if (!process.ok()) return ran;
  char buf[4096];
  for (;;) {
    pollfd pfd{process->log, POLLIN, 0};
    if (::poll(&pfd, 1, 10000) <= 0) break;
    ssize_t n = ::read(process->log, buf, sizeof buf);
    if (n == 0) break;
    if (n > 0) ran.output.append(buf, static_cast<size_t>(n));
  }
  ::kill(process->pid, SIGKILL);
  ::waitpid(process->pid, &ran.status, 0);
  return ran;
}

Ran RunSandboxed(const std::string& script) {
  return RunSandboxed(ShellSpec(script));
}

TEST(SandboxTest, RunsAsAnUnprivilegedUserWithoutCapabilities) {
  Ran ran = RunSandboxed(
      "id -u; id -g; grep -E '^(CapEff|CapPrm|CapBnd|NoNewPrivs|Seccomp):' /proc/self/status");
  EXPECT_EQ(ran.output,
            "1000\n1000\nCapPrm:\t0000000000000000\nCapEff:\t0000000000000000\n"
            "CapBnd:\t000001ffffffffff\nNoNewPrivs:\t1\nSeccomp:\t2\n")
      << ran.output;
}

TEST(SandboxTest, SeesOnlyItsOwnProcessesAndNoNetwork) {
  Ran ran = RunSandboxed(
      "echo $$; set -- /proc/[0-9]*; echo $#; hostname; "
      "grep -c ':' /proc/net/dev; cat /sys/class/net/lo/operstate 2>&1 | head -c 0");
  // The shell is pid 1, and /proc (listed by the shell itself, with no child running) shows
  // nothing else; /proc/net/dev lists only lo.
  EXPECT_EQ(ran.output, "1\n1\nsandbox\n1\n") << ran.output;
}

TEST(SandboxTest, HasExactlyItsEnvironmentAndFileDescriptors) {
  Ran ran = RunSandboxed("env | sort; ls /proc/self/fd | sort -n | tr '\\n' ' '");
  // ls's own directory fd is the extra one.
  EXPECT_EQ(ran.output, "ONLY=this\nPATH=/usr/bin:/bin\nPWD=/tmp\n0 1 2 3 4 5 ") << ran.output;
}

TEST(SandboxTest, FileSystemIsReadOnlyButTmpAndHidesTheHost) {
  Ran ran = RunSandboxed(
      "touch /usr/x 2>/dev/null && echo usr-writable; touch /x 2>/dev/null && echo root-writable;"
      "touch /etc/x 2>/dev/null && echo etc-writable; echo hi > /tmp/x && cat /tmp/x;"
      "test -e /etc/shadow && echo shadow; test -e /root && echo root; test -e /var && echo var;"
      "test -e /work && echo work; ls /");
  EXPECT_EQ(ran.output.find("writable"), std::string::npos) << ran.output;
  EXPECT_NE(ran.output.find("hi\n"), std::string::npos) << ran.output;
  EXPECT_EQ(ran.output.find("shadow"), std::string::npos) << ran.output;
  EXPECT_EQ(ran.output.find("root\n"), std::string::npos) << ran.output;
  EXPECT_EQ(ran.output.find("var"), std::string::npos) << ran.output;
  EXPECT_EQ(ran.output.find("work"), std::string::npos) << ran.output;
}

TEST(SandboxTest, SeesTheSystemsCaCertificatesButNoPrivateKeys) {
  Ran ran = RunSandboxed(
      "grep -c 'BEGIN CERTIFICATE' /etc/ssl/certs/ca-certificates.crt;"
      "test -e /etc/ssl/openssl.cnf && echo config; test -e /etc/ssl/private && echo private;"
      "touch /etc/ssl/certs/x 2>/dev/null && echo writable");
  // TLS clients in the sandbox verify against the host's bundle; nothing else of /etc/ssl.
  EXPECT_GT(std::atoi(ran.output.c_str()), 0) << ran.output;
  EXPECT_NE(ran.output.find("config\n"), std::string::npos) << ran.output;
  EXPECT_EQ(ran.output.find("private"), std::string::npos) << ran.output;
  EXPECT_EQ(ran.output.find("writable"), std::string::npos) << ran.output;
}

TEST(SandboxTest, TmpIsBounded) {
  SandboxSpec spec = ShellSpec(
      "dd if=/dev/zero of=/tmp/fill bs=1M count=20 2>/dev/null; "
      "du -m /tmp/fill | cut -f1");
  spec.limits.tmp_bytes = 4 << 20;
  EXPECT_EQ(RunSandboxed(spec).output, "4\n");
}

TEST(SandboxTest, RlimitsHold) {
  SandboxSpec spec = ShellSpec("ulimit -p; ulimit -n; ulimit -t; ulimit -c");
  spec.limits.processes = 40;
  spec.limits.open_files = 50;
  spec.limits.cpu_seconds = 70;
  EXPECT_EQ(RunSandboxed(spec).output, "40\n50\n70\n0\n");
}

TEST(SandboxTest, SeccompRefusesNamespacesAndMounts) {
  Ran ran = RunSandboxed(
      "unshare -U true 2>/dev/null && echo unshared; "
      "mount -t tmpfs x /tmp 2>/dev/null && echo mounted; echo done");
  EXPECT_EQ(ran.output, "done\n");
}

TEST(SandboxTest, ASetupFailureIsReportedAndLeavesNothingRunning) {
  SandboxSpec spec = ShellSpec("true");
  spec.argv = {"/usr/bin/definitely-not-a-program"};
  auto plan = BuildSandboxPlan(spec);
  ASSERT_TRUE(plan.ok());
  auto process = SpawnSandboxed(*plan);
  ASSERT_FALSE(process.ok());
  EXPECT_NE(process.status().message().find("execve"), std::string::npos)
      << process.status().ToString();
}

}  // namespace
}  // namespace toolgate::executor
