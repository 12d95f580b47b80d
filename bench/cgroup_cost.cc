// The per-call cost of a cgroup per sandbox: Lua echo calls through the executor's own
// ProcessRuntime, with and without a CgroupTree, on warm workers (the cgroup is read before and
// after each call, and swept for leftover processes) and on a fresh worker per call (the cgroup
// is also created, moved to the organization's group, and removed). Prints microseconds per call.
// Run as root on a host with cgroups (bench/noisy_neighbor.sh runs it).
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <memory>

#include "toolgate/base/crypto.h"
#include "toolgate/base/time.h"
#include "toolgate/executor/cgroup.h"
#include "toolgate/executor/process_runtime.h"
#include "toolgate/executor/worker_pool.h"

using namespace toolgate;
using namespace toolgate::executor;

namespace {

double MicrosPerCall(CgroupTree* cgroups, int64_t calls_per_worker, int calls) {
  ProcessRuntimeConfig config;
  config.runtime_dir = TOOLGATE_RUNTIME_DIR;
  config.cgroups = cgroups;
  WorkerPoolOptions options;
  options.max_calls_per_worker = calls_per_worker;
  options.spares_per_shape = 0;
  options.upkeep_interval_ms = 0;
  WorkerPool pool(options);
  ProcessRuntime lua(Language::kLua, config, RuntimeLimits{}, pool, nullptr);
  Invocation inv;
  inv.code = "function service_handler(event, context) return event end";
  inv.event_json = R"({"hello":"world"})";
  inv.execution_id = "bench";
  inv.function_id = "fn";
  inv.version = "1";
  inv.caller_org_id = "org";
  inv.timeout_ms = 10000;
  inv.memory_mb = 128;
  lua.Run(inv);  // warm
  int64_t start = MonotonicUs();
  for (int i = 0; i < calls; ++i) {
    if (lua.Run(inv).status_code != 200) std::fprintf(stderr, "a call failed\n");
  }
  return static_cast<double>(MonotonicUs() - start) / calls;
}

// The cgroup's own steps, without a worker: create the leaf with its limits, place a process
// in it, remove it. Microseconds each, averaged over n.
void CgroupSteps(CgroupTree& tree, int n) {
  CgroupLimits limits;
  limits.memory_bytes = 128 << 20;
  limits.pids = 64;
  limits.cpus = 1;
  int64_t create = 0, place = 0, remove = 0;
  for (int i = 0; i < n; ++i) {
    int64_t t0 = MonotonicUs();
    auto cg = tree.Create("org-bench", limits);
    int64_t t1 = MonotonicUs();
    if (!cg.ok()) return;
    pid_t pid = ::fork();
    if (pid == 0) {
      ::pause();
      ::_exit(0);
    }
    int64_t t2 = MonotonicUs();
    (void)(*cg)->Adopt(pid);
    int64_t t3 = MonotonicUs();
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    int64_t t4 = MonotonicUs();
    cg->reset();
    int64_t t5 = MonotonicUs();
    create += t1 - t0;
    place += t3 - t2;
    remove += t5 - t4;
  }
  std::printf("%-44s %8.1f us create, %.1f us place, %.1f us remove\n", "cgroup steps alone",
              static_cast<double>(create) / n, static_cast<double>(place) / n,
              static_cast<double>(remove) / n);
}

}  // namespace

int main() {
  InitCrypto();
  CgroupTree::Options tree_options;
  tree_options.name = "toolgate-bench-" + std::to_string(::getpid());
  auto tree = CgroupTree::Open(tree_options);
  if (!tree.ok()) {
    std::fprintf(stderr, "no cgroups: %s\n", tree.status().ToString().c_str());
    return 1;
  }
  const int warm_calls = 2000, cold_calls = 100;
  double warm_plain = MicrosPerCall(nullptr, 1000000, warm_calls);
  double warm_cgroup = MicrosPerCall(tree->get(), 1000000, warm_calls);
  double cold_plain = MicrosPerCall(nullptr, 1, cold_calls);
  double cold_cgroup = MicrosPerCall(tree->get(), 1, cold_calls);
  std::printf("%-44s %8.1f us/call\n", "warm worker, no cgroup", warm_plain);
  std::printf("%-44s %8.1f us/call (+%.1f)\n", "warm worker, cgroup (read, sweep)", warm_cgroup,
              warm_cgroup - warm_plain);
  std::printf("%-44s %8.1f us/call\n", "fresh worker per call, no cgroup", cold_plain);
  std::printf("%-44s %8.1f us/call (+%.1f)\n", "fresh worker per call, cgroup (create, kill)",
              cold_cgroup, cold_cgroup - cold_plain);
  CgroupSteps(**tree, 200);
  return 0;
}
