#include "toolgate/registry/syntax_check.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <lua.hpp>
#include <memory>
#include <optional>
#include <string>

#include "subprocess.h"
#include "toolgate/base/strings.h"

namespace toolgate::registry {
namespace {

void ReplaceAll(std::string& s, std::string_view from, std::string_view to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) {
    s.replace(at, from.size(), to);
  }
}

// Node's report, minus what only concerns node itself: the stack of its own loader and the
// "Node.js vX" trailer, and blank lines. What is left is the location, the offending line with a
// caret, and the error.
std::string CleanNodeMessage(std::string output, const std::string& path) {
  ReplaceAll(output, path, "handler.js");
  std::string kept;
  size_t start = 0;
  while (start < output.size()) {
    size_t end = output.find('\n', start);
    if (end == std::string::npos) end = output.size();
    std::string_view line(output.data() + start, end - start);
    start = end + 1;
    if (line.empty() || line.rfind("    at ", 0) == 0 || line.rfind("Node.js v", 0) == 0) {
      continue;
    }
    kept.append(line).push_back('\n');
  }
  return std::string(TrimRight(kept, "\n\r "));
}

// A private directory holding one file, removed with it. When the check runs as another user
// (the registry runs as root), both belong to that user, so that it can read the file and no
// one else can; $TMPDIR (default /tmp) must then let that user through. The file is handed over
// before its directory, so no one else can swap it meanwhile.
class TempFile {
 public:
  static Result<std::unique_ptr<TempFile>> Create(std::string_view name, std::string_view data,
                                                  const SyntaxCheckLimits& limits) {
    const char* tmp = std::getenv("TMPDIR");
    std::string dir = std::string(tmp && *tmp ? tmp : "/tmp") + "/toolgate-check-XXXXXX";
    if (mkdtemp(dir.data()) == nullptr) return Status::Unavailable("cannot create a temp dir");
    std::unique_ptr<TempFile> f(new TempFile(dir, dir + "/" + std::string(name)));
    std::ofstream out(f->path_, std::ios::binary);
    out.write(data.data(), static_cast<std::streamsize>(data.size()));
    if (!out.flush()) return Status::Unavailable("cannot write " + f->path_);
    if (geteuid() == 0 && (chown(f->path_.c_str(), limits.uid, limits.gid) != 0 ||
                           chown(dir.c_str(), limits.uid, limits.gid) != 0)) {
      return Status::Unavailable("cannot hand " + f->path_ + " to the check's user");
    }
    return f;
  }
  ~TempFile() {
    unlink(path_.c_str());
    rmdir(dir_.c_str());
  }
  const std::string& path() const { return path_; }

 private:
  TempFile(std::string dir, std::string path) : dir_(std::move(dir)), path_(std::move(path)) {}
  std::string dir_;
  std::string path_;
};

Sandbox SandboxFor(const SyntaxCheckLimits& limits, Sandbox::MemoryRlimit memory_rlimit) {
  Sandbox s;
  s.memory_bytes = static_cast<uint64_t>(limits.memory_mb) << 20;
  s.memory_rlimit = memory_rlimit;
  s.cpu_seconds = (limits.timeout_ms + 999) / 1000;
  s.uid = limits.uid;
  s.gid = limits.gid;
  return s;
}

// How a confined interpreter that ran out of room ends: killed by SIGXCPU past its CPU time,
// otherwise by a signal of its own (abort on a failed allocation, a segmentation fault where
// the stack could not grow under the address-space limit) or by the kernel's SIGKILL.
std::optional<Status> LimitExceeded(int exit_code, const SyntaxCheckLimits& limits) {
  if (exit_code == 128 + SIGXCPU) return Status::InvalidArgument(TimeLimitMessage(limits));
  if (exit_code > 128) return Status::InvalidArgument(MemoryLimitMessage(limits));
  return std::nullopt;
}

// A Lua allocator that refuses to hold more than cap bytes at once.
struct CappedAllocator {
  size_t cap = 0;
  size_t used = 0;

  static void* Allocate(void* self, void* ptr, size_t old_size, size_t new_size) {
    auto* a = static_cast<CappedAllocator*>(self);
    if (ptr == nullptr) old_size = 0;  // then old_size encodes the kind of object instead
    if (new_size == 0) {
      std::free(ptr);
      a->used -= old_size;
      return nullptr;
    }
    if (new_size > old_size && a->used - old_size + new_size > a->cap) return nullptr;
    void* grown = std::realloc(ptr, new_size);
    if (grown != nullptr) a->used = a->used - old_size + new_size;
    return grown;
  }
};

}  // namespace

std::string MemoryLimitMessage(const SyntaxCheckLimits& limits) {
  return "the syntax check exceeded its memory limit of " + std::to_string(limits.memory_mb) +
         " MB";
}

std::string TimeLimitMessage(const SyntaxCheckLimits& limits) {
  std::string limit = limits.timeout_ms % 1000 == 0
                          ? std::to_string(limits.timeout_ms / 1000) + " s"
                          : std::to_string(limits.timeout_ms) + " ms";
  return "the syntax check exceeded its time limit of " + limit;
}

Status CheckLuaSyntax(std::string_view code, const SyntaxCheckLimits& limits) {
  CappedAllocator allocator;
  allocator.cap = static_cast<size_t>(limits.memory_mb) << 20;
  std::unique_ptr<lua_State, decltype(&lua_close)> L(
      lua_newstate(&CappedAllocator::Allocate, &allocator), lua_close);
  if (!L) return Status::InvalidArgument(MemoryLimitMessage(limits));
  int rc = luaL_loadbufferx(L.get(), code.data(), code.size(), "=handler", "t");
  if (rc == LUA_OK) return Status::Ok();
  if (rc == LUA_ERRMEM) return Status::InvalidArgument(MemoryLimitMessage(limits));
  const char* msg = lua_tostring(L.get(), -1);
  return Status::InvalidArgument(msg ? msg : "does not compile");
}

