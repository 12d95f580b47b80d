#include "toolgate/executor/process_worker.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sodium.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "toolgate/base/time.h"
#include "toolgate/executor/worker_protocol.h"

namespace toolgate::executor {
namespace {

using protocol::FrameKind;

constexpr int64_t kMemoryWatchMs = 20;
constexpr size_t kReplyOverheadBytes = 64 << 10;  // an error frame, or the JSON around a value

int OpenProc(pid_t pid, const char* name, int flags) {
  std::string path = "/proc/" + std::to_string(pid) + "/" + name;
  return ::open(path.c_str(), flags | O_CLOEXEC);
}

// The number after "<field>:" in /proc/<pid>/status text, in KiB; 0 when absent.
int64_t StatusField(std::string_view status, std::string_view field) {
  size_t at = status.find(field);
  if (at == std::string_view::npos) return 0;
  return std::strtoll(status.data() + at + field.size(), nullptr, 10);
}

// A write to a worker that died raises SIGPIPE; the executor's threads block it (so the write
// fails with EPIPE instead), and so must any thread that calls workers, tests included.
void BlockSigpipe() {
  thread_local bool blocked = false;
  if (blocked) return;
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  blocked = true;
}

// Takes a SIGPIPE a failed write left pending, so none piles up.
void ConsumeSigpipe() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGPIPE);
  timespec zero{0, 0};
  sigtimedwait(&set, nullptr, &zero);
}

// Reads what fd has now into log (dropping what is past its limit). Returns false at end of
// file.
bool DrainLog(int fd, LogBuffer& log) {
  char buf[16384];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0) {
      log.Append(std::string_view(buf, static_cast<size_t>(n)));
      continue;
    }
    if (n == 0) return false;
    if (errno == EINTR) continue;
    return true;  // EAGAIN: nothing more for now
  }
}

}  // namespace

WorkerReply::Kind ClassifyDeath(int wait_status, int64_t max_rss_kb, int64_t memory_mb) {
  if (WIFSIGNALED(wait_status) && WTERMSIG(wait_status) == SIGXCPU) {
    return WorkerReply::Kind::kTimeout;
  }
  if (max_rss_kb * 4 >= memory_mb * 1024 * 3) return WorkerReply::Kind::kMemory;
  return WorkerReply::Kind::kCrashed;
}

std::string DescribeDeath(int wait_status) {
  if (WIFEXITED(wait_status))
    return "exited with status " + std::to_string(WEXITSTATUS(wait_status));
  if (WIFSIGNALED(wait_status)) {
    int sig = WTERMSIG(wait_status);
    const char* name = ::strsignal(sig);
    return "was killed by signal " + std::to_string(sig) +
           (name ? std::string(" (") + name + ")" : "");
  }
  return "stopped";
}

Result<std::unique_ptr<ProcessWorker>> ProcessWorker::Start(const SandboxPlan& plan,
                                                            const ProcessWorkerOptions& options) {
  auto process = SpawnSandboxed(plan);
  if (!process.ok()) return process.status();
  return std::unique_ptr<ProcessWorker>(new ProcessWorker(std::move(*process), options));
}

ProcessWorker::ProcessWorker(SandboxedProcess process, ProcessWorkerOptions options)
    : process_(std::move(process)), options_(options) {
  ::fcntl(process_.requests, F_SETFL, O_NONBLOCK);
  clear_refs_fd_ = OpenProc(process_.pid, "clear_refs", O_WRONLY);
  status_fd_ = OpenProc(process_.pid, "status", O_RDONLY);
  stat_fd_ = OpenProc(process_.pid, "stat", O_RDONLY);
}

ProcessWorker::~ProcessWorker() {
  if (!exited_) Kill();
  for (int fd : {clear_refs_fd_, status_fd_, stat_fd_}) {
    if (fd >= 0) ::close(fd);
  }
}

bool ProcessWorker::Exited() {
  if (exited_) return true;
  pid_t r = ::wait4(process_.pid, &wait_status_, WNOHANG, &usage_);
  if (r == process_.pid) exited_ = true;
  return exited_;
}

void ProcessWorker::Kill() {
  if (exited_) return;
  ::kill(process_.pid, SIGKILL);
  while (::wait4(process_.pid, &wait_status_, 0, &usage_) < 0 && errno == EINTR) {
  }
  exited_ = true;
}

void ProcessWorker::ResetPeakMemory() {
  if (clear_refs_fd_ >= 0) (void)!::pwrite(clear_refs_fd_, "5", 1, 0);
}

