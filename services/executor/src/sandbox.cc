#include "toolgate/executor/sandbox.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>

namespace toolgate::executor {
namespace {

constexpr const char* kOldRoot = "/oldroot";
constexpr const char* kNewRoot = "/newroot";
constexpr uint64_t kDevShmBytes = 8 << 20;
constexpr int kErrorFd = 5;  // the child's end of the error pipe while it sets up

// ---------------------------------------------------------------------------------------------
// The plan.

class PlanBuilder {
 public:
  explicit PlanBuilder(SandboxPlan& plan) : plan_(plan) {}

  void Mkdir(const std::string& path, unsigned mode = 0755) {
    if (!made_.insert(path).second) return;
    Parents(path);
    plan_.mounts.push_back({MountOp::Kind::kMkdir, "", kNewRoot + path, "", 0, "", mode});
  }
  void File(const std::string& path, std::string data, unsigned mode = 0644) {
    Parents(path);
    plan_.mounts.push_back(
        {MountOp::Kind::kFile, "", kNewRoot + path, "", 0, std::move(data), mode});
  }
  void Symlink(const std::string& link_text, const std::string& path) {
    Parents(path);
    plan_.mounts.push_back({MountOp::Kind::kSymlink, link_text, kNewRoot + path, "", 0, "", 0});
  }
  void Tmpfs(const std::string& path, unsigned long flags, const std::string& data) {
    Mkdir(path);
    plan_.mounts.push_back({MountOp::Kind::kMount, "tmpfs", kNewRoot + path, "tmpfs", flags, data});
  }
  // Shows host_path at path read-only (and with extra_flags such as MS_NOEXEC): a directory or
  // a file. False when host_path is neither.
  bool BindReadOnly(const std::string& host_path, const std::string& path,
                    unsigned long extra_flags = 0) {
    struct stat st;
    if (::stat(host_path.c_str(), &st) != 0) return false;
    if (S_ISDIR(st.st_mode)) {
      Mkdir(path);
    } else {
      File(path, "");
    }
    plan_.mounts.push_back(
        {MountOp::Kind::kBindReadOnly, kOldRoot + host_path, kNewRoot + path, "", extra_flags, ""});
    return true;
  }
  // Covers path, a directory already shown, with an empty read-only tmpfs.
  void Hide(const std::string& path) {
    plan_.mounts.push_back({MountOp::Kind::kMount, "tmpfs", kNewRoot + path, "tmpfs",
                            MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=0555,size=4k"});
  }
  // Shows the host's path the way the host has it: a symlink as the same symlink, anything else
  // bound read-only. Skips a path the host lacks.
  void SystemPath(const std::string& path) {
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0) return;
    if (S_ISLNK(st.st_mode)) {
      char target[4096];
      ssize_t n = ::readlink(path.c_str(), target, sizeof target - 1);
      if (n > 0) Symlink(std::string(target, static_cast<size_t>(n)), path);
      return;
    }
    BindReadOnly(path, path);
  }
  // A host device node at the same path, read-write as on the host.
  void Device(const std::string& path) {
    struct stat st;
    if (::stat(path.c_str(), &st) != 0 || !S_ISCHR(st.st_mode)) return;
    File(path, "", 0644);
    plan_.mounts.push_back(
        {MountOp::Kind::kMount, kOldRoot + path, kNewRoot + path, "", MS_BIND, ""});
  }
  void Proc(const std::string& path) {
    Mkdir(path);
    plan_.mounts.push_back({MountOp::Kind::kMount, "proc", kNewRoot + path, "proc",
                            MS_NOSUID | MS_NODEV | MS_NOEXEC, "", 0755, /*optional=*/true});
  }

 private:
  void Parents(const std::string& path) {
    size_t slash = path.rfind('/');
    if (slash != std::string::npos && slash > 0) Mkdir(path.substr(0, slash));
  }
  SandboxPlan& plan_;
  std::set<std::string> made_;
};

bool IsAbsolute(const std::string& path) {
  return !path.empty() && path[0] == '/' && path.find("/../") == std::string::npos;
}

}  // namespace

std::vector<std::string> SandboxSpec::DefaultSystemPaths() {
  std::vector<std::string> paths = {
      "/usr",
      "/bin",
      "/sbin",
      "/lib",
      "/lib32",
      "/lib64",
      "/libx32",
      "/etc/ld.so.cache",
      "/etc/ld.so.conf",
      "/etc/ld.so.conf.d",
      "/etc/localtime",
      "/etc/timezone",
      "/etc/nsswitch.conf",
      "/etc/alternatives",
      // The system's CA certificates, so TLS clients inside verify what they connect to (the
      // files they link to, /usr/share/ca-certificates, come with /usr), and OpenSSL's
      // configuration.
      "/etc/ssl/certs",
      "/etc/ssl/openssl.cnf",
  };
  // Debian's Python reads its site configuration from /etc/python3.X.
  if (DIR* dir = ::opendir("/etc")) {
    std::vector<std::string> python;
    while (dirent* e = ::readdir(dir)) {
      if (std::strncmp(e->d_name, "python3", 7) == 0)
        python.push_back(std::string("/etc/") + e->d_name);
    }
    ::closedir(dir);
    std::sort(python.begin(), python.end());
    paths.insert(paths.end(), python.begin(), python.end());
  }
  return paths;
}

std::vector<std::string> SandboxSpec::DefaultHiddenPaths() {
  std::vector<std::string> paths = {
      "/usr/lib/python3/dist-packages",
      "/usr/share/nodejs",
      "/usr/lib/nodejs",
      "/usr/lib/node_modules",
      "/usr/lib/node",
      "/usr/local/lib/node_modules",
      "/usr/share/lua",
      "/usr/local/share/lua",
      "/usr/local/lib/lua",
  };
  // /usr/local/lib/python3.X (pip's dist-packages) and /usr/lib/<triplet>/lua (C modules).
  auto add_matching = [&paths](const std::string& dir, const char* prefix, const char* suffix) {
    DIR* d = ::opendir(dir.c_str());
    if (d == nullptr) return;
    std::vector<std::string> found;
    while (dirent* e = ::readdir(d)) {
      if (std::strncmp(e->d_name, prefix, std::strlen(prefix)) == 0) {
        found.push_back(dir + "/" + e->d_name + suffix);
      }
    }
    ::closedir(d);
    std::sort(found.begin(), found.end());
    paths.insert(paths.end(), found.begin(), found.end());
  };
  add_matching("/usr/local/lib", "python3", "");
  if (DIR* d = ::opendir("/usr/lib")) {
    std::vector<std::string> triplets;
    while (dirent* e = ::readdir(d)) {
      if (std::strstr(e->d_name, "-linux-gnu") != nullptr) triplets.push_back(e->d_name);
    }
    ::closedir(d);
    for (const std::string& t : triplets) add_matching("/usr/lib/" + t, "lua", "");
  }
  return paths;
}

Result<SandboxPlan> BuildSandboxPlan(const SandboxSpec& spec) {
  if (spec.argv.empty() || !IsAbsolute(spec.argv[0])) {
    return Status::InvalidArgument("the sandboxed program must be an absolute path");
  }
  if (spec.host_uid == 0 || spec.host_gid == 0 || spec.host_root_uid == 0 ||
      spec.host_root_gid == 0) {
    return Status::InvalidArgument("a sandbox must not be root on the host");
  }
  if (spec.host_uid == spec.host_root_uid || spec.host_gid == spec.host_root_gid) {
    return Status::InvalidArgument("a sandbox's program and root must be distinct host ids");
  }
  SandboxPlan plan;
  plan.clone_flags = CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWUTS |
                     CLONE_NEWNET | CLONE_NEWCGROUP;
  const std::string inside = std::to_string(kSandboxUid);
  plan.uid_map = "0 " + std::to_string(spec.host_root_uid) + " 1\n" + inside + " " +
                 std::to_string(spec.host_uid) + " 1\n";
  plan.gid_map = "0 " + std::to_string(spec.host_root_gid) + " 1\n" + inside + " " +
                 std::to_string(spec.host_gid) + " 1\n";
  plan.argv = spec.argv;
  plan.env = spec.env;

  PlanBuilder b(plan);
  for (const std::string& path : spec.system_paths) {
    if (!IsAbsolute(path)) return Status::InvalidArgument("not an absolute path: " + path);
    b.SystemPath(path);
  }
  for (const auto& [host, inside] : spec.read_only_binds) {
    if (!IsAbsolute(host) || !IsAbsolute(inside)) {
      return Status::InvalidArgument("not an absolute path: " + host + " or " + inside);
    }
    if (!b.BindReadOnly(host, inside)) return Status::InvalidArgument("no such path: " + host);
  }
  for (const auto& [host, inside] : spec.data_binds) {
    if (!IsAbsolute(host) || !IsAbsolute(inside)) {
      return Status::InvalidArgument("not an absolute path: " + host + " or " + inside);
    }
    if (!b.BindReadOnly(host, inside, MS_NOEXEC)) {
      return Status::InvalidArgument("no such path: " + host);
    }
  }
  // Hidden after every bind, so a directory shown twice is hidden in both places it could be
  // reached from (a path under /usr and its /lib symlink lead to the same mount).
  for (const std::string& path : spec.hidden_paths) {
    if (!IsAbsolute(path)) return Status::InvalidArgument("not an absolute path: " + path);
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) continue;
    bool shown = false;
    for (const std::string& system : spec.system_paths) {
      if (path.rfind(system + "/", 0) == 0) shown = true;
    }
    if (shown) b.Hide(path);
  }
  const std::string uid = std::to_string(kSandboxUid);
  b.File("/etc/passwd", "sandbox:x:" + uid + ":" + uid + ":sandbox:/tmp:/usr/sbin/nologin\n");
  b.File("/etc/group", "sandbox:x:" + uid + ":\n");
  b.File("/etc/hostname", plan.hostname + "\n");
  b.Proc("/proc");

