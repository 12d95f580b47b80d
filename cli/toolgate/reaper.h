// Reaper: a small process that outlives a killed launcher just long enough to stop its children.
//
// Children get PR_SET_PDEATHSIG, but that is one signal: a child that hangs, or drains slowly
// because NATS died with the launcher, would linger on. The reaper is forked first, before any
// thread, and the launcher tells it over a pipe which children live ("+pid", "-pid"). When the
// pipe closes, however the launcher ended, the reaper sends SIGTERM to every child still listed,
// waits up to grace_ms, SIGKILLs the rest, and exits. After an orderly stop the list is empty
// and it exits at once. It ignores SIGINT, SIGTERM and SIGHUP (a Ctrl-C reaches the whole
// terminal group: the launcher stops the children itself). A pid is signalled only while it
// still has the start time it had when listed, so a pid reused by another process is left alone.
//
// Not thread-safe: the launcher's main thread (the supervisor) calls Adopted and Released.
#pragma once

#include <sys/types.h>

#include <memory>

#include "toolgate/base/status.h"

namespace toolgate::cli {

class Reaper {
 public:
  // Forks the reaper. Call before any thread starts (the child runs code, not exec).
  static Result<std::unique_ptr<Reaper>> Start(int grace_ms);
  // Closes the pipe: the reaper stops what is still listed and exits.
  ~Reaper();
  Reaper(const Reaper&) = delete;
  Reaper& operator=(const Reaper&) = delete;

  void Adopted(pid_t child);   // a child was started
  void Released(pid_t child);  // a child was reaped (waitpid returned it)
  pid_t pid() const { return pid_; }

 private:
  Reaper(int fd, pid_t pid) : fd_(fd), pid_(pid) {}
  void Send(char op, pid_t child);
  int fd_;
  pid_t pid_;
};

}  // namespace toolgate::cli
