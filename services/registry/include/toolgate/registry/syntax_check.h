// Syntax checks for handler code at publish time: the code is compiled, never run.
//
// The code comes from users, so every check is confined: Python and JavaScript run in a child
// process as an unprivileged user, without network, with memory, CPU and wall-time limits, its
// whole process group killed at the time limit; Lua parses in-process on a lua_State whose
// allocator refuses memory past the limit. SyntaxCheckTurns bounds how many run at once.
//
// Each check returns OK when the code compiles; InvalidArgument whose message is the compiler's
// (e.g. "handler:3: 'end' expected near <eof>") or says which limit the check exceeded ("the
// syntax check exceeded its memory limit of 256 MB"); NotFound when the runtime's toolchain is
// not installed on this server; Unavailable when the check itself could not run. Thread-safe.
// Python and JavaScript checks start a process (tens of milliseconds): publishing is not a hot
// path.
#pragma once

#include <sys/types.h>

#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>

#include "toolgate/base/status.h"

namespace toolgate::registry {

struct SyntaxCheckLimits {
  // What one check may use, interpreter and code included: RLIMIT_AS for Python, RLIMIT_DATA
  // (and a V8 heap of half of it) for node, the allocator's cap for Lua.
  int memory_mb = 256;
  // Wall time of a Python or JavaScript check; CPU time is capped at the same, in whole seconds
  // rounded up. A Lua parse is linear in the code's size (1 MiB at most) and is not timed.
  int timeout_ms = 10'000;
  // The user a check's process runs as when the registry runs as root.
  uid_t uid = 65534;
  gid_t gid = 65534;
};

// The messages of a check that exceeded a limit.
std::string MemoryLimitMessage(const SyntaxCheckLimits& limits);
std::string TimeLimitMessage(const SyntaxCheckLimits& limits);

// luaL_loadbufferx on a fresh capped lua_State, text chunks only; the chunk is named "handler".
Status CheckLuaSyntax(std::string_view code, const SyntaxCheckLimits& limits = {});
// /usr/bin/python3 parses the code with ast.parse; messages read "handler.py:LINE:COL: msg".
Status CheckPythonSyntax(std::string_view code, const SyntaxCheckLimits& limits = {});
// node --check on a temporary copy; messages name the file handler.js.
Status CheckJavaScriptSyntax(std::string_view code, const SyntaxCheckLimits& limits = {});

// Dispatches on runtime ("lua", "python", "javascript"); InvalidArgument for another runtime.
Status CheckSyntax(std::string_view runtime, std::string_view code,
                   const SyntaxCheckLimits& limits = {});

// The check a publish request runs, replaceable in tests. Besides the statuses above, Timeout
// means that no turn came to check the code (see SyntaxCheckTurns): the caller may retry.
using SyntaxChecker = std::function<Status(std::string_view runtime, std::string_view code)>;

// Runs `check` for at most `at_once` callers at a time (a counting semaphore), so that
// concurrent publishes cannot together take more than at_once times a check's memory. A caller
// that waits longer than max_wait_ms for a turn gets Timeout without running the check, and so
// does one that finds max_waiting callers already waiting: a waiting caller holds one of the
// service's worker threads, which invocations need too. Thread-safe; `check` must be
// thread-safe too.
class SyntaxCheckTurns {
 public:
  SyntaxCheckTurns(size_t at_once, size_t max_waiting, int max_wait_ms, SyntaxChecker check);
  SyntaxCheckTurns(const SyntaxCheckTurns&) = delete;
  SyntaxCheckTurns& operator=(const SyntaxCheckTurns&) = delete;

  Status Check(std::string_view runtime, std::string_view code);

 private:
  const int max_wait_ms_;
  const SyntaxChecker check_;
  std::mutex mu_;
  std::condition_variable freed_;  // guarded by mu_: a turn was given back
  size_t free_turns_;              // guarded by mu_
  const size_t max_waiting_;
  size_t waiting_ = 0;  // guarded by mu_
};

}  // namespace toolgate::registry