  b.Tmpfs("/dev", MS_NOSUID | MS_NOEXEC, "mode=0755,size=64k");
  for (const char* node : {"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"}) {
    b.Device(node);
  }
  for (const std::string& node : spec.devices) {
    if (!IsAbsolute(node) || node.rfind("/dev/", 0) != 0) {
      return Status::InvalidArgument("not a device path: " + node);
    }
    b.Device(node);
  }
  b.Symlink("/proc/self/fd", "/dev/fd");
  b.Symlink("/proc/self/fd/0", "/dev/stdin");
  b.Symlink("/proc/self/fd/1", "/dev/stdout");
  b.Symlink("/proc/self/fd/2", "/dev/stderr");
  b.Tmpfs("/dev/shm", MS_NOSUID | MS_NODEV | MS_NOEXEC,
          "mode=1777,size=" + std::to_string(kDevShmBytes));
  b.Tmpfs("/tmp", MS_NOSUID | MS_NODEV, "mode=1777,size=" + std::to_string(spec.limits.tmp_bytes));

  const SandboxLimits& l = spec.limits;
  if (l.address_space_bytes > 0) plan.rlimits.push_back({RLIMIT_AS, l.address_space_bytes});
  if (l.data_bytes > 0) plan.rlimits.push_back({RLIMIT_DATA, l.data_bytes});
  plan.rlimits.push_back({RLIMIT_NPROC, l.processes});
  plan.rlimits.push_back({RLIMIT_NOFILE, l.open_files});
  plan.rlimits.push_back({RLIMIT_CPU, l.cpu_seconds});
  plan.rlimits.push_back({RLIMIT_CORE, 0});  // a crash leaves nothing on the host's disks
  return plan;
}

// ---------------------------------------------------------------------------------------------
// The seccomp filter.

namespace {

// System calls a sandboxed program has no use for, each one a way out of the sandbox or into
// the kernel's less travelled corners. Refused with EPERM (a program handles that; a kill would
// look like a crash).
constexpr const char* kRefusedSyscalls[] = {
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "kcmp",
    "pidfd_getfd",
    "mount",
    "umount2",
    "pivot_root",
    "chroot",
    "move_mount",
    "open_tree",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "mount_setattr",
    "unshare",
    "setns",
    "keyctl",
    "add_key",
    "request_key",
    "bpf",
    "perf_event_open",
    "userfaultfd",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "kexec_load",
    "kexec_file_load",
    "init_module",
    "finit_module",
    "delete_module",
    "reboot",
    "swapon",
    "swapoff",
    "acct",
    "syslog",
    "quotactl",
    "quotactl_fd",
    "iopl",
    "ioperm",
    "settimeofday",
    "clock_settime",
    "clock_adjtime",
    "adjtimex",
    "sethostname",
    "setdomainname",
    "open_by_handle_at",
    "name_to_handle_at",
    "lookup_dcookie",
    "vhangup",
    "uselib",
    "personality",
    "fanotify_init",
    "add_key",
    "nfsservctl",
    "sysfs",
    "_sysctl",
    "ustat",
    "migrate_pages",
    "move_pages",
};

// clone(2) flags that would make new namespaces.
constexpr uint64_t kNamespaceFlags[] = {CLONE_NEWUSER, CLONE_NEWNS,  CLONE_NEWPID,   CLONE_NEWNET,
                                        CLONE_NEWIPC,  CLONE_NEWUTS, CLONE_NEWCGROUP};

Result<std::vector<sock_filter>> BuildSeccompProgram() {
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
  if (ctx == nullptr) return Status::Internal("seccomp_init failed");
  auto fail = [&](const std::string& what) {
    seccomp_release(ctx);
    return Status::Internal(what);
  };
  // The child sets no_new_privs itself, right before loading the filter.
  if (seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0) != 0) return fail("seccomp: nnp attribute");
  const uint32_t refuse = SCMP_ACT_ERRNO(EPERM);
  for (const char* name : kRefusedSyscalls) {
    int nr = seccomp_syscall_resolve_name(name);
    if (nr == __NR_SCMP_ERROR) continue;  // not a system call on this architecture
    if (seccomp_rule_add(ctx, refuse, nr, 0) != 0) return fail(std::string("seccomp: ") + name);
  }
  for (uint64_t flag : kNamespaceFlags) {
    if (seccomp_rule_add(ctx, refuse, SCMP_SYS(clone), 1,
                         SCMP_A0(SCMP_CMP_MASKED_EQ, flag, flag)) != 0) {
      return fail("seccomp: clone");
    }
  }
  // clone3 passes its flags in memory, out of a filter's reach: answer "not implemented", and
  // the C library falls back to clone, which the rules above check.
  if (seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0) != 0) {
    return fail("seccomp: clone3");
  }
  int fd = ::memfd_create("seccomp", MFD_CLOEXEC);
  if (fd < 0) return fail("memfd_create failed");
  if (seccomp_export_bpf(ctx, fd) != 0) {
    ::close(fd);
    return fail("seccomp_export_bpf failed");
  }
  seccomp_release(ctx);
  off_t size = ::lseek(fd, 0, SEEK_END);
  std::vector<sock_filter> program(static_cast<size_t>(size) / sizeof(sock_filter));
  ssize_t n = ::pread(fd, program.data(), program.size() * sizeof(sock_filter), 0);
  ::close(fd);
  if (size <= 0 || n != size) return Status::Internal("cannot read the seccomp program");
  return program;
}