Status CheckPythonSyntax(std::string_view code, const SyntaxCheckLimits& limits) {
  // -I -S: isolated, no site packages; the script only parses. Exit 1: the code does not
  // compile (message on stdout); 3: out of memory. CPython's parser also raises a bare
  // MemoryError for code nested too deeply to parse, long before the limit: the peak resident
  // size (argv[1], in KiB) tells the two apart.
  static const std::string kScript =
      "import ast, resource, sys\n"
      "try:\n"
      "    ast.parse(sys.stdin.buffer.read(), 'handler.py')\n"
      "except SyntaxError as e:\n"
      "    print(f'handler.py:{e.lineno}:{e.offset}: {e.msg}')\n"
      "    sys.exit(1)\n"
      "except (ValueError, RecursionError) as e:\n"
      "    print(f'handler.py: {e}')\n"
      "    sys.exit(1)\n"
      "except MemoryError:\n"
      "    if resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 4 < int(sys.argv[1]):\n"
      "        print('handler.py: the code is nested too deeply to parse')\n"
      "        sys.exit(1)\n"
      "    sys.exit(3)\n";
  const std::string limit_kib = std::to_string(int64_t{limits.memory_mb} * 1024);
  auto out = RunProcess({"/usr/bin/python3", "-I", "-S", "-c", kScript, limit_kib}, code,
                        limits.timeout_ms, 64 * 1024,
                        SandboxFor(limits, Sandbox::MemoryRlimit::kAddressSpace));
  if (out.status().code() == Status::Code::kTimeout) {
    return Status::InvalidArgument(TimeLimitMessage(limits));
  }
  if (!out.ok()) return out.status();
  if (out->exit_code == 0) return Status::Ok();
  if (out->exit_code == 1 && out->output.rfind("handler.py", 0) == 0) {
    return Status::InvalidArgument(std::string(TrimRight(out->output, "\n\r ")));
  }
  // Exit 1 without our message is an exception the script did not catch: under the limit, a
  // MemoryError while the interpreter itself starts.
  if (out->exit_code == 3 ||
      (out->exit_code == 1 && out->output.find("MemoryError") != std::string::npos)) {
    return Status::InvalidArgument(MemoryLimitMessage(limits));
  }
  if (auto exceeded = LimitExceeded(out->exit_code, limits)) return *exceeded;
  return Status::Unavailable("python3 syntax check exited with " + std::to_string(out->exit_code) +
                             ": " + std::string(TrimRight(out->output.substr(0, 500), "\n\r ")));
}

Status CheckJavaScriptSyntax(std::string_view code, const SyntaxCheckLimits& limits) {
  // .cjs: node parses it as a CommonJS script whatever package.json lies above the temp dir.
  auto file = TempFile::Create("handler.cjs", code, limits);
  if (!file.ok()) return file.status();
  // V8 reserves far more address space than it uses, so node is capped by RLIMIT_DATA, and its
  // heap by V8's own limit, half of it, so that V8 stops with its own error before malloc fails.
  const std::string heap =
      "--max-old-space-size=" + std::to_string(std::max(limits.memory_mb / 2, 8));
  auto out = RunProcess({"node", heap, "--check", (*file)->path()}, "", limits.timeout_ms,
                        64 * 1024, SandboxFor(limits, Sandbox::MemoryRlimit::kData));
  if (out.status().code() == Status::Code::kTimeout) {
    return Status::InvalidArgument(TimeLimitMessage(limits));
  }
  if (!out.ok()) return out.status();
  if (out->exit_code == 0) return Status::Ok();
  if (out->exit_code == 1) {
    return Status::InvalidArgument(CleanNodeMessage(std::move(out->output), (*file)->path()));
  }
  if (auto exceeded = LimitExceeded(out->exit_code, limits)) return *exceeded;
  return Status::Unavailable("node --check exited with " + std::to_string(out->exit_code) + ": " +
                             std::string(TrimRight(out->output.substr(0, 500), "\n\r ")));
}

Status CheckSyntax(std::string_view runtime, std::string_view code,
                   const SyntaxCheckLimits& limits) {
  if (runtime == "lua") return CheckLuaSyntax(code, limits);
  if (runtime == "python") return CheckPythonSyntax(code, limits);
  if (runtime == "javascript") return CheckJavaScriptSyntax(code, limits);
  return Status::InvalidArgument("unknown runtime " + std::string(runtime));
}

SyntaxCheckTurns::SyntaxCheckTurns(size_t at_once, size_t max_waiting, int max_wait_ms,
                                   SyntaxChecker check)
    : max_wait_ms_(max_wait_ms),
      check_(std::move(check)),
      free_turns_(at_once),
      max_waiting_(max_waiting) {}

Status SyntaxCheckTurns::Check(std::string_view runtime, std::string_view code) {
  {
    std::unique_lock<std::mutex> lock(mu_);
    if (free_turns_ == 0 && waiting_ >= max_waiting_) {
      return Status::Timeout("every syntax check turn is busy and " + std::to_string(waiting_) +
                             " publishes already wait for one");
    }
    ++waiting_;
    const bool turn = freed_.wait_for(lock, std::chrono::milliseconds(max_wait_ms_),
                                      [this] { return free_turns_ > 0; });
    --waiting_;
    if (!turn) {
      return Status::Timeout("every syntax check turn stayed busy for " +
                             std::to_string(max_wait_ms_) + " ms");
    }
    --free_turns_;
  }
  Status result = check_(runtime, code);
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++free_turns_;
  }
  freed_.notify_one();
  return result;
}

}  // namespace toolgate::registry