int64_t ProcessWorker::PeakMemoryKb() {
  char buf[4096];
  ssize_t n = status_fd_ >= 0 ? ::pread(status_fd_, buf, sizeof buf - 1, 0) : -1;
  if (n <= 0) return 0;
  return StatusField(std::string_view(buf, static_cast<size_t>(n)), "VmHWM:");
}

int64_t ProcessWorker::ResidentMemoryKb() {
  char buf[4096];
  ssize_t n = status_fd_ >= 0 ? ::pread(status_fd_, buf, sizeof buf - 1, 0) : -1;
  if (n <= 0) return 0;
  return StatusField(std::string_view(buf, static_cast<size_t>(n)), "VmRSS:");
}

int64_t ProcessWorker::CpuSeconds() {
  char buf[1024];
  ssize_t n = stat_fd_ >= 0 ? ::pread(stat_fd_, buf, sizeof buf - 1, 0) : -1;
  if (n <= 0) return -1;
  buf[n] = '\0';
  // "pid (comm) state ..." where comm may hold spaces and parentheses: count from the last ')'.
  const char* p = std::strrchr(buf, ')');
  if (p == nullptr) return -1;
  // Fields after comm: 3 state, 4 ppid, ... 14 utime, 15 stime.
  int field = 2;
  int64_t utime = 0, stime = 0;
  for (const char* q = p + 1; *q; ++q) {
    if (*q != ' ') continue;
    ++field;
    if (field == 14) utime = std::strtoll(q + 1, nullptr, 10);
    if (field == 15) {
      stime = std::strtoll(q + 1, nullptr, 10);
      break;
    }
  }
  return (utime + stime) / std::max<long>(1, ::sysconf(_SC_CLK_TCK));
}