const Result<std::vector<sock_filter>>& SeccompProgram() {
  static const Result<std::vector<sock_filter>> program = BuildSeccompProgram();
  return program;
}

// ---------------------------------------------------------------------------------------------
// The child. It is a copy of a multi-threaded process: until execve it may only make system
// calls (no allocation, no locks, no C library function that keeps state), and everything it
// needs was computed into the plan and the arrays below before the clone.

struct ChildArgs {
  const SandboxPlan* plan;
  const std::vector<const char*>* argv;
  const std::vector<const char*>* env;
  const sock_fprog* seccomp;
  int sync_read;  // one byte arrives once the uid and gid maps are written
  int error_write;
  int requests_read;
  int replies_write;
  int log_write;
};

// Reports "<step> (errno N)" on the error pipe and exits.
[[noreturn]] void ChildFail(const char* step) {
  int err = errno;
  char buf[256];
  size_t n = 0;
  for (const char* p = step; *p && n < 200; ++p) buf[n++] = *p;
  const char* mid = " (errno ";
  for (const char* p = mid; *p; ++p) buf[n++] = *p;
  char digits[12];
  int d = 0;
  do {
    digits[d++] = static_cast<char>('0' + err % 10);
    err /= 10;
  } while (err > 0 && d < 11);
  while (d > 0) buf[n++] = digits[--d];
  buf[n++] = ')';
  (void)!::write(kErrorFd, buf, n);
  ::_exit(127);
}

