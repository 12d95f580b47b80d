// ProcessWorker: a Worker that is a sandboxed interpreter process (runtimes/*/worker.*) speaking
// the frame protocol of worker_protocol.h.
//
// Start spawns the process, which then waits for its module: until its first call, it holds
// nothing of a version or an organization, so the pool may keep it as a spare (worker_pool.h).
// With a CgroupTree, the process is born in a cgroup of its own (cgroup.h), in its
// organization's group, or in the "spare" group until its first call moves it there.
// The first Call sends the invocation's code (the kInit frame) ahead of the call, so loading the
// module (and anything it prints) belongs to the first call and its deadline. Each call:
// - refuses a worker with bytes waiting on its reply pipe (the handler wrote frames of its own
//   after its last answer): kNotDelivered, so the pool replaces it;
// - sends the event, the context and the caller's secrets under a fresh nonce, and wipes that
//   frame from memory; a reply frame without that nonce is out of step: the worker is killed
//   and the call answered WorkerProtocolError (worker_protocol.h);
// - collects what the process prints into the call's log, bounded, while it waits;
// - measures runtime_ms from the handler's start to its reply, and the peak resident memory of
//   the call (VmHWM, reset through /proc/<pid>/clear_refs before each call; the process's
//   max RSS from wait4 when it died);
// - at the deadline (plus kill_grace_ms) kills the process (the sandbox's init, so everything
//   in it dies): kTimeout;
// - when the process dies by itself, tells a memory death (a peak near the limit: the rlimit
//   made the interpreter abort) from a crash;
// - where no rlimit holds memory (GPU drivers need the address space), samples resident memory
//   every 20 ms and kills the process past the limit: kMemory;
// - with a cgroup: counts the CPU time of the whole sandbox (cpu_ms), takes its peak memory,
//   answers kMemory when the cgroup's OOM killer struck during the call (whichever process it
//   chose), and after the answer kills every process of the sandbox but the worker's own. A
//   worker is not used again (it is stopped before Call returns, so its CPU time is all counted)
//   when the call left processes or threads behind, sent bytes past its answer, or held secrets
//   (a fresh process per call for versions with declared keys: nothing of one caller's secrets
//   can be found by the next call).
#pragma once

#include <sys/resource.h>
#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>

#include "toolgate/base/status.h"
#include "toolgate/executor/cgroup.h"
#include "toolgate/executor/egress_gateway.h"
#include "toolgate/executor/sandbox.h"
#include "toolgate/executor/worker_pool.h"

namespace toolgate::executor {

struct ProcessWorkerOptions {
  int64_t memory_mb = 128;              // the version's limit: messages and memory deaths
  size_t max_result_bytes = 6 << 20;    // the largest return value JSON a worker may send
  size_t max_response_bytes = 6 << 20;  // RuntimeLimits, for a worker that normalises itself
  size_t max_log_bytes = 64 << 10;
  bool watch_memory = false;    // sample resident memory and kill past memory_mb
  uint64_t cpu_seconds = 3600;  // the process's RLIMIT_CPU: retired at half of it
  // The worker enforces the deadline itself and answers kTimeout (Lua's hook). Only such a
  // worker's kTimeout is believed: from a Python or JavaScript handler, which can write to the
  // protocol pipe, it would be a way to run uncharged.
  bool stops_at_deadline = false;
  // How long past the deadline the process is killed: room for a worker that stops at the
  // deadline to answer kTimeout and stay warm. 0 for the others.
  int64_t kill_grace_ms = 0;
  // Where the sandbox's cgroup is made (null: none, the process's own rlimits only) and its
  // limits. The tree must outlive the worker.
  CgroupTree* cgroups = nullptr;
  CgroupLimits cgroup_limits;
  // The group the cgroup is made in: "spare" for a worker no call has taken yet (its first call
  // moves it), else the organization's (CgroupTree::GroupFor).
  std::string cgroup_group = "spare";
  // Threads a call starts and leaves idle do not retire the worker (CUDA starts its threads
  // with a handler's first use of the GPU); one that used CPU between calls still does, at the
  // next call, which then goes to another worker.
  bool allow_new_threads = false;
  // The gateway that opens the sandbox's egress door at spawn (null: the sandbox gets no door
  // and no network at all). Must outlive the worker.
  EgressGateway* egress = nullptr;
};

class ProcessWorker : public Worker {
 public:
  // Spawns plan's program. Internal when the sandbox cannot be set up.
  static Result<std::unique_ptr<ProcessWorker>> Start(const SandboxPlan& plan,
                                                      const ProcessWorkerOptions& options);
  // Kills the process (if it still runs) and reaps it.
  ~ProcessWorker() override;

