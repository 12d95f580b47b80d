// Running a short-lived tool (a compiler's syntax check) with input, a deadline and, for code
// that comes from users, a sandbox. Internal to the registry library.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "toolgate/base/status.h"

namespace toolgate::registry {

struct ProcessOutput {
  int exit_code = 0;   // 128 + signal when killed by one
  std::string output;  // stdout and stderr interleaved, at most max_output bytes
};

// What confines a sandboxed child. The child always gets its own process group (killed whole at
// the deadline, and whatever it left behind when it exits), PR_SET_NO_NEW_PRIVS, no
// capabilities, and "/" as its working directory.
struct Sandbox {
  // Which rlimit caps the child's memory. kAddressSpace (RLIMIT_AS) is the tight one; runtimes
  // that reserve large address ranges they never touch (V8) cannot start under it and take
  // kData (RLIMIT_DATA: the private writable memory they actually use).
  enum class MemoryRlimit { kAddressSpace, kData };
  uint64_t memory_bytes = 0;  // 0: no memory limit
  MemoryRlimit memory_rlimit = MemoryRlimit::kAddressSpace;
  int cpu_seconds = 0;  // RLIMIT_CPU (SIGXCPU, then SIGKILL a second later); 0: none
  // When the caller runs as root, the child drops to this uid and gid (after setgroups(0)), so
  // that it holds no capabilities. Ignored for another caller, which has none to drop.
  uid_t uid = 65534;
  gid_t gid = 65534;
  // A new, empty network namespace when the kernel permits it (root, or unprivileged user
  // namespaces); without one the child keeps the host's network.
  bool no_network = true;
};

// Runs argv[0] (searched in PATH when it has no '/') with stdin reading `input`, an environment
// holding only PATH, and stdout+stderr captured. With a sandbox, the child is confined as the
// Sandbox describes; a child that cannot be confined (setuid refused, say) exits 127 before it
// runs anything. Returns NotFound when the program does not exist, Timeout (after killing its
// whole process group) when it runs past timeout_ms, Unavailable when it cannot be started.
// Thread-safe; never touches the caller's signal dispositions.
Result<ProcessOutput> RunProcess(const std::vector<std::string>& argv, std::string_view input,
                                 int timeout_ms, size_t max_output = 64 * 1024,
                                 const std::optional<Sandbox>& sandbox = std::nullopt);

}  // namespace toolgate::registry
