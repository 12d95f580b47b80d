#include "stale.h"

#include <signal.h>

#include <charconv>
#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include "toolgate/base/log.h"
#include "toolgate/base/time.h"

namespace fs = std::filesystem;

namespace toolgate::cli {
namespace {

std::string ReadSmall(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Live and not a zombie: a killed server whose parent has not reaped it yet holds nothing.
bool Alive(pid_t pid) {
  std::string stat = ReadSmall("/proc/" + std::to_string(pid) + "/stat");
  size_t paren = stat.rfind(')');
  if (paren == std::string::npos || paren + 2 >= stat.size()) return false;
  return stat[paren + 2] != 'Z';
}

// /proc/<pid>/cmdline or environ, NUL-separated, or the working directory.
bool Mentions(pid_t pid, const std::string& dir) {
  const std::string proc = "/proc/" + std::to_string(pid);
  for (const char* file : {"/cmdline", "/environ"}) {
    if (ReadSmall(proc + file).find(dir) != std::string::npos) return true;
  }
  std::error_code ec;
  fs::path cwd = fs::read_symlink(proc + "/cwd", ec);
  return !ec && cwd.string().rfind(dir, 0) == 0;
}

}  // namespace

std::optional<PidFile> ParsePidFile(std::string_view text) {
  size_t eol = text.find('\n');
  std::string_view first = text.substr(0, eol);
  while (!first.empty() && (first.back() == ' ' || first.back() == '\r')) first.remove_suffix(1);
  PidFile out;
  auto [end, ec] = std::from_chars(first.data(), first.data() + first.size(), out.pid);
  if (ec != std::errc() || end != first.data() + first.size() || out.pid <= 0) return std::nullopt;
  if (eol != std::string_view::npos) {
    std::string_view rest = text.substr(eol + 1);
    out.second_line = std::string(rest.substr(0, rest.find('\n')));
  }
  return out;
}

bool RunsProgram(pid_t pid, std::string_view program, const std::string& dir) {
  if (pid <= 0 || !Alive(pid)) return false;
  std::string comm = ReadSmall("/proc/" + std::to_string(pid) + "/comm");
  // comm is cut at 15 characters ("toolgate-regist"), so compare no further.
  std::string_view want = program.substr(0, 15);
  if (std::string_view(comm).substr(0, want.size()) != want) return false;
  return dir.empty() || Mentions(pid, dir);
}

Result<bool> StopStale(pid_t pid, std::string_view program, const std::string& dir, int sig,
                       int grace_ms) {
  if (!RunsProgram(pid, program, dir)) return false;
  log::Warn("stopping a server left running by an earlier launcher")
      .Str("program", std::string(program))
      .Int("pid", pid);
  ::kill(pid, sig);
  int64_t deadline = NowMs() + grace_ms;
  bool killed = false;
  while (Alive(pid)) {
    if (NowMs() > deadline) {
      if (killed)
        return Status::Internal(std::string(program) + " (pid " + std::to_string(pid) +
                                ") does not die");
      ::kill(pid, SIGKILL);
      killed = true;
      deadline = NowMs() + 5000;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // not our child: cannot wait
  }
  return true;
}

Result<bool> StopStaleFromPidFile(const fs::path& pid_file, std::string_view program,
                                  const std::string& dir, int sig, int grace_ms) {
  std::error_code ec;
  if (!fs::exists(pid_file, ec)) return false;
  auto parsed = ParsePidFile(ReadSmall(pid_file));
  Result<bool> stopped = false;
  if (parsed) stopped = StopStale(parsed->pid, program, dir, sig, grace_ms);
  if (!stopped.ok()) return stopped;
  // A server stopped the fast way removes its own file; one killed, or a pid since reused by
  // another program, leaves it behind.
  if (!parsed || !RunsProgram(parsed->pid, program, dir)) fs::remove(pid_file, ec);
  return stopped;
}

}  // namespace toolgate::cli
