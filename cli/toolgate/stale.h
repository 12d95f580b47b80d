// Servers left behind by a launcher that was killed: before `toolgate up` starts NATS, Redis or
// PostgreSQL on a data directory, it stops whatever an earlier launcher left running there, so
// the new server never finds its data directory, AOF or port held.
//
// A pid is only ever signalled when /proc says it still runs the expected program on this data
// directory (its command line, environment or working directory names the directory), so a pid
// that the kernel has since given to another process, or to the same server of another
// instance on this machine, is left alone. Not thread-safe
// (signals and waits); the launcher's main thread calls it before starting children.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "toolgate/base/status.h"

namespace toolgate::cli {

// A pid file's first line, and its second when present (PostgreSQL's postmaster.pid names the
// data directory there). nullopt when the first line is not a positive pid.
struct PidFile {
  pid_t pid = 0;
  std::string second_line;
};
std::optional<PidFile> ParsePidFile(std::string_view text);

// Whether pid is a live (not zombie) process whose /proc/<pid>/comm starts with program and,
// when dir is not empty, whose command line, environment or working directory mentions dir.
bool RunsProgram(pid_t pid, std::string_view program, const std::string& dir = {});

// Stops pid when it runs program on dir (as RunsProgram): sends sig, waits up to grace_ms for it
// to go, then SIGKILL. Returns true when such a process was found (and is now gone); Internal
// when it would not die.
Result<bool> StopStale(pid_t pid, std::string_view program, const std::string& dir, int sig,
                       int grace_ms);

// StopStale for the pid named in pid_file, then removes the file when no live process of
// program holds it (a stale file whose pid was reused would otherwise make PostgreSQL refuse to
// start). A missing file is nothing to do.
Result<bool> StopStaleFromPidFile(const std::filesystem::path& pid_file, std::string_view program,
                                  const std::string& dir, int sig, int grace_ms);

}  // namespace toolgate::cli
