#include "supervisor.h"

#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <thread>

#include "toolgate/base/log.h"
#include "toolgate/base/time.h"

namespace toolgate::cli {

Status Supervisor::Start(ChildSpec spec) {
  std::string name = spec.name;
  Child& child = children_[name];
  child.spec = std::move(spec);
  return Spawn(child);
}

Status Supervisor::Spawn(Child& child) {
  const ChildSpec& spec = child.spec;
  int log_fd = ::open(spec.log_file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640);
  if (log_fd < 0) return Status::Internal("cannot open " + spec.log_file + ": " + strerror(errno));
  if (spec.uid != 0 && ::fchown(log_fd, spec.uid, spec.gid) != 0) {
    ::close(log_fd);
    return Status::Internal("cannot chown " + spec.log_file);
  }
  int in_fd =
      ::open(spec.stdin_file.empty() ? "/dev/null" : spec.stdin_file.c_str(), O_RDONLY | O_CLOEXEC);
  if (in_fd < 0) {
    ::close(log_fd);
    return Status::Internal("cannot open " + spec.stdin_file + ": " + strerror(errno));
  }
  std::vector<char*> argv;
  for (const auto& a : spec.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  // The environment is built before fork: between fork and exec only async-signal-safe calls.
  std::vector<char*> envp;
  for (const auto& e : spec.env) envp.push_back(const_cast<char*>(e.c_str()));
  for (char** e = environ; *e; ++e) envp.push_back(*e);
  envp.push_back(nullptr);
  pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid < 0) {
    ::close(log_fd);
    ::close(in_fd);
    return Status::Internal(std::string("fork: ") + strerror(errno));
  }
  if (pid == 0) {
    // Child: only async-signal-safe work until exec.
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::signal(SIGPIPE, SIG_DFL);
    ::dup2(log_fd, STDOUT_FILENO);
    ::dup2(log_fd, STDERR_FILENO);
    ::dup2(in_fd, STDIN_FILENO);
    if (spec.uid != 0) {
      if (::setgroups(0, nullptr) != 0 || ::setgid(spec.gid) != 0 || ::setuid(spec.uid) != 0) {
        ::_exit(126);
      }
    }
    // After the user change, which clears the parent-death signal: set earlier, a PostgreSQL
    // started as `postgres` would outlive a killed launcher. The child's own stop signal, so a
    // dying launcher stops PostgreSQL the fast way (SIGINT) like an orderly stop does.
    ::prctl(PR_SET_PDEATHSIG, spec.stop_signal);
    if (::getppid() != parent) ::_exit(1);
    ::execve(argv[0], argv.data(), envp.data());
    ::_exit(127);
  }
  ::close(log_fd);
  ::close(in_fd);
  child.pid = pid;
  child.started_ms = NowMs();
  if (reaper_) reaper_->Adopted(pid);
  log::Info("started").Str("child", spec.name).Int("pid", pid);
  if (on_started_) on_started_(spec.name, pid);
  return Status::Ok();
}

void Supervisor::Poll() {
  for (;;) {
    int status = 0;
    pid_t pid = ::waitpid(-1, &status, WNOHANG);
    if (pid <= 0) break;
    if (reaper_) reaper_->Released(pid);
    for (auto& [name, child] : children_) {
      if (child.pid != pid) continue;
      child.pid = -1;
      if (stopping_) break;
      if (starting_) {
        // Not restarted: the launcher reports it and stops (see the header).
        child.restart_at_ms = INT64_MAX;
        if (!first_exit_) first_exit_ = Exit{name, child.spec.log_file, status};
        log::Warn("child exited during start-up")
            .Str("child", name)
            .Int("status", WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status));
        break;
      }
      int64_t now = NowMs();
      if (now - child.started_ms > 30000) child.backoff_ms = 100;
      child.restart_at_ms = now + child.backoff_ms;
      log::Warn("child exited; restarting")
          .Str("child", name)
          .Int("status", WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status))
          .Int("restart_in_ms", child.backoff_ms);
      child.backoff_ms = std::min<int64_t>(child.backoff_ms * 2, 5000);
      break;
    }
  }
  if (stopping_) return;
  int64_t now = NowMs();
  for (auto& [name, child] : children_) {
    if (child.pid == -1 && child.restart_at_ms <= now) {
      Status s = Spawn(child);
      if (!s.ok()) {
        log::Error("restart failed").Str("child", name).Str("error", s.ToString());
        child.restart_at_ms = now + 1000;
      }
    }
  }
}

void Supervisor::Stop(const std::vector<std::string>& order, int grace_ms) {
  stopping_ = true;
  for (const auto& name : order) {
    auto it = children_.find(name);
    if (it == children_.end() || it->second.pid <= 0) continue;
    Child& child = it->second;
    ::kill(child.pid, child.spec.stop_signal);
    int64_t deadline = NowMs() + grace_ms;
    for (;;) {
      int status;
      pid_t r = ::waitpid(child.pid, &status, WNOHANG);
      if (r == child.pid || (r < 0 && errno == ECHILD)) break;
      if (NowMs() > deadline) {
        log::Warn("child did not stop in time; killing").Str("child", name);
        ::kill(child.pid, SIGKILL);
        ::waitpid(child.pid, &status, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));  // polling a child's exit
    }
    log::Info("stopped").Str("child", name);
    if (reaper_) reaper_->Released(child.pid);
    child.pid = -1;
  }
}

pid_t Supervisor::pid(const std::string& name) const {
  auto it = children_.find(name);
  return it == children_.end() ? -1 : it->second.pid;
}

std::map<std::string, pid_t> Supervisor::pids() const {
  std::map<std::string, pid_t> out;
  for (const auto& [name, child] : children_) out[name] = child.pid;
  return out;
}

}  // namespace toolgate::cli
