#include "subprocess.h"

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
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

// The program's path: argv0 itself when it names a directory, else the first executable match
// in the child's PATH. Resolved before fork, since the child may only make system calls.
std::optional<std::string> Resolve(const std::string& argv0) {
  if (argv0.find('/') != std::string::npos) {
    if (access(argv0.c_str(), X_OK) == 0) return argv0;
    return std::nullopt;
  }
  for (const char* dir : {"/usr/local/bin", "/usr/bin", "/bin"}) {
    std::string path = std::string(dir) + "/" + argv0;
    if (access(path.c_str(), X_OK) == 0) return path;
  }
  return std::nullopt;
}

// Runs in the forked child: only async-signal-safe calls, no allocation (the parent may have
// had other threads holding allocator locks at the fork). Raw system calls for the credential
// changes, since glibc's wrappers would try to signal the parent's other threads. Exits 127 when
// a step of the confinement fails, so that nothing runs unconfined.
[[noreturn]] void ExecChild(const char* path, char* const* args, char* const* envp, int input_fd,
                            int output_fd, const Sandbox* sandbox) {
  setpgid(0, 0);
  // Default handling and nothing blocked, whatever the service set for its own shutdown.
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig) sigaction(sig, &dfl, nullptr);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);

  if (dup2(input_fd, STDIN_FILENO) < 0 || dup2(output_fd, STDOUT_FILENO) < 0 ||
      dup2(output_fd, STDERR_FILENO) < 0) {
    _exit(127);
  }
  // Whatever the service opened without O_CLOEXEC (database sockets) stays out of the child.
  syscall(SYS_close_range, 3U, ~0U, 0U);

  if (sandbox != nullptr) {
    if (sandbox->no_network) unshare(CLONE_NEWNET);  // refused without the privilege: ignored
    rlimit none_at_all{0, 0};
    setrlimit(RLIMIT_CORE, &none_at_all);
    if (sandbox->memory_bytes > 0) {
      rlimit mem{sandbox->memory_bytes, sandbox->memory_bytes};
      int which = sandbox->memory_rlimit == Sandbox::MemoryRlimit::kData ? RLIMIT_DATA : RLIMIT_AS;
      if (setrlimit(which, &mem) != 0) _exit(127);
    }
    if (sandbox->cpu_seconds > 0) {
      rlim_t soft = static_cast<rlim_t>(sandbox->cpu_seconds);
      rlimit cpu{soft, soft + 1};
      if (setrlimit(RLIMIT_CPU, &cpu) != 0) _exit(127);
    }
    if (geteuid() == 0) {
      if (syscall(SYS_setgroups, 0, nullptr) != 0) _exit(127);
      if (syscall(SYS_setresgid, sandbox->gid, sandbox->gid, sandbox->gid) != 0) _exit(127);
      if (syscall(SYS_setresuid, sandbox->uid, sandbox->uid, sandbox->uid) != 0) _exit(127);
      // A uid other than 0 after setresuid has dropped every capability; make sure.
      if (sandbox->uid != 0 && (geteuid() == 0 || getuid() == 0)) _exit(127);
    }
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) _exit(127);
    if (chdir("/") != 0) _exit(127);
  }
  execve(path, args, envp);
  _exit(127);
}

}  // namespace

Result<ProcessOutput> RunProcess(const std::vector<std::string>& argv, std::string_view input,
                                 int timeout_ms, size_t max_output,
                                 const std::optional<Sandbox>& sandbox) {
  std::optional<std::string> path = Resolve(argv[0]);
  if (!path) return Status::NotFound(argv[0] + " is not installed");
  auto in = InputFile(input);
  if (!in.ok()) return in.status();
  Fd input_fd(*in);
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) {
    return Status::Unavailable(std::string("pipe: ") + std::strerror(errno));
  }
  Fd read_end(pipe_fds[0]), write_end(pipe_fds[1]);

  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  char path_env[] = "PATH=/usr/local/bin:/usr/bin:/bin";
  char* envp[] = {path_env, nullptr};

  pid_t pid = fork();
  if (pid < 0) return Status::Unavailable(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    ExecChild(path->c_str(), args.data(), envp, input_fd.get(), write_end.get(),
              sandbox ? &*sandbox : nullptr);
  }
  // Also here, so that the group exists before any kill below, whoever runs first.
  setpgid(pid, pid);
  write_end.Reset();  // so that read() sees end-of-file once every holder has exited
  input_fd.Reset();
  Fd exited_fd(static_cast<int>(syscall(SYS_pidfd_open, pid, 0)));

  ProcessOutput out;
  const int64_t deadline_us = MonotonicUs() + int64_t{timeout_ms} * 1000;
  bool timed_out = false;
  bool exited = exited_fd.get() < 0;  // without a pidfd, end of output stands for the exit
  bool output_open = true;
  char buf[4096];
  while (output_open || !exited) {
    int64_t left_ms = (deadline_us - MonotonicUs()) / 1000;
    if (left_ms <= 0) {
      timed_out = true;
      break;
    }
    pollfd p[2] = {{output_open ? read_end.get() : -1, POLLIN, 0},
                   {exited ? -1 : exited_fd.get(), POLLIN, 0}};
    int ready = poll(p, 2, static_cast<int>(left_ms));
    if (ready <= 0) continue;  // EINTR, or the deadline, checked at the top
    if (p[1].revents != 0 && !exited) {
      exited = true;
      // What the child started and left behind goes with it; their end of the pipe with them.
      kill(-pid, SIGKILL);
    }
    if (p[0].revents == 0) continue;
    ssize_t n = read(read_end.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      output_open = false;
      continue;
    }
    size_t keep =
        std::min(static_cast<size_t>(n), max_output - std::min(max_output, out.output.size()));
    out.output.append(buf, keep);
  }
  if (timed_out) kill(-pid, SIGKILL);
  int wstatus = 0;
  while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) {
    return Status::Timeout(argv[0] + " ran past " + std::to_string(timeout_ms) + " ms");
  }
  out.exit_code = ExitCode(wstatus);
  return out;
}

}  // namespace toolgate::registry