void ChildWriteFile(const char* path, const std::string& data, unsigned mode) {
  int fd = ::open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  if (fd < 0) ChildFail(path);
  if (!data.empty() && ::write(fd, data.data(), data.size()) != static_cast<ssize_t>(data.size())) {
    ChildFail(path);
  }
  ::close(fd);
}

// The flags a read-only remount must keep: those of the mount the bind came from, which an
// unprivileged remount may not clear.
unsigned long LockedFlags(const char* path) {
  struct statfs st;
  if (::syscall(SYS_statfs, path, &st) != 0) return 0;
  unsigned long flags = 0;
  if (st.f_flags & ST_NOSUID) flags |= MS_NOSUID;
  if (st.f_flags & ST_NODEV) flags |= MS_NODEV;
  if (st.f_flags & ST_NOEXEC) flags |= MS_NOEXEC;
  if (st.f_flags & ST_NOATIME) flags |= MS_NOATIME;
  if (st.f_flags & ST_NODIRATIME) flags |= MS_NODIRATIME;
  if (st.f_flags & ST_RELATIME) flags |= MS_RELATIME;
  return flags;
}

void ChildRunMountOp(const MountOp& op) {
  const char* target = op.target.c_str();
  switch (op.kind) {
    case MountOp::Kind::kMkdir:
      if (::mkdir(target, op.mode) != 0 && errno != EEXIST) ChildFail(target);
      break;
    case MountOp::Kind::kFile:
      ChildWriteFile(target, op.data, op.mode);
      break;
    case MountOp::Kind::kSymlink:
      if (::symlink(op.source.c_str(), target) != 0) ChildFail(target);
      break;
    case MountOp::Kind::kMount:
      if (::mount(op.source.c_str(), target, op.fstype.empty() ? nullptr : op.fstype.c_str(),
                  op.flags, op.data.empty() ? nullptr : op.data.c_str()) != 0 &&
          !op.optional) {
        ChildFail(target);
      }
      break;
    case MountOp::Kind::kBindReadOnly:
      // Recursive: a user namespace may not bind a mount without the mounts under it (that
      // would uncover what they hide). Those keep their own flags, and their files their owners.
      if (::mount(op.source.c_str(), target, nullptr, MS_BIND | MS_REC, nullptr) != 0) {
        ChildFail(target);
      }
      if (::mount(nullptr, target, nullptr,
                  MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV | op.flags |
                      LockedFlags(target),
                  nullptr) != 0) {
        ChildFail(target);
      }
      break;
  }
}