  // One call at a time (the pool guarantees it). The first loads invocation.code; later calls
  // ignore it. Never throws.
  WorkerReply Call(const Invocation& invocation, int64_t deadline_us) override;
  // Reaps the process when it has exited. Not during a Call.
  bool Alive() override { return !Exited(); }

  pid_t pid() const { return process_.pid; }

 private:
  ProcessWorker(SandboxedProcess process, ProcessWorkerOptions options,
                std::unique_ptr<Cgroup> cgroup, std::unique_ptr<EgressDoor> door);
  // After an answer: stops what the handler left running and decides whether the worker may
  // serve again; notes what it did in log.
  // status is what /proc said of the process once it answered (its threads at least); tasks
  // the sandbox cgroup's task count then (-1 without a cgroup).
  struct ProcStatus;
  void AfterAnswer(const Invocation& invocation, const ProcStatus& status, int64_t tasks,
                   LogBuffer& log, WorkerReply& reply);
  // Waits for the worker's kHello (its interpreter is up, no tool code has run) and counts its
  // threads then. Internal when it dies or takes longer than 30 s.
  Status AwaitHello();
  // True once the process has been reaped; reaps it when it has exited.
  bool Exited();
  // Kills the process and reaps it.
  void Kill();
  // Starts a new peak for ReadStatus's peak_kb, which only a worker without a cgroup reports:
  // skipped with a cgroup, and when the last call ended with its peak at the resident size,
  // where the reset would change nothing (an idle worker does not shrink, and one that runs
  // between calls is stopped by the idle CPU check).
  void ResetPeakMemory();
  // The process's peak resident KiB since the last reset, resident KiB now and threads now, from
  // one read of /proc/<pid>/status; zeros when unknown.
  struct ProcStatus {
    int64_t peak_kb = 0;
    int64_t resident_kb = 0;
    int64_t threads = 0;
  };
  ProcStatus ReadStatus();
  // The CPU seconds the process has used, -1 when unknown.
  int64_t CpuSeconds();

  SandboxedProcess process_;
  ProcessWorkerOptions options_;
  std::unique_ptr<Cgroup> cgroup_;    // destroyed after the process is killed
  std::unique_ptr<EgressDoor> door_;  // the sandbox's way out; null without a gateway
  int64_t baseline_threads_ = 0;      // the interpreter's own threads, at its hello
  const int64_t started_us_;          // MonotonicUs when this took the just-started process
  int64_t idle_cpu_us_ = -1;          // the sandbox's CPU time when the last call ended
  uint64_t idle_oom_kills_ = 0;       // its OOM kills then (valid with idle_cpu_us_)
  bool peak_is_resident_ = false;     // the last call ended with peak_kb == resident_kb
  bool init_sent_ = false;            // the kInit frame went out, with the first call
  bool ready_ = false;                // the module loaded
  bool exited_ = false;
  int wait_status_ = 0;     // once exited_
  struct rusage usage_ {};  // once exited_
  int clear_refs_fd_ = -1;
  int status_fd_ = -1;
  int stat_fd_ = -1;
};

// Why a worker process that died by itself during a call died: kTimeout when its CPU rlimit
// killed it, kMemory when its peak resident memory reached three quarters of memory_mb (the
// interpreter aborts or faults when an rlimit refuses it memory), else kCrashed.
WorkerReply::Kind ClassifyDeath(int wait_status, int64_t max_rss_kb, int64_t memory_mb);

// Whether a process that has lived lived_us on a machine of `cores` CPUs can have used half of
// cpu_seconds of CPU time: before then the worker's CPU time need not be read after each call
// to retire it in time.
bool MayHaveUsedHalfItsCpu(int64_t lived_us, int64_t cores, uint64_t cpu_seconds);

// "exited with status 3", "was killed by signal 11 (Segmentation fault)".
std::string DescribeDeath(int wait_status);

}  // namespace toolgate::executor
