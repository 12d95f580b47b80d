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

#include "toolgate/base/log.h"
#include "toolgate/base/time.h"
#include "toolgate/executor/worker_protocol.h"
#include "toolgate/metrics/metrics.h"

namespace toolgate::executor {
namespace {

using protocol::FrameKind;

constexpr int64_t kMemoryWatchMs = 20;
constexpr size_t kReplyOverheadBytes = 64 << 10;  // an error frame, or the JSON around a value
// CPU time an idle worker's sandbox may use between calls (a garbage collector's tail); past
// it, something of the last call is still running.
constexpr int64_t kIdleCpuUs = 20000;
// How long an interpreter may take to come up and say hello.
constexpr int64_t kHelloTimeoutMs = 30000;

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

// True when fd has bytes to read now.
bool Pending(int fd) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, 0) > 0 && (p.revents & POLLIN);
}

}  // namespace

bool MayHaveUsedHalfItsCpu(int64_t lived_us, int64_t cores, uint64_t cpu_seconds) {
  // CPU time grows at most `cores` seconds per second of life.
  return lived_us / 1000 * std::max<int64_t>(cores, 1) * 2 >=
         static_cast<int64_t>(cpu_seconds) * 1000;
}

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
  std::unique_ptr<Cgroup> cgroup;
  if (options.cgroups != nullptr) {
    auto made = options.cgroups->Create(options.cgroup_group, options.cgroup_limits);
    if (!made.ok()) return made.status();
    cgroup = std::move(*made);
  }
  // Before the child runs anything: into its cgroup, and its one door out made in its network
  // namespace, so that nothing in the sandbox ever sees the namespace without it.
  std::unique_ptr<EgressDoor> door;
  BeforeStart before_start = [&](pid_t pid) {
    if (cgroup != nullptr) {
      Status adopted = cgroup->Adopt(pid);
      if (!adopted.ok()) return adopted;
    }
    if (options.egress != nullptr) {
      auto opened = options.egress->OpenDoorIn(pid);
      if (!opened.ok()) return opened.status();
      door = std::move(*opened);
    }
    return Status::Ok();
  };
  auto process = SpawnSandboxed(plan, before_start);
  if (!process.ok()) return process.status();
  std::unique_ptr<ProcessWorker> worker(
      new ProcessWorker(std::move(*process), options, std::move(cgroup), std::move(door)));
  Status up = worker->AwaitHello();
  if (!up.ok()) return up;  // the worker's destructor kills it
  return worker;
}

Status ProcessWorker::AwaitHello() {
  const int64_t deadline_us = MonotonicUs() + kHelloTimeoutMs * 1000;
  char header[protocol::kHeaderBytes];
  size_t got = 0;
  while (got < sizeof header) {
    int64_t left_ms = (deadline_us - MonotonicUs()) / 1000;
    if (left_ms <= 0) return Status::Internal("the worker did not start in time");
    pollfd p{process_.replies, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left_ms)) <= 0) continue;
    ssize_t n = ::read(process_.replies, header + got, sizeof header - got);
    if (n == 0) return Status::Internal("the worker exited as it started");
    if (n > 0) got += static_cast<size_t>(n);
  }
  if (static_cast<FrameKind>(header[4]) != FrameKind::kHello || header[0] != 0 || header[1] != 0 ||
      header[2] != 0 || header[3] != 0) {
    return Status::Internal("the worker started with something other than its hello");
  }
  // Threads of the interpreter itself; any more after a call are the tool's.
  baseline_threads_ = ReadStatus().threads;
  return Status::Ok();
}

ProcessWorker::ProcessWorker(SandboxedProcess process, ProcessWorkerOptions options,
                             std::unique_ptr<Cgroup> cgroup, std::unique_ptr<EgressDoor> door)
    : process_(std::move(process)),
      options_(options),
      cgroup_(std::move(cgroup)),
      door_(std::move(door)),
      started_us_(MonotonicUs()) {
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
  if (cgroup_ == nullptr && clear_refs_fd_ >= 0 && !peak_is_resident_) {
    (void)!::pwrite(clear_refs_fd_, "5", 1, 0);
  }
  peak_is_resident_ = false;
}