// A copy of fd at a number at or above 10, so the fixed numbers 0..5 are free to take.
int ChildRaise(int fd) {
  int high = ::fcntl(fd, F_DUPFD_CLOEXEC, 10);
  if (high < 0) ::_exit(127);  // before the error pipe is in place: the parent reports it
  return high;
}

[[noreturn]] void ChildMain(const ChildArgs& a) {
  // Every pipe out of the way of the numbers it will take, then the error pipe at its place,
  // so every later failure is reported.
  int error_fd = ChildRaise(a.error_write);
  int requests = ChildRaise(a.requests_read);
  int replies = ChildRaise(a.replies_write);
  int log = ChildRaise(a.log_write);
  int sync = ChildRaise(a.sync_read);
  if (::dup3(error_fd, kErrorFd, O_CLOEXEC) < 0) ::_exit(127);

  // Die with the executor thread that started us, and wait for our uid and gid maps.
  if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) ChildFail("PR_SET_PDEATHSIG");
  char byte;
  if (::read(sync, &byte, 1) != 1) ::_exit(127);  // the parent gave up on us

  // Become the namespace's root: files the build creates need an owner the namespace maps.
  if (::syscall(SYS_setresgid, 0, 0, 0) != 0) ChildFail("setresgid 0");
  if (::syscall(SYS_setresuid, 0, 0, 0) != 0) ChildFail("setresuid 0");

  const SandboxPlan& plan = *a.plan;
  // Build the new root in a staging tmpfs, with the host's root under /oldroot for the binds.
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_SLAVE, nullptr) != 0) ChildFail("make / slave");
  if (::mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=64k") != 0) {
    ChildFail("staging tmpfs");
  }
  if (::mkdir("/tmp/newroot", 0755) != 0 || ::mkdir("/tmp/oldroot", 0755) != 0) {
    ChildFail("staging directories");
  }
  if (::syscall(SYS_pivot_root, "/tmp", "/tmp/oldroot") != 0) ChildFail("pivot_root to staging");
  if (::chdir("/") != 0) ChildFail("chdir");
  if (::mount("tmpfs", kNewRoot, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=1m") != 0) {
    ChildFail("root tmpfs");
  }
  for (const MountOp& op : plan.mounts) ChildRunMountOp(op);
  // Enter the new root and drop the staging root, and the host's under it, entirely.
  if (::chdir(kNewRoot) != 0) ChildFail("chdir new root");
  if (::syscall(SYS_pivot_root, ".", ".") != 0) ChildFail("pivot_root to new root");
  if (::umount2(".", MNT_DETACH) != 0) ChildFail("detach old root");
  if (::chdir("/") != 0) ChildFail("chdir /");
  if (::mount(nullptr, "/", nullptr, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV, nullptr) != 0) {
    ChildFail("remount / read-only");
  }
  if (::sethostname(plan.hostname.data(), plan.hostname.size()) != 0) ChildFail("sethostname");

  // File descriptors: exactly 0 (/dev/null), 1 and 2 (the log), 3 and 4 (the protocol).
  int null_fd = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  if (null_fd < 0) ChildFail("/dev/null");
  if (::dup2(null_fd, 0) < 0 || ::dup2(log, 1) < 0 || ::dup2(log, 2) < 0 ||
      ::dup2(requests, 3) < 0 || ::dup2(replies, 4) < 0) {
    ChildFail("dup2");
  }
  if (::syscall(SYS_close_range, kErrorFd + 1, ~0U, 0) != 0) {
    struct rlimit nofile;
    ::getrlimit(RLIMIT_NOFILE, &nofile);
    rlim_t top = std::min<rlim_t>(nofile.rlim_cur, 1 << 16);
    for (rlim_t fd = kErrorFd + 1; fd < top; ++fd) ::close(static_cast<int>(fd));
  }

  // The unprivileged user; leaving the namespace's root clears every capability, and capset
  // below makes sure. Raw system calls throughout: the C library's set*id would try to
  // synchronise threads this copy of the process does not have.
  if (::syscall(SYS_setgroups, 0, nullptr) != 0) ChildFail("setgroups");
  if (::syscall(SYS_setresgid, kSandboxUid, kSandboxUid, kSandboxUid) != 0) ChildFail("setresgid");
  if (::syscall(SYS_setresuid, kSandboxUid, kSandboxUid, kSandboxUid) != 0) ChildFail("setresuid");
  // A uid change clears the parent-death signal.
  if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) ChildFail("PR_SET_PDEATHSIG");
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct no_caps[2] = {};
  if (::syscall(SYS_capset, &header, no_caps) != 0) ChildFail("capset");
  for (const auto& [resource, value] : plan.rlimits) {
    struct rlimit limit {
      value, value
    };
    if (::syscall(SYS_prlimit64, 0, resource, &limit, nullptr) != 0) ChildFail("setrlimit");
  }
  if (::chdir("/tmp") != 0) ChildFail("chdir /tmp");

  // Signals as a fresh process has them: the executor blocks some and ignores others.
  sigset_t none;
  sigemptyset(&none);
  if (::sigprocmask(SIG_SETMASK, &none, nullptr) != 0) ChildFail("sigprocmask");
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig) ::sigaction(sig, &dfl, nullptr);

  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) ChildFail("PR_SET_NO_NEW_PRIVS");
  if (::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, a.seccomp) != 0) ChildFail("seccomp");
  ::execve(a.argv->front(), const_cast<char* const*>(a.argv->data()),
           const_cast<char* const*>(a.env->data()));
  ChildFail("execve");
}

