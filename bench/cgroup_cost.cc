// The per-call cost of a cgroup per sandbox: Lua echo calls through the executor's own
// ProcessRuntime, with and without a CgroupTree, on warm workers (the cgroup is read before and
// after each call, and swept for leftover processes) and on a fresh worker per call (the cgroup
// is also created, moved to the organization's group, and removed). Prints microseconds per call.
// Run as root on a host with cgroups (bench/noisy_neighbor.sh runs it).
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
  return 0;
}