WorkerReply ProcessWorker::Call(const Invocation& invocation, int64_t deadline_us) {
  BlockSigpipe();
  WorkerReply reply;
  if (Exited()) {
    reply.kind = WorkerReply::Kind::kNotDelivered;
    return reply;
  }
  LogBuffer log(options_.max_log_bytes);
  protocol::FrameReader reader(options_.max_result_bytes + kReplyOverheadBytes);

  // What goes out: the module first when it has not been sent, then the call.
  std::string out;
  if (!init_sent_) {
    RuntimeLimits limits;
    limits.max_response_bytes = options_.max_response_bytes;
    limits.max_log_bytes = options_.max_log_bytes;
    out = protocol::EncodeFrame(FrameKind::kInit,
                                protocol::InitPayload(invocation.code, options_.memory_mb,
                                                      options_.max_result_bytes, limits));
    init_sent_ = true;
  }
  const size_t call_at = out.size();
  {
    int64_t left_ms = std::max<int64_t>(0, (deadline_us - MonotonicUs()) / 1000);
    std::string payload = protocol::CallPayload(invocation, left_ms);
    out += protocol::FrameHeader(FrameKind::kCall, payload.size());
    out += payload;
    sodium_memzero(payload.data(), payload.size());
  }
  size_t written = 0;
  int64_t start_us = 0;
  if (ready_) {
    ResetPeakMemory();
    start_us = MonotonicUs();
  }

  const int64_t kill_us = deadline_us + options_.kill_grace_ms * 1000;
  enum class End { kReply, kDied, kTimeout, kMemory, kBroken } end = End::kReply;
  bool done = false;
  while (!done) {
    int64_t now = MonotonicUs();
    if (now >= kill_us) {
      end = End::kTimeout;
      break;
    }
    int64_t wait_ms = (kill_us - now + 999) / 1000;
    if (options_.watch_memory) wait_ms = std::min(wait_ms, kMemoryWatchMs);
    pollfd fds[3] = {
        {process_.replies, POLLIN, 0},
        {process_.log, POLLIN, 0},
        {process_.requests, static_cast<short>(written < out.size() ? POLLOUT : 0), 0}};
    int ready = ::poll(fds, written < out.size() ? 3 : 2, static_cast<int>(wait_ms));
    if (ready < 0 && errno != EINTR) {
      end = End::kBroken;
      break;
    }
    if (options_.watch_memory && ResidentMemoryKb() > options_.memory_mb * 1024) {
      end = End::kMemory;
      break;
    }
    if (ready <= 0) continue;

    if (written < out.size() && (fds[2].revents & (POLLOUT | POLLERR))) {
      ssize_t n = ::write(process_.requests, out.data() + written, out.size() - written);
      if (n > 0) {
        written += static_cast<size_t>(n);
      } else if (n < 0 && errno == EPIPE) {
        ConsumeSigpipe();
        // Dead before the call reached it: another worker can take the call. Not yet loaded,
        // it died of nothing its module did if it did not get all of it: a worker reads its
        // whole module before it runs any (a spare that died waiting).
        if (ready_ ? written <= call_at : written < call_at) {
          sodium_memzero(out.data(), out.size());
          Kill();
          reply.kind = WorkerReply::Kind::kNotDelivered;
          return reply;
        }
        end = End::kDied;
        break;
      }
    }
    if (fds[1].revents) DrainLog(process_.log, log);
    if (fds[0].revents == 0) continue;

    char buf[65536];
    ssize_t n = ::read(process_.replies, buf, sizeof buf);
    if (n == 0) {
      end = End::kDied;
      break;
    }
    if (n < 0) continue;  // EAGAIN or EINTR
    reader.Append(std::string_view(buf, static_cast<size_t>(n)));
    protocol::Frame frame;
    for (;;) {
      auto state = reader.Next(&frame);
      if (state == protocol::FrameReader::State::kNeedMore) break;
      if (state == protocol::FrameReader::State::kInvalid) {
        end = End::kBroken;
        done = true;
        break;
      }
      if (!ready_ && frame.kind == FrameKind::kReady) {
        ready_ = true;
        ResetPeakMemory();
        start_us = MonotonicUs();
        continue;
      }
      done = true;
      protocol::HandlerError error;
      bool loaded = ready_;
      if (frame.kind == FrameKind::kValue && loaded) {
        reply.kind = WorkerReply::Kind::kValue;
        reply.value = std::move(frame.payload);
        reply.reusable = true;
      } else if (frame.kind == FrameKind::kTimeout && loaded && options_.stops_at_deadline) {
        reply.kind = WorkerReply::Kind::kTimeout;  // stopped by the worker, which lives on
        reply.reusable = true;
      } else if ((frame.kind == FrameKind::kError && loaded) ||
                 (frame.kind == FrameKind::kLoadError && !loaded)) {
        if (!protocol::ParseHandlerError(frame.payload, &error)) {
          end = End::kBroken;
          break;
        }
        reply.kind = WorkerReply::Kind::kError;
        reply.error_type = std::move(error.type);
        reply.error_message = std::move(error.message);
        // A worker that failed to load, or ran out of memory, is not used again.
        reply.reusable = loaded && reply.error_type != "MemoryLimitExceeded";
      } else {
        end = End::kBroken;
      }
      break;
    }
  }
  sodium_memzero(out.data(), out.size());
  int64_t stop_us = MonotonicUs();
  if (start_us != 0) reply.runtime_ms = std::max<int64_t>(0, (stop_us - start_us) / 1000);

  int64_t peak_kb = 0;
  switch (end) {
    case End::kReply:
      peak_kb = PeakMemoryKb();
      DrainLog(process_.log, log);
      // Bytes past the reply are frames the handler wrote itself: the stream is out of step.
      if (reader.buffered() > 0) reply.reusable = false;
      if (reply.reusable && options_.cpu_seconds > 0 &&
          CpuSeconds() * 2 > static_cast<int64_t>(options_.cpu_seconds)) {
        reply.reusable = false;  // retire it long before its CPU rlimit could stop a call
      }
      break;
    case End::kTimeout:
    case End::kMemory:
    case End::kBroken:
      peak_kb = std::max(PeakMemoryKb(), ResidentMemoryKb());
      Kill();
      DrainLog(process_.log, log);
      reply.kind = end == End::kTimeout  ? WorkerReply::Kind::kTimeout
                   : end == End::kMemory ? WorkerReply::Kind::kMemory
                                         : WorkerReply::Kind::kCrashed;
      if (end == End::kBroken) {
        reply.failure = "broke the worker protocol and was stopped";
        log.Append("[toolgate] the process running the handler " + reply.failure + "\n");
      }
      break;
    case End::kDied: {
      Kill();  // reaps it; the sandbox's init is gone, and everything in it
      DrainLog(process_.log, log);
      peak_kb = usage_.ru_maxrss;
      reply.kind = ClassifyDeath(wait_status_, peak_kb, options_.memory_mb);
      reply.failure = DescribeDeath(wait_status_);
      if (reply.kind == WorkerReply::Kind::kCrashed) {
        log.Append("[toolgate] the process running the handler " + reply.failure + "\n");
      }
      break;
    }
  }
  reply.memory_used_mb = MemoryUsedMb(static_cast<size_t>(peak_kb) * 1024);
  reply.logs = log.Take();
  return reply;
}

}  // namespace toolgate::executor
