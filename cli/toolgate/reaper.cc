#include "reaper.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>

#include "toolgate/base/time.h"

namespace toolgate::cli {
namespace {

// Field 22 of /proc/<pid>/stat (start time in clock ticks); 0 when gone or a zombie.
uint64_t StartTime(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t paren = stat.rfind(')');
  if (paren == std::string::npos) return 0;
  std::istringstream fields(stat.substr(paren + 2));
  std::string state;
  fields >> state;
  if (state == "Z") return 0;
  std::string skip;
  for (int i = 4; i < 22; ++i) fields >> skip;  // fields 4 to 21
  uint64_t start = 0;
  fields >> start;
  return start;
}

[[noreturn]] void Run(int fd, int grace_ms) {
  std::map<pid_t, uint64_t> children;  // pid -> start time when listed
  std::string buffer;
  char chunk[512];
  for (;;) {
    ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // the launcher is gone
    buffer.append(chunk, static_cast<size_t>(n));
    for (size_t eol; (eol = buffer.find('\n')) != std::string::npos; buffer.erase(0, eol + 1)) {
      pid_t pid = static_cast<pid_t>(std::atoi(buffer.c_str() + 1));
      if (buffer[0] == '+') children[pid] = StartTime(pid);
      if (buffer[0] == '-') children.erase(pid);
    }
  }
  auto still_ours = [&](pid_t pid, uint64_t start) {
    return start != 0 && StartTime(pid) == start;
  };
  for (const auto& [pid, start] : children) {
    if (still_ours(pid, start)) ::kill(pid, SIGTERM);
  }
  int64_t deadline = NowMs() + grace_ms;
  for (;;) {
    bool any = false;
    for (const auto& [pid, start] : children) any = any || still_ours(pid, start);
    if (!any) ::_exit(0);
    if (NowMs() > deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // not our children: no wait()
  }
  for (const auto& [pid, start] : children) {
    if (still_ours(pid, start)) ::kill(pid, SIGKILL);
  }
  ::_exit(0);
}

}  // namespace

Result<std::unique_ptr<Reaper>> Reaper::Start(int grace_ms) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    return Status::Internal(std::string("pipe: ") + strerror(errno));
  pid_t pid = ::fork();
  if (pid < 0) return Status::Internal(std::string("fork: ") + strerror(errno));
  if (pid == 0) {
    // Holds nothing of the launcher's but the pipe: not the data directory's lock, not the
    // write end (whose close is the news it waits for).
    // Nor its terminal or the pipe of a detached start (`toolgate up --detach` waits for that
    // pipe to close): it writes nothing.
    ::dup2(fds[0], 3);
    int null_fd = ::open("/dev/null", O_RDWR);
    if (null_fd >= 0) {
      for (int fd : {STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO}) ::dup2(null_fd, fd);
    }
    ::syscall(SYS_close_range, 4, ~0U, 0);
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) ::signal(sig, SIG_IGN);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    Run(3, grace_ms);
  }
  ::close(fds[0]);
  return std::unique_ptr<Reaper>(new Reaper(fds[1], pid));
}

Reaper::~Reaper() {
  ::close(fd_);
}

void Reaper::Send(char op, pid_t child) {
  std::string line = op + std::to_string(child) + "\n";
  // One short write is atomic on a pipe; a reaper that died leaves EPIPE, nothing to do.
  (void)!::write(fd_, line.data(), line.size());
}

void Reaper::Adopted(pid_t child) {
  Send('+', child);
}

void Reaper::Released(pid_t child) {
  Send('-', child);
}

}  // namespace toolgate::cli
