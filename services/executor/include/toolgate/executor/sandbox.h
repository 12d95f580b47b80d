// Sandbox: starting an untrusted program (a worker) in a box of its own.
//
// The process gets new user, PID, mount, IPC, UTS, network and cgroup namespaces: it sees no
// other process, no network interface but a loopback that is down (the executor's egress
// gateway brings it up to put its door there: egress_gateway.h), and a file system built for
// it: a read-only root holding only the system directories (bound read-only from the host), the
// runtime's files, /proc of its own PID namespace (where the container allows it), a minimal
// /dev, and a private /tmp of bounded size. The namespace's root (itself an unprivileged host
// uid) builds all that; the program then runs as uid/gid 1000 with no capabilities, mapped to
// another unprivileged host uid/gid, so even what leaks out of a namespace is unprivileged. On
// top: rlimits (address space or data, processes, open files, CPU seconds, no core dumps),
// no_new_privs, a seccomp filter refusing the calls a sandboxed program has no use for (ptrace,
// mount, namespaces, keyrings, BPF, io_uring, kernel modules...), no file descriptor but 0
// (/dev/null), 1 and 2 (the log), 3 and 4 (the protocol), and exactly the environment it is
// given. It is killed when the executor thread that started it dies.
//
// The executor must run as root (in its container) to map the sandboxes' host uids.
//
// No bubblewrap: the sandbox is this file, so the executor needs no helper binary wherever it is
// deployed (the GPU machines included), and a worker starts with one clone(2) and one execve(2).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "toolgate/base/status.h"

namespace toolgate::executor {

// The uid and gid a sandboxed program has inside its namespace.
constexpr uid_t kSandboxUid = 1000;

struct SandboxLimits {
  uint64_t address_space_bytes = 0;  // RLIMIT_AS; 0 leaves it unlimited (GPU drivers need that)
  uint64_t data_bytes = 0;           // RLIMIT_DATA; 0 leaves it unlimited
  uint64_t processes = 64;           // RLIMIT_NPROC, threads included
  uint64_t open_files = 256;         // RLIMIT_NOFILE
  uint64_t cpu_seconds = 3600;       // RLIMIT_CPU, over the process's whole life
  uint64_t tmp_bytes = 64 << 20;     // size of the private /tmp
};

struct SandboxSpec {
  // argv[0] is a path as the sandbox sees it; env ("NAME=value") is the whole environment.
  std::vector<std::string> argv;
  std::vector<std::string> env;
  // Host paths shown read-only at the same path. A host symlink is recreated as a symlink (so
  // /lib64 -> usr/lib64 keeps working); a path the host lacks is skipped.
  std::vector<std::string> system_paths = DefaultSystemPaths();
  // Host paths shown read-only elsewhere: {host path, sandbox path}.
  std::vector<std::pair<std::string, std::string>> read_only_binds;
  // Host directories shown read-only elsewhere with nothing in them executable (noexec): a
  // tool's bundle, which is data its interpreter reads. {host path, sandbox path}.
  std::vector<std::pair<std::string, std::string>> data_binds;
  // Directories of the system paths covered by an empty read-only tmpfs, so nothing in them
  // can be read, even by absolute path; those the host lacks are skipped.
  std::vector<std::string> hidden_paths = DefaultHiddenPaths();
  // Host device nodes shown read-write at the same path (GPU nodes); absent ones are skipped.
  std::vector<std::string> devices;
  // What kSandboxUid/gid is on the host. The namespace's root, which only builds the sandbox
  // before the program starts, is host_root_uid/gid. None may be 0, and the two must differ.
  uid_t host_uid = 0;
  gid_t host_gid = 0;
  uid_t host_root_uid = 0;
  gid_t host_root_gid = 0;
  SandboxLimits limits;

  // /usr, the /lib and /bin directories (or their symlinks) and the few files of /etc that
  // programs need to start (the dynamic loader's cache, time zone, Python's site configuration)
  // or to make TLS connections (/etc/ssl/certs, OpenSSL's configuration; never /etc/ssl/private).
  static std::vector<std::string> DefaultSystemPaths();
  // The host's package directories, which a sealed runtime must not see: Python's
  // dist-packages (Debian's and /usr/local's), node's global module directories, Lua's module
  // trees. A tool sees its runtime's standard library and its own bundle, nothing the host
  // happens to have installed.
  static std::vector<std::string> DefaultHiddenPaths();
};

// One step of building the sandbox's file system, run inside the new mount namespace. Paths
// are as the child sees them while building: host paths under /oldroot, the sandbox's root
// under /newroot.
struct MountOp {
  enum class Kind {
    kMkdir,         // target, mode
    kFile,          // target created holding data, mode
    kSymlink,       // target -> source
    kMount,         // mount(source, target, fstype, flags, data)
    kBindReadOnly,  // bind source (and the mounts under it) on target, then remount it
                    // read-only with flags added (keeping the host mount's
                    // nosuid/nodev/noexec, which a user namespace may not drop)
  };
  Kind kind;
  std::string source;
  std::string target;
  std::string fstype;
  unsigned long flags = 0;
  std::string data;
  unsigned mode = 0755;
  // A failure leaves the target empty instead of failing the sandbox: /proc, which a container
  // runtime that masks parts of the host's /proc does not let a user namespace mount.
  bool optional = false;
};

// Everything the child does, computed in the parent: the child of a multi-threaded process may
// not allocate, so it only walks this plan with raw system calls.
struct SandboxPlan {
  int clone_flags = 0;
  std::vector<MountOp> mounts;
  std::vector<std::pair<int, uint64_t>> rlimits;  // resource, soft = hard limit
  std::string uid_map;                            // "0 <host root uid> 1\n1000 <host uid> 1\n"
  std::string gid_map;
  std::string hostname = "sandbox";
  std::vector<std::string> argv;
  std::vector<std::string> env;
};

// The plan for spec. Looks at the host (lstat, readlink) to decide how each path is shown.
// InvalidArgument for an empty argv, a relative path, or host uid 0.
Result<SandboxPlan> BuildSandboxPlan(const SandboxSpec& spec);

// The executor's ends of a sandboxed process's pipes. Owns them (closed on destruction); does
// not own the process.
struct SandboxedProcess {
  pid_t pid = -1;     // in the executor's PID namespace; the sandbox's init
  int requests = -1;  // write end: the child's fd 3
  int replies = -1;   // read end: the child's fd 4, non-blocking
  int log = -1;       // read end: the child's fds 1 and 2, non-blocking

  SandboxedProcess() = default;
  SandboxedProcess(SandboxedProcess&& other) noexcept;
  SandboxedProcess& operator=(SandboxedProcess&& other) noexcept;
  ~SandboxedProcess();
};

// Called with the new process's pid before it runs anything of its own (it waits for its uid
// map): where the caller puts it into its cgroup, so that everything it ever starts is born
// there. A failure stops the spawn.
using BeforeStart = std::function<Status(pid_t)>;

// Starts plan's program. Returns once it has called execve: Internal with the failing step when
// the sandbox could not be set up or before_start failed (nothing is left running). The caller
// owns the process: kill and wait for it. Thread-safe.
Result<SandboxedProcess> SpawnSandboxed(const SandboxPlan& plan,
                                        const BeforeStart& before_start = {});

}  // namespace toolgate::executor
