#include "toolgate/executor/cgroup.h"

#include <gtest/gtest.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace toolgate::executor {
namespace {

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(CgroupMountsTest, ReadsV1ControllersSeparateAndTogether) {
  const char* mountinfo =
      "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
      "32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n"
      "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
      "37 31 0:34 /outer /sys/fs/cgroup/freezer rw - cgroup cgroup rw,freezer\n"
      "39 31 0:36 / /sys/fs/cgroup/my\\040pids rw - cgroup cgroup rw,pids\n"
      "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";
  const char* self =
      "8:pids:/\n"
      "6:freezer:/outer/inner\n"
      "4:memory:/process_api/abc\n"
      "2:cpu,cpuacct:/svc\n"
      "0::/\n";
  CgroupMounts m = ParseCgroupMounts(mountinfo, self);
  EXPECT_EQ(m.v1["memory"], "/sys/fs/cgroup/memory/process_api/abc");
  EXPECT_EQ(m.v1["cpu"], "/sys/fs/cgroup/cpu,cpuacct/svc");
  EXPECT_EQ(m.v1["cpuacct"], "/sys/fs/cgroup/cpu,cpuacct/svc");
  // The mount shows /outer at its root: the path below it is what remains.
  EXPECT_EQ(m.v1["freezer"], "/sys/fs/cgroup/freezer/inner");
  EXPECT_EQ(m.v1["pids"], "/sys/fs/cgroup/my pids");
  EXPECT_EQ(m.v2, "/sys/fs/cgroup/unified");
}

TEST(CgroupMountsTest, ReadsV2Only) {
  CgroupMounts m =
      ParseCgroupMounts("30 1 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw,nsdelegate\n",
                        "0::/system.slice/toolgate.service\n");
  EXPECT_TRUE(m.v1.empty());
  EXPECT_EQ(m.v2, "/sys/fs/cgroup/system.slice/toolgate.service");
  EXPECT_EQ(m.v2_mount, "/sys/fs/cgroup");
}

TEST(CgroupMountsTest, NamesTheThreeV2Controllers) {
  EXPECT_TRUE(HasV2Controllers("cpuset cpu io memory hugetlb pids\n"));
  EXPECT_FALSE(HasV2Controllers("memory\n"));
  EXPECT_FALSE(HasV2Controllers("cpuset io memory pids"));  // "cpuset" is not "cpu"
  EXPECT_FALSE(HasV2Controllers(""));
}

// A VM's layout (seen on a GPU host): the root hands every controller down, "/process_api"
// only memory, so the executor's cgroup below it has no pids or cpu. The delegation writes
// exactly the ancestors that lack them, and never own (whose children the tree sets up).
TEST(CgroupTreeTest, DelegatesControllersDownToItsOwnCgroup) {
  char tmpl[] = "/tmp/cgroup-delegate-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const std::string mount = tmpl;
  const std::string api = mount + "/process_api";
  const std::string own = api + "/cf73";
  ASSERT_EQ(::mkdir(api.c_str(), 0755), 0);
  ASSERT_EQ(::mkdir(own.c_str(), 0755), 0);
  auto write = [](const std::string& path, const std::string& text) {
    std::ofstream(path) << text;
  };
  write(mount + "/cgroup.subtree_control", "cpuset cpu io memory hugetlb pids\n");
  write(api + "/cgroup.subtree_control", "memory\n");
  write(own + "/cgroup.subtree_control", "");

  ASSERT_TRUE(DelegateV2Controllers(mount, own).ok());
  EXPECT_EQ(ReadText(mount + "/cgroup.subtree_control"), "cpuset cpu io memory hugetlb pids\n");
  EXPECT_EQ(ReadText(api + "/cgroup.subtree_control"), "+memory +pids +cpu");
  EXPECT_EQ(ReadText(own + "/cgroup.subtree_control"), "");

  EXPECT_FALSE(DelegateV2Controllers(mount, "/elsewhere/x").ok());
  EXPECT_FALSE(DelegateV2Controllers(mount, mount + "x/y").ok());
  std::filesystem::remove_all(mount);
}

TEST(CgroupTreeTest, RefusesAHostWithoutControllers) {
  CgroupMounts none;
  auto tree = CgroupTree::Open({}, none);
  ASSERT_FALSE(tree.ok());
  EXPECT_NE(tree.status().message().find("no cgroup v1 controller memory"), std::string::npos)
      << tree.status().ToString();
}

TEST(CgroupTreeTest, OrganizationGroupsArePathSafeAndDistinct) {
  std::string a = CgroupTree::GroupFor("../../etc");
  EXPECT_EQ(a.find('/'), std::string::npos);
  EXPECT_EQ(a.rfind("org-", 0), 0u);
  EXPECT_NE(a, CgroupTree::GroupFor("../../etd"));
}

// A child that waits for a byte on a pipe before doing what body says, so the test can put
// it into a cgroup first.
class Child {
 public:
  template <typename Body>
  explicit Child(Body body) {
    int fds[2];
    EXPECT_EQ(::pipe(fds), 0);
    pid_ = ::fork();
    if (pid_ == 0) {
      char c;
      ::close(fds[1]);
      if (::read(fds[0], &c, 1) != 1) ::_exit(3);
      body();
      ::_exit(0);
    }
    ::close(fds[0]);
    go_ = fds[1];
  }
  ~Child() {
    if (go_ >= 0) ::close(go_);
    if (pid_ > 0 && !reaped_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  pid_t pid() const { return pid_; }
  void Go() {
    char c = 1;
    EXPECT_EQ(::write(go_, &c, 1), 1);
  }
  int Wait() {
    int status = 0;
    ::waitpid(pid_, &status, 0);
    reaped_ = true;
    return status;
  }

 private:
  pid_t pid_ = -1;
  int go_ = -1;
  bool reaped_ = false;
};

// These run against this machine's real cgroups (root, v1 or v2 with controllers): the tests of
// the project run as root, as the executor does.
class CgroupTest : public ::testing::Test {
 protected:
  void SetUp() override {
    CgroupTree::Options options;
    options.name = "toolgate-test-" + std::to_string(::getpid());
    auto tree = CgroupTree::Open(options);
    ASSERT_TRUE(tree.ok()) << "cgroups must work here: " << tree.status().ToString();
    tree_ = std::move(*tree);
  }
  std::unique_ptr<CgroupTree> tree_;
};

TEST_F(CgroupTest, CountsTheCpuTimeOfEveryProcessInIt) {
  auto cg = tree_->Create("org-test", {});
  ASSERT_TRUE(cg.ok()) << cg.status().ToString();
  int64_t before = (*cg)->CpuUsageUs();
  ASSERT_GE(before, 0);
  // Two processes, each spinning until it has used 30 ms of CPU time of its own.
  auto spin = [] {
    ::fork();  // parent and child both spin
    timespec t{};
    do {
      ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    } while (t.tv_sec == 0 && t.tv_nsec < 30 * 1000 * 1000);
    ::wait(nullptr);
  };
  Child child(spin);
  ASSERT_TRUE((*cg)->Adopt(child.pid()).ok());
  child.Go();
  child.Wait();
  EXPECT_GE((*cg)->CpuUsageUs() - before, 60000);
}

TEST_F(CgroupTest, TheOomKillerOfItsLimitIsCounted) {
  CgroupLimits limits;
  limits.memory_bytes = 32 << 20;
  auto cg = tree_->Create("org-test", limits);
  ASSERT_TRUE(cg.ok()) << cg.status().ToString();
  EXPECT_EQ((*cg)->OomKills(), 0u);
  // A child that touches 256 MiB: past the cgroup's limit, whatever its own rlimits allow.
  Child child([] {
    size_t size = size_t{256} << 20;
    char* p = static_cast<char*>(
        ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    for (size_t i = 0; i < size; i += 4096) p[i] = 1;
  });
  ASSERT_TRUE((*cg)->Adopt(child.pid()).ok());
  child.Go();
  int status = child.Wait();
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  EXPECT_EQ((*cg)->OomKills(), 1u);
  EXPECT_GE((*cg)->PeakMemoryBytes(), uint64_t{30} << 20);
}

TEST_F(CgroupTest, KillsEveryProcessButTheOneKept) {
  CgroupLimits limits;
  limits.pids = 32;
  auto cg = tree_->Create("spare", limits);
  ASSERT_TRUE(cg.ok()) << cg.status().ToString();
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  // The child starts three grandchildren that detach (new sessions) and sleep, then sleeps.
  Child child([&] {
    for (int i = 0; i < 3; ++i) {
      if (::fork() == 0) {
        ::setsid();
        if (::fork() == 0) {
          pid_t self = ::getpid();
          (void)!::write(ready[1], &self, sizeof self);
          ::pause();
        }
        ::_exit(0);
      }
    }
    ::pause();
  });
  ASSERT_TRUE((*cg)->Adopt(child.pid()).ok());
  // The tasks counter, which spares a worker's call the process list when it holds no more
  // tasks than the worker has threads: one now, the child's single thread.
  EXPECT_EQ((*cg)->Tasks(), 1);
  child.Go();
  std::vector<pid_t> detached(3);
  for (pid_t& pid : detached)
    ASSERT_EQ(::read(ready[0], &pid, sizeof pid), static_cast<ssize_t>(sizeof pid));
  EXPECT_GE((*cg)->Tasks(), 4);
  std::vector<pid_t> in = (*cg)->Processes();
  EXPECT_NE(std::find(in.begin(), in.end(), child.pid()), in.end());
  for (pid_t pid : detached) EXPECT_NE(std::find(in.begin(), in.end(), pid), in.end());

  // The detached three at least (their parents may still be exiting too).
  EXPECT_GE((*cg)->KillAllExcept(child.pid()), 3u);
  // The kept process lives on; the others die (a killed process is a zombie, then gone).
  EXPECT_EQ(::kill(child.pid(), 0), 0);
  auto running = [&] {
    int n = 0;
    for (pid_t pid : detached) {
      char path[64];
      std::snprintf(path, sizeof path, "/proc/%d/stat", pid);
      FILE* f = std::fopen(path, "r");
      if (f == nullptr) continue;
      char state = 0;
      int scanned = std::fscanf(f, "%*d (%*[^)]) %c", &state);
      std::fclose(f);
      if (scanned == 1 && state != 'Z' && state != 'X') ++n;
    }
    return n;
  };
  for (int i = 0; i < 100000 && running() > 0; ++i) ::sched_yield();
  EXPECT_EQ(running(), 0);
  ::close(ready[0]);
  ::close(ready[1]);
}

TEST_F(CgroupTest, TheTreesOfExecutorsThatAreGoneAreRemoved) {
  // A tree left by an executor that was killed: its pid is gone, a group and a leaf remain.
  pid_t gone = ::fork();
  if (gone == 0) ::_exit(0);
  ::waitpid(gone, nullptr, 0);
  const std::string prefix = "toolgate-stale-test-";
  CgroupTree::Options left;
  left.name = prefix + std::to_string(gone);
  auto old = CgroupTree::Open(left);
  ASSERT_TRUE(old.ok()) << old.status().ToString();
  auto leaf = (*old)->Create("org-left", {});
  ASSERT_TRUE(leaf.ok());
  const std::string base = (*old)->root();
  ASSERT_EQ(base.substr(base.rfind('/') + 1), left.name);
  // Leak it as a killed executor would.
  (void)leaf->release();
  (void)old->release();
  struct stat st;
  ASSERT_EQ(::stat((base + "/org-left").c_str(), &st), 0);

  CgroupTree::Options next;
  next.name = prefix + std::to_string(::getpid());
  next.stale_prefix = prefix;
  auto fresh = CgroupTree::Open(next);
  ASSERT_TRUE(fresh.ok());
  EXPECT_NE(::stat(base.c_str(), &st), 0) << base << " was left";
}

TEST_F(CgroupTest, MovesASandboxToAnotherGroupWithItsProcesses) {
  auto cg = tree_->Create("spare", {});
  ASSERT_TRUE(cg.ok()) << cg.status().ToString();
  Child child([] { ::pause(); });
  ASSERT_TRUE((*cg)->Adopt(child.pid()).ok());
  child.Go();
  ASSERT_TRUE((*cg)->MoveTo("org-moved").ok());
  EXPECT_EQ((*cg)->group(), "org-moved");
  EXPECT_EQ((*cg)->Processes(), std::vector<pid_t>{child.pid()});
  EXPECT_GE((*cg)->CpuUsageUs(), 0);
}

}  // namespace
}  // namespace toolgate::executor
