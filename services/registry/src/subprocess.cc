#include "subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "toolgate/base/time.h"

namespace toolgate::registry {
namespace {

// Closes a descriptor when it goes out of scope.
class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  ~Fd() { Reset(); }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  void Reset() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }

 private:
  int fd_;
};

// The input lives in an anonymous in-memory file rather than a pipe: the child reads it at its
// own pace and the parent never blocks on (or takes SIGPIPE from) a child that stops reading.
Result<int> InputFile(std::string_view input) {
  int fd = memfd_create("toolgate-input", MFD_CLOEXEC);
  if (fd < 0) return Status::Unavailable(std::string("memfd_create: ") + std::strerror(errno));
  size_t done = 0;
  while (done < input.size()) {
    ssize_t n = write(fd, input.data() + done, input.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      close(fd);
      return Status::Unavailable(std::string("write input: ") + std::strerror(errno));
    }
    done += static_cast<size_t>(n);
  }
  lseek(fd, 0, SEEK_SET);
  return fd;
}

int ExitCode(int wstatus) {
  if (WIFEXITED(wstatus)) return WEXITSTATUS(wstatus);
  if (WIFSIGNALED(wstatus)) return 128 + WTERMSIG(wstatus);
  return -1;
}

}  // namespace

Result<ProcessOutput> RunProcess(const std::vector<std::string>& argv, std::string_view input,
                                 int timeout_ms, size_t max_output) {
  auto in = InputFile(input);
  if (!in.ok()) return in.status();
  Fd input_fd(*in);
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) {
    return Status::Unavailable(std::string("pipe: ") + std::strerror(errno));
  }
  Fd read_end(pipe_fds[0]), write_end(pipe_fds[1]);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, input_fd.get(), STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, write_end.get(), STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, write_end.get(), STDERR_FILENO);
  // The child starts with default signal handling and nothing blocked, whatever the service
  // blocked for its own shutdown handling.
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);

  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  char path_env[] = "PATH=/usr/local/bin:/usr/bin:/bin";
  char* envp[] = {path_env, nullptr};

  pid_t pid = 0;
  int rc = argv[0].find('/') == std::string::npos
               ? posix_spawnp(&pid, args[0], &actions, &attr, args.data(), envp)
               : posix_spawn(&pid, args[0], &actions, &attr, args.data(), envp);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc == ENOENT) return Status::NotFound(argv[0] + " is not installed");
  if (rc != 0) return Status::Unavailable("spawn " + argv[0] + ": " + std::strerror(rc));
  write_end.Reset();  // so that read() sees end-of-file when the child exits
  input_fd.Reset();

  ProcessOutput out;
  const int64_t deadline_us = MonotonicUs() + int64_t{timeout_ms} * 1000;
  bool timed_out = false;
  char buf[4096];
  for (;;) {
    int64_t left_ms = (deadline_us - MonotonicUs()) / 1000;
    if (left_ms <= 0) {
      timed_out = true;
      break;
    }
    pollfd p{read_end.get(), POLLIN, 0};
    int ready = poll(&p, 1, static_cast<int>(left_ms));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;  // the deadline is checked at the top
    ssize_t n = read(read_end.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // end of file: the child closed its output (normally by exiting)
    size_t keep =
        std::min(static_cast<size_t>(n), max_output - std::min(max_output, out.output.size()));
    out.output.append(buf, keep);
  }
  if (timed_out) kill(pid, SIGKILL);
  int wstatus = 0;
  while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
  }
  if (timed_out)
    return Status::Timeout(argv[0] + " ran past " + std::to_string(timeout_ms) + " ms");
  out.exit_code = ExitCode(wstatus);
  return out;
}

}  // namespace toolgate::registry