// ---------------------------------------------------------------------------------------------
// The parent.

struct Pipe {
  int read = -1;
  int write = -1;
  ~Pipe() {
    if (read >= 0) ::close(read);
    if (write >= 0) ::close(write);
  }
  bool Open() {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return false;
    read = fds[0];
    write = fds[1];
    return true;
  }
  int TakeRead() { return std::exchange(read, -1); }
  int TakeWrite() { return std::exchange(write, -1); }
};

bool WriteProcFile(pid_t pid, const char* name, const std::string& text) {
  std::string path = "/proc/" + std::to_string(pid) + "/" + name;
  int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ::close(fd);
  return ok;
}

void KillAndReap(pid_t pid) {
  ::kill(pid, SIGKILL);
  while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
  }
}

}  // namespace

SandboxedProcess::SandboxedProcess(SandboxedProcess&& other) noexcept {
  *this = std::move(other);
}

SandboxedProcess& SandboxedProcess::operator=(SandboxedProcess&& other) noexcept {
  if (this != &other) {
    this->~SandboxedProcess();
    pid = std::exchange(other.pid, -1);
    requests = std::exchange(other.requests, -1);
    replies = std::exchange(other.replies, -1);
    log = std::exchange(other.log, -1);
  }
  return *this;
}

SandboxedProcess::~SandboxedProcess() {
  for (int* fd : {&requests, &replies, &log}) {
    if (*fd >= 0) ::close(*fd);
    *fd = -1;
  }
}