ProcessWorker::ProcStatus ProcessWorker::ReadStatus() {
  ProcStatus status;
  char buf[4096];
  ssize_t n = status_fd_ >= 0 ? ::pread(status_fd_, buf, sizeof buf - 1, 0) : -1;
  if (n <= 0) return status;
  std::string_view text(buf, static_cast<size_t>(n));
  status.peak_kb = StatusField(text, "VmHWM:");
  status.resident_kb = StatusField(text, "VmRSS:");
  status.threads = StatusField(text, "Threads:");
  return status;
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

void ProcessWorker::AfterAnswer(const Invocation& invocation, const ProcStatus& status,
                                int64_t tasks, LogBuffer& log, WorkerReply& reply) {
  // Bytes past the answer are frames the handler wrote itself: the stream is out of step.
  if (Pending(process_.replies)) reply.reusable = false;
  // A sandbox with no more tasks than the worker has threads holds no other process (each has
  // a task): the counter's one read then stands for listing the processes.
  if (cgroup_ != nullptr && (tasks < 0 || status.threads <= 0 || tasks > status.threads)) {
    size_t stopped = cgroup_->KillAllExcept(process_.pid);
    if (stopped > 0) {
      log.Append("[toolgate] " + std::to_string(stopped) +
                 " process(es) the handler started were still running at the end of the call "
                 "and were stopped\n");
      reply.reusable = false;  // nor can the worker reap them: it goes too
    }
  }
  int64_t threads = status.threads;
  if (options_.allow_new_threads) baseline_threads_ = std::max(baseline_threads_, threads);
  if (baseline_threads_ > 0 && threads > baseline_threads_) {
    log.Append("[toolgate] the handler left " + std::to_string(threads - baseline_threads_) +
               " thread(s) running; the worker was stopped\n");
    reply.reusable = false;
  }
  // A fresh process per call for a version with declared keys: the secrets of one call cannot
  // linger anywhere the next call could look.
  if (!invocation.env.empty()) reply.reusable = false;
  static const int64_t cores = std::max<int64_t>(1, ::sysconf(_SC_NPROCESSORS_ONLN));
  if (reply.reusable && options_.cpu_seconds > 0 &&
      MayHaveUsedHalfItsCpu(MonotonicUs() - started_us_, cores, options_.cpu_seconds) &&
      CpuSeconds() * 2 > static_cast<int64_t>(options_.cpu_seconds)) {
    reply.reusable = false;  // retire it long before its CPU rlimit could stop a call
  }
  if (!reply.reusable) Kill();  // now, so that no CPU time it still burns goes uncounted
}

namespace {

// A worker stopped in the middle of a call, by why: past its deadline, over its memory, or
// anything else it did (crashed, broke the protocol). Retirements after a call are the pool's
// ("recycle").
void CountKill(std::string_view cause) {
  static auto& family = metrics::Registry::Global().Counter(
      "toolgate_executor_worker_kills_total",
      "Worker processes stopped, by cause: timeout, memory, crash, cancel (during a call), "
      "recycle (retired after their last call), idle or evicted.",
      {"cause"});
  static auto& timeout = family.With({"timeout"});
  static auto& memory = family.With({"memory"});
  static auto& crash = family.With({"crash"});
  static auto& cancel = family.With({"cancel"});
  (cause == "timeout"  ? timeout
   : cause == "memory" ? memory
   : cause == "cancel" ? cancel
                       : crash)
      .Inc();
}

}  // namespace

WorkerReply ProcessWorker::Call(const Invocation& invocation, int64_t deadline_us) {
  BlockSigpipe();
  WorkerReply reply;
  // A worker with bytes on its reply pipe between calls wrote frames of its own: replaced.
  if (Exited() || Pending(process_.replies)) {
    Kill();
    reply.kind = WorkerReply::Kind::kNotDelivered;
    return reply;
  }
  if (!init_sent_ && cgroup_ != nullptr) {
    Status moved = cgroup_->MoveTo(CgroupTree::GroupFor(invocation.caller_org_id));
    if (!moved.ok()) {
      log::Error("cannot move a worker's cgroup to its organization")
          .Str("error", moved.ToString());
      Kill();
      reply.kind = WorkerReply::Kind::kNotDelivered;
      return reply;
    }
  }
  LogBuffer log(options_.max_log_bytes);
  protocol::FrameReader reader(options_.max_result_bytes + kReplyOverheadBytes);
  const std::string nonce = protocol::NewNonce();

  // What goes out: the module first when it has not been sent, then the call.
  std::string out;
  if (!init_sent_) {
    RuntimeLimits limits;
    limits.max_response_bytes = options_.max_response_bytes;
    limits.max_log_bytes = options_.max_log_bytes;
    out = protocol::EncodeFrame(
        FrameKind::kInit,
        protocol::InitPayload(nonce, invocation.code, options_.memory_mb, options_.max_result_bytes,
                              limits, invocation.bundle_root, invocation.handler));
    init_sent_ = true;
  }
  const size_t call_at = out.size();
  {
    int64_t left_ms = std::max<int64_t>(0, (deadline_us - MonotonicUs()) / 1000);
    std::string payload = protocol::CallPayload(nonce, invocation, left_ms);
    out += protocol::FrameHeader(FrameKind::kCall, payload.size());
    out += payload;
    sodium_memzero(payload.data(), payload.size());
  }
  size_t written = 0;
  int64_t start_us = 0;
  const int64_t cpu_before_us = cgroup_ != nullptr ? cgroup_->CpuUsageUs() : -1;
  if (idle_cpu_us_ >= 0 && cpu_before_us - idle_cpu_us_ > kIdleCpuUs) {
    // Something of the last call kept running between calls: this call goes elsewhere.
    log::Warn("a worker used CPU between calls and was stopped")
        .Int("cpu_us", cpu_before_us - idle_cpu_us_);
    sodium_memzero(out.data(), out.size());
    Kill();
    reply.kind = WorkerReply::Kind::kNotDelivered;
    return reply;
  }
  // After a clean call the count read as it ended still holds: the idle check just showed that
  // nothing in the sandbox ran since, so nothing can have been killed for memory.
  const uint64_t oom_before = cgroup_ == nullptr  ? 0
                              : idle_cpu_us_ >= 0 ? idle_oom_kills_
                                                  : cgroup_->OomKills();
  if (ready_) {
    ResetPeakMemory();
    if (cgroup_ != nullptr) cgroup_->ResetPeakMemory();
  }

  // The sandbox's door opens for this call's version until its deadline, and closes with it.
  if (door_ != nullptr) {
    static const core::EgressList kNowhere;
    door_->BeginCall(invocation.egress != nullptr ? *invocation.egress : kNowhere, deadline_us);
  }
  const int64_t kill_us = deadline_us + options_.kill_grace_ms * 1000;
  enum class End {
    kReply,
    kDied,
    kTimeout,
    kMemory,
    kBroken,
    kOutOfStep,
    kStale,
    kCancelled
  } end = End::kReply;
  // A cancelled call (cancellation.h) is stopped the moment its signal fires, started or not.
  const int cancel_fd = invocation.cancel != nullptr ? invocation.cancel->fd() : -1;
  bool done = false;
  // The pipe is non-blocking: the call is written at once, and poll waits only for what the
  // pipe could not take.
  bool writable = true;
  while (!done) {
    if (written < out.size() && writable) {
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
          if (door_ != nullptr) door_->EndCall();
          Kill();
          reply.kind = WorkerReply::Kind::kNotDelivered;
          return reply;
        }
        end = End::kDied;
        break;
      }
    }
    int64_t now = MonotonicUs();
    if (now >= kill_us) {
      end = End::kTimeout;
      break;
    }
    int64_t wait_ms = (kill_us - now + 999) / 1000;
    if (options_.watch_memory) wait_ms = std::min(wait_ms, kMemoryWatchMs);
    // The request pipe is polled only while the call is not all written (its POLLERR would
    // wake an idle wait), the cancel signal always when there is one.
    const bool writing = written < out.size();
    pollfd fds[4] = {{process_.replies, POLLIN, 0},
                     {process_.log, POLLIN, 0},
                     {writing ? process_.requests : -1, POLLOUT, 0},
                     {cancel_fd, POLLIN, 0}};
    int ready = ::poll(fds, cancel_fd >= 0 ? 4 : (writing ? 3 : 2), static_cast<int>(wait_ms));
    if (ready < 0 && errno != EINTR) {
      end = End::kBroken;
      break;
    }
    if (cancel_fd >= 0 && (fds[3].revents & POLLIN) != 0) {
      end = End::kCancelled;
      break;
    }
    if (options_.watch_memory && ReadStatus().resident_kb > options_.memory_mb * 1024) {
      end = End::kMemory;
      break;
    }
    writable = ready > 0 && (fds[2].revents & (POLLOUT | POLLERR)) != 0;
    if (ready <= 0) continue;
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
      std::string_view body;
      if (state == protocol::FrameReader::State::kInvalid) {
        end = End::kBroken;
        done = true;
        break;
      }
      if (!protocol::TakeNonce(frame.payload, nonce, &body)) {
        // Before this call's handler started, it is a frame the last call's handler wrote late:
        // the call goes to another worker, untouched. After, this call's handler forged it.
        end = ready_ && !reply.started ? End::kStale : End::kOutOfStep;
        done = true;
        break;
      }
      if (frame.kind == FrameKind::kStarted) {
        reply.started = true;
        if (ready_) start_us = MonotonicUs();
        continue;
      }
      if (frame.kind == FrameKind::kNotice) {
        // The handler's own word, so never fatal: one sent while no handler runs, or that
        // nobody asked for, cannot be read or is past the bounds is dropped without a look.
        if (invocation.notices == nullptr) continue;
        if (size_t dropped = protocol::DroppedNotices(body); dropped > 0) {
          invocation.notices->Drop(dropped);  // the worker's own drops
          continue;
        }
        Notice notice;
        if (!ready_ || !reply.started || !invocation.notices->accepting() ||
            body.size() > protocol::kMaxNoticePayloadBytes ||
            !protocol::ParseNotice(body, &notice)) {
          invocation.notices->Drop();
        } else {
          invocation.notices->Offer(std::move(notice));
        }
        continue;
      }
      if (!ready_ && frame.kind == FrameKind::kReady) {
        ready_ = true;
        reply.started = false;  // the module is in; the handler has not started yet
        ResetPeakMemory();
        if (cgroup_ != nullptr) cgroup_->ResetPeakMemory();
        continue;
      }
      done = true;
      protocol::HandlerError error;
      bool loaded = ready_;
      if (frame.kind == FrameKind::kValue && loaded) {
        reply.kind = WorkerReply::Kind::kValue;
        reply.value.assign(body);
        reply.reusable = true;
      } else if (frame.kind == FrameKind::kTimeout && loaded && options_.stops_at_deadline) {
        reply.kind = WorkerReply::Kind::kTimeout;  // stopped by the worker, which lives on
        reply.reusable = true;
      } else if ((frame.kind == FrameKind::kError && loaded) ||
                 (frame.kind == FrameKind::kLoadError && !loaded)) {
        if (!protocol::ParseHandlerError(body, &error)) {
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
  CallEgress egress = door_ != nullptr ? door_->EndCall() : CallEgress{};
  if (end == End::kStale) {
    Kill();
    reply = WorkerReply{};
    reply.kind = WorkerReply::Kind::kNotDelivered;
    return reply;
  }
  reply.egress = std::move(egress);
  int64_t stop_us = MonotonicUs();
  if (start_us != 0) reply.runtime_ms = std::max<int64_t>(0, (stop_us - start_us) / 1000);

  int64_t peak_kb = 0;
  switch (end) {
    case End::kReply: {
      // With a cgroup, its accounts speak for the whole sandbox: the peak is its own (below),
      // and a sandbox with a single task holds nothing but the worker's one thread, so
      // /proc/<pid>/status, the costliest read of a call (6 µs on the 2-core bench machine, a
      // tenth of the executor's CPU per call), is read only when there are more tasks to tell
      // apart.
      ProcStatus status;
      const int64_t tasks = cgroup_ != nullptr ? cgroup_->Tasks() : -1;
      if (tasks == 1) {
        status.threads = 1;
      } else {
        status = ReadStatus();
      }
      if (cgroup_ == nullptr) {
        peak_kb = status.peak_kb;
        // The peak is the worker's size now: the next call's reset would change nothing.
        peak_is_resident_ = status.peak_kb > 0 && status.peak_kb == status.resident_kb;
      }
      DrainLog(process_.log, log);
      AfterAnswer(invocation, status, tasks, log, reply);
      break;
    }
    case End::kTimeout:
    case End::kMemory:
    case End::kBroken:
    case End::kOutOfStep:
    case End::kStale:
    case End::kCancelled: {
      ProcStatus status = ReadStatus();
      peak_kb = std::max(status.peak_kb, status.resident_kb);
    }
      Kill();
      CountKill(end == End::kTimeout     ? "timeout"
                : end == End::kMemory    ? "memory"
                : end == End::kCancelled ? "cancel"
                                         : "crash");
      DrainLog(process_.log, log);
      reply.reusable = false;
      reply.kind = end == End::kTimeout     ? WorkerReply::Kind::kTimeout
                   : end == End::kMemory    ? WorkerReply::Kind::kMemory
                   : end == End::kCancelled ? WorkerReply::Kind::kCancelled
                                            : WorkerReply::Kind::kCrashed;
      if (end == End::kBroken) {
        reply.failure = "broke the worker protocol and was stopped";
        log.Append("[toolgate] the process running the handler " + reply.failure + "\n");
      }
      if (end == End::kOutOfStep) {
        reply.kind = WorkerReply::Kind::kError;
        reply.error_type = "WorkerProtocolError";
        reply.error_message =
            "the handler wrote to the worker's protocol pipe; the worker was stopped";
        log.Append("[toolgate] " + reply.error_message + "\n");
      }
      break;
    case End::kDied: {
      Kill();  // reaps it; the sandbox's init is gone, and everything in it
      DrainLog(process_.log, log);
      peak_kb = usage_.ru_maxrss;
      reply.reusable = false;
      reply.kind = ClassifyDeath(wait_status_, peak_kb, options_.memory_mb);
      reply.failure = DescribeDeath(wait_status_);
      if (reply.kind == WorkerReply::Kind::kCrashed && cgroup_ == nullptr) {
        log.Append("[toolgate] the process running the handler " + reply.failure + "\n");
      }
      break;
    }
  }
  if (cgroup_ != nullptr) {
    // The sandbox's own accounts: every process of it, the killed included.
    int64_t cpu_after_us = cgroup_->CpuUsageUs();
    if (cpu_before_us >= 0 && cpu_after_us >= cpu_before_us) {
      reply.cpu_ms = (cpu_after_us - cpu_before_us) / 1000;
    }
    peak_kb = std::max<int64_t>(peak_kb, static_cast<int64_t>(cgroup_->PeakMemoryBytes() / 1024));
    const uint64_t oom_after = cgroup_->OomKills();
    // Read after AfterAnswer stopped what the handler left: the baselines of the next call.
    if (end == End::kReply && reply.reusable) {
      idle_cpu_us_ = cpu_after_us;
      idle_oom_kills_ = oom_after;
    } else {
      idle_cpu_us_ = -1;
    }
    if (oom_after > oom_before && reply.kind != WorkerReply::Kind::kNotDelivered) {
      // The kernel's OOM killer struck in this sandbox during the call: whichever process it
      // chose, the call exceeded its memory.
      reply.kind = WorkerReply::Kind::kMemory;
      reply.reusable = false;
      Kill();
    } else if (end == End::kDied && reply.kind == WorkerReply::Kind::kCrashed) {
      log.Append("[toolgate] the process running the handler " + reply.failure + "\n");
    }
  }
  if (reply.egress.cut_at_deadline &&
      (reply.kind == WorkerReply::Kind::kValue || reply.kind == WorkerReply::Kind::kError)) {
    // The deadline cut one of the handler's requests, and the handler answered in the moment
    // it had left (a caught 504): the call has timed out all the same, and is not charged. The
    // worker answered cleanly, so it may serve again.
    reply.kind = WorkerReply::Kind::kTimeout;
    log.Append("[toolgate] the call's deadline cut an outbound request\n");
  }
  reply.memory_used_mb = MemoryUsedMb(static_cast<size_t>(peak_kb) * 1024);
  reply.logs = log.Take();
  return reply;
}

}  // namespace toolgate::executor
