// Supervisor: starts child processes, restarts the ones that die, and stops them in order.
//
// Each child's stdout and stderr go to its own log file. While the system starts, a child that
// exits is not restarted but recorded (first_exit()): a service that cannot start fails the same
// way every time, and the launcher reports why and gives up instead of looping. After
// StartupDone(), a child that exits unexpectedly is restarted with a backoff (100 ms doubling to 5
// s, reset after 30 s of healthy running). Children get PR_SET_PDEATHSIG (their stop signal), set
// after the user change that would clear it, so that they never outlive a killed launcher. Not
// thread-safe: one thread owns the supervisor (the launcher's main thread).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "reaper.h"
#include "toolgate/base/status.h"

namespace toolgate::cli {

struct ChildSpec {
  std::string name;                       // "redis", "auth", ...
  std::vector<std::string> argv;          // argv[0] is the executable path
  std::vector<std::string> env;           // "NAME=value" added to the launcher's environment
  std::string log_file;
  uid_t uid = 0;                          // run as this user when the launcher is root (0: same)
  gid_t gid = 0;
  int stop_signal = 15;                   // SIGTERM; PostgreSQL wants SIGINT (fast shutdown)
  // Read as stdin, opened by the launcher before the user change, so it may be a file only the
  // launcher can read (a password). Empty: /dev/null.
  std::string stdin_file;
};

class Supervisor {
 public:
  // Called after a child was (re)started, with its new pid.
  using StartedCallback = std::function<void(const std::string& name, pid_t pid)>;

  // reaper, when given, hears of every child started and reaped, and must outlive this.
  explicit Supervisor(StartedCallback on_started, Reaper* reaper = nullptr)
      : on_started_(std::move(on_started)), reaper_(reaper) {}

  // Starts a child and supervises it from now on.
  Status Start(ChildSpec spec);
  // Reaps exited children and restarts them when due. Call regularly.
  void Poll();
  // Stops the named children in the given order: signal, wait up to grace_ms, then SIGKILL.
  void Stop(const std::vector<std::string>& order, int grace_ms);
  pid_t pid(const std::string& name) const;
  std::map<std::string, pid_t> pids() const;

  // A child that exited before StartupDone(), with its wait status.
  struct Exit {
    std::string name;
    std::string log_file;
    int status = 0;
  };
  // The first child that exited during start-up; nullopt while none has (Poll reaps).
  const std::optional<Exit>& first_exit() const { return first_exit_; }
  // From now on, children that exit are restarted.
  void StartupDone() { starting_ = false; }

 private:
  struct Child {
    ChildSpec spec;
    pid_t pid = -1;
    int64_t started_ms = 0;
    int64_t restart_at_ms = 0;   // when pid == -1: when to start again
    int64_t backoff_ms = 100;
  };
  Status Spawn(Child& child);
  StartedCallback on_started_;
  Reaper* reaper_;
  std::map<std::string, Child> children_;
  bool stopping_ = false;
  bool starting_ = true;
  std::optional<Exit> first_exit_;
};

}  // namespace toolgate::cli