Result<SandboxedProcess> SpawnSandboxed(const SandboxPlan& plan, const BeforeStart& before_start) {
  const auto& program = SeccompProgram();
  if (!program.ok()) return program.status();
  sock_fprog seccomp{static_cast<unsigned short>(program->size()),
                     const_cast<sock_filter*>(program->data())};
  std::vector<const char*> argv, env;
  for (const std::string& a : plan.argv) argv.push_back(a.c_str());
  argv.push_back(nullptr);
  for (const std::string& e : plan.env) env.push_back(e.c_str());
  env.push_back(nullptr);

  Pipe sync, error, requests, replies, log;
  if (!sync.Open() || !error.Open() || !requests.Open() || !replies.Open() || !log.Open()) {
    return Status::Internal(std::string("pipe: ") + std::strerror(errno));
  }
  // Room for a large event or result in one go.
  ::fcntl(requests.write, F_SETPIPE_SZ, 1 << 20);
  ::fcntl(replies.write, F_SETPIPE_SZ, 1 << 20);
  ChildArgs args{&plan,       &argv,         &env,          &seccomp, sync.read,
                 error.write, requests.read, replies.write, log.write};

  // A fork that lands in new namespaces; the child never returns from ChildMain.
  long pid = ::syscall(SYS_clone, static_cast<unsigned long>(plan.clone_flags) | SIGCHLD, nullptr,
                       nullptr, nullptr, 0);
  if (pid < 0) return Status::Internal(std::string("clone: ") + std::strerror(errno));
  if (pid == 0) ChildMain(args);

  ::close(sync.TakeRead());
  ::close(error.TakeWrite());
  ::close(requests.TakeRead());
  ::close(replies.TakeWrite());
  ::close(log.TakeWrite());
  auto child = static_cast<pid_t>(pid);
  if (!WriteProcFile(child, "uid_map", plan.uid_map) ||
      !WriteProcFile(child, "gid_map", plan.gid_map)) {
    std::string why = std::strerror(errno);
    KillAndReap(child);
    return Status::Internal("cannot write the sandbox's uid/gid map: " + why);
  }
  if (before_start) {
    Status placed = before_start(child);
    if (!placed.ok()) {
      KillAndReap(child);
      return Status::Internal("cannot place the sandbox: " + placed.message());
    }
  }
  char go = 1;
  if (::write(sync.write, &go, 1) != 1) {
    KillAndReap(child);
    return Status::Internal("cannot release the sandboxed child");
  }
  // The error pipe closes on execve (close-on-exec) or carries what failed.
  char message[512];
  ssize_t n;
  while ((n = ::read(error.read, message, sizeof message)) < 0 && errno == EINTR) {
  }
  if (n != 0) {
    KillAndReap(child);
    return Status::Internal("cannot set up the sandbox: " +
                            (n > 0 ? std::string(message, static_cast<size_t>(n))
                                   : std::string("no report from the child")));
  }

  SandboxedProcess process;
  process.pid = child;
  process.requests = requests.TakeWrite();
  process.replies = replies.TakeRead();
  process.log = log.TakeRead();
  ::fcntl(process.replies, F_SETFL, O_NONBLOCK);
  ::fcntl(process.log, F_SETFL, O_NONBLOCK);
  return process;
}

}  // namespace toolgate::executor
