// toolgate-executor: runs functions for one compute pool. See job_executor.h, lua_runtime.h and
// process_runtime.h.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <thread>
#include <vector>

#include "toolgate/base/crypto.h"
#include "toolgate/base/flags.h"
#include "toolgate/base/json.h"
#include "toolgate/base/json_writer.h"
#include "toolgate/base/log.h"
#include "toolgate/base/process.h"
#include "toolgate/bus/service.h"
#include "toolgate/core/egress_flags.h"
#include "toolgate/core/service_main.h"
#include "toolgate/executor/bundle_cache.h"
#include "toolgate/executor/ca_bundle.h"
#include "toolgate/executor/code_store.h"
#include "toolgate/executor/egress_fetch.h"
#include "toolgate/executor/egress_gateway.h"
#include "toolgate/executor/executor_keys.h"
#include "toolgate/executor/gpu.h"
#include "toolgate/executor/job_executor.h"
#include "toolgate/executor/lua_runtime.h"
#include "toolgate/executor/process_runtime.h"
#include "toolgate/executor/settler.h"
#include "toolgate/executor/worker_pool.h"
#include "toolgate/metrics/metrics.h"

namespace {

using namespace toolgate;
using namespace toolgate::executor;

const std::string kName = "toolgate-executor";

// The GPUs of --pool gpu: --gpu-devices, or every one the machine has; exits when there is none.
std::unique_ptr<GpuSlots> GpuSlotsFromFlags(const Flags& flags) {
  std::vector<int> devices;
  if (flags.Get("gpu-devices").empty()) {
    devices = DiscoverGpus();
    if (devices.empty()) {
      core::Die(kName, "--pool gpu",
                "no NVIDIA GPU found (nvidia-smi -L, /dev/nvidia<N>); name the devices with "
                "--gpu-devices");
    }
  } else {
    auto listed = ParseGpuDeviceList(flags.Get("gpu-devices"));
    if (!listed.ok()) core::Die(kName, "--gpu-devices", listed.status().message());
    devices = *listed;
  }
  int64_t per_gpu = flags.GetInt("calls-per-gpu");
  if (per_gpu < 1 || per_gpu > 1000) core::Die(kName, "--calls-per-gpu", "must be 1..1000");
  return std::make_unique<GpuSlots>(devices, static_cast<int>(per_gpu));
}

// A flag counting cores (0.5, 2); stops the process with one line when it is not a number >= 0.
double CoresFlag(const Flags& flags, const std::string& name) {
  const std::string& text = flags.Get(name);
  char* end = nullptr;
  double value = std::strtod(text.c_str(), &end);
  if (text.empty() || end == nullptr || *end != '\0' || !(value >= 0) || value > 100000) {
    core::Die(kName, "--" + name, "must be a number of cores, 0 or more");
  }
  return value;
}

std::string BundleCacheDir(const Flags& flags) {
  const std::string dir = flags.Get("bundle-cache-dir");
  return dir.empty() ? "/var/lib/toolgate/bundles/" + flags.Get("pool")
                     : std::filesystem::absolute(dir).lexically_normal().string();
}

BundleCacheOptions BundleCacheOptionsFromFlags(const Flags& flags) {
  BundleCacheOptions options;
  options.dir = BundleCacheDir(flags);
  for (const char* name :
       {"bundle-cache-mb", "bundle-max-mb", "bundle-max-unpacked-mb", "bundle-max-files"}) {
    if (flags.GetInt(name) < 1) core::Die(kName, std::string("--") + name, "must be positive");
  }
  options.max_bytes = static_cast<uint64_t>(flags.GetInt("bundle-cache-mb")) << 20;
  options.limits.max_compressed_bytes = static_cast<size_t>(flags.GetInt("bundle-max-mb")) << 20;
  options.limits.max_unpacked_bytes = static_cast<uint64_t>(flags.GetInt("bundle-max-unpacked-mb"))
                                      << 20;
  options.limits.max_entries = static_cast<size_t>(flags.GetInt("bundle-max-files"));
  return options;
}

ProcessRuntimeConfig ProcessConfigFromFlags(const Flags& flags, bool gpu) {
  ProcessRuntimeConfig config;
  config.python = flags.Get("python");
  config.node = flags.Get("node");
  config.runtime_dir = flags.Get("runtime-dir");
  if (config.runtime_dir.empty()) {
    config.runtime_dir =
        (std::filesystem::read_symlink("/proc/self/exe").parent_path().parent_path() / "runtimes")
            .string();
  }
  // The GPU pool runs Python only.
  std::vector<std::string> files = {"python/worker.py"};
  if (!gpu) files.insert(files.end(), {"javascript/worker.js", "lua/toolgate-lua-worker"});
  for (const std::string& file : files) {
    if (!std::filesystem::exists(std::filesystem::path(config.runtime_dir) / file)) {
      core::Die(kName, "--runtime-dir", config.runtime_dir + " holds no " + file);
    }
  }
  const std::string& list = flags.Get("sandbox-read-only");
  for (size_t at = 0; at < list.size();) {
    size_t comma = std::min(list.find(',', at), list.size());
    if (comma > at) config.extra_read_only.push_back(list.substr(at, comma - at));
    at = comma + 1;
  }
  int64_t uid_base = flags.GetInt("sandbox-uid-base");
  if (uid_base < 1000 || uid_base + flags.GetInt("max-workers") >= (int64_t{1} << 31)) {
    core::Die(kName, "--sandbox-uid-base", "must be an unprivileged uid (1000 or more)");
  }
  config.uid_base = static_cast<uid_t>(uid_base);
  config.tmp_bytes = static_cast<uint64_t>(flags.GetInt("worker-tmp-mb")) << 20;
  config.gpu = gpu;
  if (const std::string& ca = flags.Get("egress-ca-file"); !ca.empty()) {
    // A directory of its own, searchable by the sandboxes' host uids, which bind the file.
    char directory[] = "/tmp/toolgate-executor-ca-XXXXXX";
    if (::mkdtemp(directory) == nullptr || ::chmod(directory, 0755) != 0) {
      core::Die(kName, "--egress-ca-file", "cannot make a directory for the CA bundle");
    }
    auto bundle = WriteCaBundle(ca, kSystemCaBundle, directory);
    if (!bundle.ok()) core::Die(kName, "--egress-ca-file", bundle.status().message());
    config.ca_bundle = *bundle;
  }
  return config;
}

// The egress gateway of the executor's sandboxes. resolver_threads: one per sandbox that can be
// in a call at once (each door has at most one name on them), so no sandbox waits for another's.
std::unique_ptr<EgressGateway> StartEgressGateway(const Flags& flags, size_t resolver_threads) {
  EgressOptions options;
  options.resolver_threads = std::clamp<size_t>(resolver_threads, 2, 64);
  options.enabled = !flags.GetBool("no-egress");
  for (const char* name : {"egress-allow-cidr", "egress-deny-cidr"}) {
    for (const std::string& text : flags.GetList(name)) {
      auto cidr = core::Cidr::Parse(text);
      if (!cidr.ok()) core::Die(kName, std::string("--") + name, cidr.status().message());
      (std::string_view(name) == "egress-allow-cidr" ? options.allow_cidrs : options.deny_cidrs)
          .push_back(*cidr);
    }
  }
  for (const std::string& text : flags.GetList("egress-allow-endpoint")) {
    auto endpoints = ResolveEgressEndpoints(text);
    if (!endpoints.ok()) core::Die(kName, "--egress-allow-endpoint", endpoints.status().message());
    options.allow_endpoints.insert(options.allow_endpoints.end(), endpoints->begin(),
                                   endpoints->end());
  }
  std::vector<std::string> platform = flags.GetList("egress-deny-addr");
  for (const std::string& url : flags.GetList("nats-url")) platform.push_back(url);
  for (const std::string& text : platform) {
    auto endpoints = ResolveEgressEndpoints(text);
    if (!endpoints.ok()) core::Die(kName, "--egress-deny-addr", endpoints.status().message());
    options.deny_endpoints.insert(options.deny_endpoints.end(), endpoints->begin(),
                                  endpoints->end());
  }
  options.max_bytes_per_call = flags.GetInt("egress-max-bytes");
  if (options.max_bytes_per_call < 1) core::Die(kName, "--egress-max-bytes", "must be positive");
  auto gateway = EgressGateway::Start(std::move(options));
  if (!gateway.ok()) core::Die(kName, "egress gateway", gateway.status().message());
  return std::move(*gateway);
}

// A directory under /tmp that others may pass through (the sandboxes bind from it), removed
// with everything in it when destroyed. Empty path when not wanted.
class ScratchDir {
 public:
  explicit ScratchDir(bool wanted) {
    if (!wanted) return;
    char dir[] = "/tmp/toolgate-run-XXXXXX";
    if (::mkdtemp(dir) == nullptr || ::chmod(dir, 0711) != 0) {
      core::Die(kName, "--run-bundle", "cannot make a directory under /tmp");
    }
    path_ = dir;
  }
  ~ScratchDir() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// A bundle for --run-bundle, from its file, as the registry would serve it.
class FileBundleSource : public BundleSource {
 public:
  explicit FileBundleSource(std::string bytes) : bytes_(std::move(bytes)) {}
  Result<std::string> FetchBundle(const std::string&, const std::string&,
                                  std::string_view) override {
    return bytes_;
  }

 private:
  const std::string bytes_;
};

std::string ReadWholeFile(const std::string& path, const std::string& flag) {
  std::ifstream in(path, std::ios::binary);
  if (!in) core::Die(kName, "--" + flag, "cannot read " + path);
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

// --run-file / --run-bundle: one event through a handler in this pool's sandbox, printed as
// JSON; no NATS, keys or other service. For checking what a machine can run (a GPU pool's
// drivers) and for `toolgate dev`. A bundle goes the way a published one does: checked and
// unpacked by a BundleCache (in a directory of its own, removed afterwards) and shown to the
// worker at /bundle through views.
int RunFileOnce(const Flags& flags, const std::vector<Runtime*>& runtimes, bool gpu,
                BundleCache* bundles, const std::string& digest) {
  const bool bundled = bundles != nullptr;
  const std::string path = bundled ? flags.Get("run-bundle") : flags.Get("run-file");
  const std::string ext = std::filesystem::path(path).extension().string();
  const std::string language = bundled        ? flags.Get("run-runtime")
                               : ext == ".py" ? "python"
                               : ext == ".js" ? "javascript"
                                              : "lua";
  Runtime* runtime = nullptr;
  for (Runtime* r : runtimes) {
    if (r->name() == language) runtime = r;
  }
  if (runtime == nullptr) {
    core::Die(kName, bundled ? "--run-runtime" : "--run-file", "this pool runs no " + language);
  }
  const std::string event = flags.Get("run-event");
  const std::string execution_id = NewUuid();
  Invocation inv;
  std::string text;
  std::string handler;
  if (bundled) {
    auto bundle = bundles->Get(digest, "run-file", "1", "");
    if (!bundle.ok()) core::Die(kName, "--run-bundle", bundle.status().message());
    inv.bundle = std::move(*bundle);
    inv.bundle_root = inv.bundle->dir;
    handler = flags.Get("run-handler").empty() ? DefaultBundleHandler(language)
                                               : flags.Get("run-handler");
    inv.handler = handler;
  } else {
    text = ReadWholeFile(path, "run-file");
    inv.code = text;
  }
  auto egress = core::EgressList::Parse(flags.GetList("run-egress"));
  if (!egress.ok()) core::Die(kName, "--run-egress", egress.status().message());
  inv.egress = &*egress;
  // The declared keys' values of `toolgate dev`, a JSON object of strings, read from a pipe
  // (/dev/stdin) so that they touch neither a disk nor a command line.
  std::string env_text;
  std::optional<ParsedJson> env_doc;
  if (const std::string env_file = flags.Get("run-env-file"); !env_file.empty()) {
    env_text = ReadWholeFile(env_file, "run-env-file");
    auto doc = ParseJson(env_text);
    simdjson::dom::object values;
    if (!doc.ok() || doc->root.get_object().get(values) != simdjson::SUCCESS) {
      core::Die(kName, "--run-env-file", "must hold a JSON object of strings");
    }
    env_doc = std::move(*doc);
    for (auto [name, value] : values) {
      std::string_view text;
      if (value.get_string().get(text) != simdjson::SUCCESS) {
        core::Die(kName, "--run-env-file",
                  "the value of " + std::string(name) + " is not a string");
      }
      inv.env.push_back({name, text});
    }
  }
  inv.event_json = event;
  inv.execution_id = execution_id;
  inv.function_id = "run-file";
  inv.version = "1";
  inv.caller_org_id = "run-file";
  inv.timeout_ms = flags.GetInt("run-timeout-ms");
  inv.memory_mb = flags.GetInt("run-memory-mb");
  ExecutionOutcome out = runtime->Run(inv);

  JsonWriter w;
  w.BeginObject().Field("runtime", language);
  switch (out.kind) {
    case ExecutionOutcome::Kind::kCompleted:
      w.Field("statusCode", out.status_code).Field("body", out.body);
      break;
    case ExecutionOutcome::Kind::kTimeout:
      w.Field("outcome", "timeout");
      break;
    case ExecutionOutcome::Kind::kPlatformFailure:
      w.Field("outcome", "platform_failure").Field("failure", out.failure);
      break;
  }
  w.Field("runtime_ms", out.runtime_ms)
      .Field("memory_used_mb", out.memory_used_mb)
      .Field("compute_type", gpu ? "GPU" : "CPU")
      .Field("logs", out.logs)
      .EndObject();
  std::cout << w.Take() << std::endl;
  return out.kind == ExecutionOutcome::Kind::kCompleted && out.status_code < 500 ? 0 : 1;
}

// The pool's and the scheduler's state, read at each scrape under their own locks (an atomic
// per change would duplicate what they count already). Cumulative counts become counters by
// adding what grew since the last scrape.
std::unique_ptr<metrics::Collector> ExportMetrics(const WorkerPool& workers,
                                                  const FairScheduler& scheduler) {
  auto& r = metrics::Registry::Global();
  auto& state = r.Gauge("toolgate_executor_workers",
                        "Worker processes by state: busy, idle or spare.", {"state"});
  auto& kills = r.Counter("toolgate_executor_worker_kills_total",
                          "Worker processes stopped, by cause: timeout, memory, crash (during a "
                          "call), recycle (retired after their last call), idle or evicted.",
                          {"cause"});
  struct Series {
    metrics::Gauge& busy;
    metrics::Gauge& idle;
    metrics::Gauge& spare;
    metrics::Counter& starts;
    metrics::Counter& recycle;
    metrics::Counter& idle_kills;
    metrics::Counter& evicted;
    metrics::Gauge& slots_busy;
    metrics::Gauge& slots;
    metrics::Gauge& queued;
    metrics::Counter& expired;
  } s{state.With({"busy"}),
      state.With({"idle"}),
      state.With({"spare"}),
      r.Counter("toolgate_executor_worker_starts_total", "Worker processes started (spares too).")
          .With({}),
      kills.With({"recycle"}),
      kills.With({"idle"}),
      kills.With({"evicted"}),
      r.Gauge("toolgate_executor_slots_busy", "Execution slots running a job.").With({}),
      r.Gauge("toolgate_executor_slots", "Execution slots (jobs that may run at once).").With({}),
      r.Gauge("toolgate_executor_queue_length", "Jobs waiting for a slot.").With({}),
      r.Counter("toolgate_executor_jobs_expired_total",
                "Jobs that waited --queue-timeout-ms without a slot and were refused.")
          .With({})};
  return r.AddCollector(
      [&workers, &scheduler, s, last = WorkerPool::Stats{}, last_expired = uint64_t{0}]() mutable {
        // A count that fell (a start that failed is uncounted) adds nothing.
        auto grown = [](uint64_t now, uint64_t before) { return now > before ? now - before : 0; };
        WorkerPool::Stats w = workers.stats();
        s.busy.Set(static_cast<double>(w.busy));
        s.idle.Set(static_cast<double>(w.idle));
        s.spare.Set(static_cast<double>(w.spare));
        s.starts.Inc(grown(w.started + w.spares_started, last.started + last.spares_started));
        s.recycle.Inc(grown(w.recycled, last.recycled));
        s.idle_kills.Inc(grown(w.expired, last.expired));
        s.evicted.Inc(grown(w.evicted + w.spares_evicted, last.evicted + last.spares_evicted));
        last = w;
        FairScheduler::Stats f = scheduler.stats();
        s.slots_busy.Set(static_cast<double>(f.running));
        s.slots.Set(static_cast<double>(scheduler.options().slots));
        s.queued.Set(static_cast<double>(f.queued));
        s.expired.Inc(grown(f.expired, last_expired));
        last_expired = f.expired;
      });
}

}  // namespace

int main(int argc, char** argv) {
  Flags flags(kName,
              "Runs functions on the CPU pool (Lua, Python and JavaScript, each in sandboxed "
              "worker processes) or the GPU pool (Python).");
  core::DefineCommonFlags(flags);
  unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  flags.Define("threads", "2",
               "threads for the service's own requests (executions run on --slots)");
  flags.Define("slots", "0",
               "executions running at once; 0: from the machine (2 per core, at most one per "
               "256 MiB of memory, at least 2)");
  flags.Define("max-slots-per-org", "0",
               "most executions one organization runs at once; 0: half of --slots (at least 1)");
  flags.Define("queue-timeout-ms", "10000",
               "how long a job may wait for a slot before it is answered 503 no_capacity "
               "(not charged)");
  flags.Define("cpus-per-org", "0",
               "CPU time all sandboxes of one organization may use together, in cores; 0: the "
               "organization's share of the slots (cores x --max-slots-per-org / --slots)");
  flags.Define("sandbox-cpus", "1", "CPU time one sandbox may use, in cores; 0: no limit");
  flags.Define("insecure-no-cgroups", "false",
               "run without a cgroup per sandbox when the host has no usable cgroups: limits then "
               "hold per process only, and a handler's children can outlive its call; never in "
               "production");
  flags.Define("pool", "cpu", "compute pool served: cpu or gpu (tg.exec.<pool>.<runtime>)");
  flags.Define("gpu-devices", "",
               "GPU device ids for --pool gpu, comma-separated (e.g. 0,1); default: every NVIDIA "
               "GPU found (nvidia-smi -L, /dev/nvidia<N>)");
  flags.Define("calls-per-gpu", "1", "most calls running at once on one GPU");
  flags.Define("python", "/usr/bin/python3", "the Python interpreter of Python workers");
  flags.Define("node", "/usr/bin/node", "the node binary of JavaScript workers");
  flags.Define("runtime-dir", "",
               "the worker runtimes (python/worker.py, javascript/worker.js, "
               "lua/toolgate-lua-worker); default: <this binary's directory>/../runtimes");
  flags.Define("lua-in-process", "false",
               "run Lua in the executor's own threads instead of sandboxed workers: faster, but "
               "a library call that loops in C (a backtracking pattern) holds a thread past its "
               "deadline; only for trusted code");
  flags.Define("sandbox-read-only", "",
               "more host paths shown read-only inside every worker sandbox, comma-separated "
               "(e.g. a Python virtual environment)");
  flags.Define("egress-ca-file", "",
               "a PEM file of CA certificates every sandbox's TLS clients trust in addition to "
               "the system's (upstreams behind a TLS-inspecting proxy or a private PKI)");
  flags.Define("sandbox-uid-base", "200000",
               "first host uid/gid of the sandboxes: the sandboxes' root; workers use the next "
               "--max-workers ids");
  flags.Define("max-workers", "64", "most worker processes alive at once (busy or idle)");
  flags.Define("worker-max-calls", "10000", "calls a worker serves before it is replaced");
  flags.Define("worker-idle-ms", "60000", "how long an idle worker is kept");
  flags.Define("spare-workers", "1",
               "worker processes kept started, sandboxed and waiting, per runtime (at the default "
               "memory limit; per device on --pool gpu), so a version's first call skips "
               "starting one; they count towards --max-workers and are the first stopped at the "
               "cap; 0: none");
  flags.Define("worker-tmp-mb", "64", "size of each worker's private /tmp");
  flags.Define("executor-key-file", "./data/keys/executor.key",
               "base64 X25519 secret key of the pool; opens the sealed secrets of each call");
  flags.Define("max-response-bytes", "6291456", "largest response body (500 ResponseTooLarge)");
  flags.Define("max-log-bytes", "65536", "largest execution log kept per call");
  flags.Define("code-cache-bytes", "268435456", "memory for cached function code (LRU)");
  flags.Define("bundle-cache-dir", "",
               "where bundle versions' bundles are unpacked, one directory per digest, for this "
               "executor alone (emptied at start; every directory above it must let others "
               "through); default /var/lib/toolgate/bundles/<pool>");
  flags.Define("bundle-cache-mb", "2048",
               "disk for unpacked bundles no worker uses (LRU); bundles in use are never removed");
  flags.Define("bundle-max-mb", "50", "largest bundle (.tar.gz) the executor unpacks, in MiB");
  flags.Define("bundle-max-unpacked-mb", "250",
               "most data a bundle may unpack to (the sum of its files' sizes), in MiB");
  flags.Define("bundle-max-files", "10000",
               "most entries (files, directories and links) a bundle may hold");
  flags.Define("registry-timeout-ms", "2000", "how long a code request to the registry may take");
  flags.Define("dispatch-notice-ms", "1000",
               "tell the edge a job is here once it has been queued or running this long (keep "
               "well below the edge's --chain-timeout-ms)");
  flags.Define("settle-drain-ms", "30000",
               "on shutdown, how long to keep settling results billing has not acked");
  flags.Define("run-file", "",
               "run one event through this file's service_handler (.py, .js or .lua) in this "
               "pool's sandbox, print the outcome as JSON and exit; needs no other service");
  flags.Define("run-bundle", "",
               "like --run-file, for a bundle (.tar.gz, as `toolgate publish` packs it): "
               "checked and unpacked as a published bundle is; with --run-runtime and "
               "--run-handler");
  flags.Define("run-runtime", "python", "--run-bundle: the runtime (python, javascript, lua)");
  flags.Define("run-handler", "",
               "--run-bundle: the entry file in the bundle (default handler.py, handler.js or "
               "handler.lua)");
  flags.DefineRepeated("run-egress",
                       "--run-file, --run-bundle: an entry of the egress list the handler gets "
                       "(as a version declares it; repeatable); none: no egress");
  flags.Define("run-event", "{}", "--run-file: the event, as JSON");
  flags.Define("run-timeout-ms", "30000", "--run-file: the handler's timeout");
  flags.Define("run-memory-mb", "256", "--run-file: the handler's memory limit");
  flags.Define("run-env-file", "",
               "--run-file, --run-bundle: a JSON object of the declared keys' values the handler "
               "gets as its env (/dev/stdin: read from a pipe, as `toolgate dev` gives them)");
  core::DefineOperatorEgressFlags(flags);
  flags.DefineRepeated("egress-allow-endpoint",
                       "host:port handlers may reach although it is an address of this host, "
                       "which no --egress-allow-cidr opens (repeatable; a platform address stays "
                       "refused)");
  flags.DefineRepeated("egress-deny-addr",
                       "host:port of a platform service handlers may never reach, whatever is "
                       "allowed (repeatable; the executor adds its NATS servers itself)");
  flags.Define("egress-max-bytes", "67108864",
               "bytes one call may send and receive through the egress gateway");
  flags.Parse(argc, argv);
  BlockShutdownSignals();  // before the worker pool starts its thread

  const std::string pool = flags.Get("pool");
  if (pool != "cpu" && pool != "gpu") core::Die(kName, "--pool", "must be cpu or gpu");
  std::unique_ptr<GpuSlots> gpus = pool == "gpu" ? GpuSlotsFromFlags(flags) : nullptr;
  int64_t max_workers = flags.GetInt("max-workers");
  if (max_workers < 1 || max_workers > 60000) core::Die(kName, "--max-workers", "must be 1..60000");
  ProcessRuntimeConfig process = ProcessConfigFromFlags(flags, pool == "gpu");

  FairSchedulerOptions slots;
  const uint64_t memory_bytes = static_cast<uint64_t>(::sysconf(_SC_PHYS_PAGES)) *
                                static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  slots.slots = flags.GetInt("slots") > 0 ? static_cast<size_t>(flags.GetInt("slots"))
                                          : DefaultSlots(cores, memory_bytes);
  slots.max_per_org = flags.GetInt("max-slots-per-org") > 0
                          ? static_cast<size_t>(flags.GetInt("max-slots-per-org"))
                          : std::max<size_t>(1, slots.slots / 2);
  if (flags.GetInt("slots") < 0 || flags.GetInt("max-slots-per-org") < 0 ||
      slots.max_per_org > slots.slots) {
    core::Die(kName, "--max-slots-per-org", "must be 0..--slots");
  }
  slots.queue_timeout_ms = flags.GetInt("queue-timeout-ms");
  if (slots.queue_timeout_ms < 1) core::Die(kName, "--queue-timeout-ms", "must be positive");

  // One cgroup per sandbox (cgroup.h); a host without usable cgroups is refused unless told.
  std::unique_ptr<CgroupTree> cgroups;
  if (!flags.GetBool("insecure-no-cgroups")) {
    CgroupTree::Options tree;
    tree.stale_prefix = "toolgate-sandboxes-";
    tree.name = tree.stale_prefix + std::to_string(::getpid());
    double per_org = CoresFlag(flags, "cpus-per-org");
    tree.group_cpus = per_org > 0
                          ? per_org
                          : static_cast<double>(cores) * static_cast<double>(slots.max_per_org) /
                                static_cast<double>(slots.slots);
    auto opened = CgroupTree::Open(tree);
    if (!opened.ok()) {
      core::Die(kName, "cgroups",
                opened.status().message() +
                    "; sandboxes cannot be isolated on this host (run as root with cgroup v2 "
                    "or the v1 memory, pids, cpuacct and freezer controllers, or pass "
                    "--insecure-no-cgroups for a development machine)");
    }
    cgroups = std::move(*opened);
  }
  process.cgroups = cgroups.get();
  process.sandbox_cpus = CoresFlag(flags, "sandbox-cpus");
  // The egress gateway: every sandbox's one way out (egress_gateway.h). Declared before the
  // worker pool, whose workers hold its doors, so that it outlives them.
  std::unique_ptr<EgressGateway> egress = StartEgressGateway(flags, slots.slots);
  process.egress = egress.get();
  int64_t spares = flags.GetInt("spare-workers");
  if (spares < 0 || spares > max_workers) {
    core::Die(kName, "--spare-workers", "must be 0..--max-workers");
  }

  // --run-file and --run-bundle make one call and exit. A --run-bundle bundle is checked,
  // unpacked and shown the way a published one is, from a scratch directory of its own that
  // goes at exit (declared first, so that it outlives the views and cache inside it).
  const bool run_once = !flags.Get("run-file").empty() || !flags.Get("run-bundle").empty();
  ScratchDir run_scratch(!flags.Get("run-bundle").empty());
  std::unique_ptr<FileBundleSource> run_source;
  std::string run_digest;

  // Every worker's /bundle view (bundle_views.h), so bundle versions take spares too. Declared
  // before the pool: its workers' views go before it.
  std::unique_ptr<BundleViews> views;
  std::unique_ptr<BundleCache> run_bundles;
  if (!run_once || !run_scratch.path().empty()) {
    const std::string dir =
        run_scratch.path().empty() ? BundleCacheDir(flags) : run_scratch.path() + "/bundles";
    auto opened = BundleViews::Open(dir + "/.views");
    if (!opened.ok()) core::Die(kName, "--bundle-cache-dir", opened.status().message());
    views = std::move(*opened);
    process.bundle_views = views.get();
  }
  if (!run_scratch.path().empty()) {
    std::string bytes = ReadWholeFile(flags.Get("run-bundle"), "run-bundle");
    run_digest = HexEncode(Sha256(bytes));
    run_source = std::make_unique<FileBundleSource>(std::move(bytes));
    BundleCacheOptions options = BundleCacheOptionsFromFlags(flags);
    options.dir = run_scratch.path() + "/bundles";
    auto opened = BundleCache::Open(options, *run_source);
    if (!opened.ok()) core::Die(kName, "--run-bundle", opened.status().message());
    run_bundles = std::move(*opened);
  }

  RuntimeLimits limits;
  limits.max_response_bytes = static_cast<size_t>(flags.GetInt("max-response-bytes"));
  limits.max_log_bytes = static_cast<size_t>(flags.GetInt("max-log-bytes"));
  WorkerPoolOptions pool_options;
  pool_options.max_workers = static_cast<size_t>(max_workers);
  pool_options.max_calls_per_worker = flags.GetInt("worker-max-calls");
  pool_options.max_idle_ms = flags.GetInt("worker-idle-ms");
  // --run-file makes one call: spares would only be started to be stopped.
  pool_options.spares_per_shape = run_once ? 0 : static_cast<size_t>(spares);
  WorkerPool workers(pool_options);
  // The runtimes of each pool. GPU work is Python only (contract section 6).
  std::vector<std::unique_ptr<Runtime>> owned;
  if (pool == "cpu" && flags.GetBool("lua-in-process")) {
    owned.push_back(std::make_unique<LuaRuntime>(limits));
  } else if (pool == "cpu") {
    owned.push_back(
        std::make_unique<ProcessRuntime>(Language::kLua, process, limits, workers, nullptr));
  }
  owned.push_back(
      std::make_unique<ProcessRuntime>(Language::kPython, process, limits, workers, gpus.get()));
  if (pool == "cpu") {
    owned.push_back(
        std::make_unique<ProcessRuntime>(Language::kJavaScript, process, limits, workers, nullptr));
  }
  std::vector<Runtime*> runtimes;
  for (auto& r : owned) runtimes.push_back(r.get());
  if (run_once) {
    log::Init(kName, log::ParseLevel(flags.Get("log-level")));
    InitCrypto();
    return RunFileOnce(flags, runtimes, pool == "gpu", run_bundles.get(), run_digest);
  }

  InitCrypto();
  auto keys = ExecutorKeys::LoadFile(flags.Get("executor-key-file"));
  if (!keys.ok()) core::Die(kName, "cannot load --executor-key-file", keys.status().message());
  auto bus = core::StartService("executor", flags);
  bus::BusOptions settle_options = core::BusOptionsFromFlags("executor", flags);
  settle_options.name = "executor-settler";
  // Its own inbox branch: billing may write settlement acks there, and only there.
  settle_options.inbox_prefix += ".settle";
  auto settler = Settler::Start(settle_options);
  if (!settler.ok()) core::Die(kName, "cannot connect the settler", settler.status().ToString());

  RegistryCodeSource registry(*bus, static_cast<int>(flags.GetInt("registry-timeout-ms")));
  CodeStore code(static_cast<size_t>(flags.GetInt("code-cache-bytes")), registry);
  auto bundles = BundleCache::Open(BundleCacheOptionsFromFlags(flags), registry);
  if (!bundles.ok()) core::Die(kName, "--bundle-cache-dir", bundles.status().message());
  JobExecutor executor(**keys, code, runtimes, bundles->get());
  bus::Service service("executor", *bus, static_cast<size_t>(flags.GetInt("threads")));
  DispatchNotices notices(
      [&bus = *bus](const std::string& edge_reply, const std::string& reply,
                    const std::string& traceparent) {
        Status sent = bus.Publish(edge_reply, reply, {}, traceparent);
        if (!sent.ok()) log::Warn("cannot send a dispatch notice").Str("error", sent.ToString());
      },
      flags.GetInt("dispatch-notice-ms"),
      [&bus = *bus] {
        // Bounded: a server that does not answer delays one result, never holds the slot.
        Status flushed = bus.Flush(1000);
        if (!flushed.ok()) {
          log::Warn("cannot flush a job's notices").Str("error", flushed.ToString());
        }
      });
  FairScheduler scheduler(slots);
  auto exported = ExportMetrics(workers, scheduler);
  Status s = ServeJobs(service, pool, executor, **settler, notices, scheduler);
  if (!s.ok()) core::Die(kName, "cannot subscribe", s.ToString());
  std::string devices;
  for (int d : gpus ? gpus->devices() : std::vector<int>{}) {
    devices += (devices.empty() ? "" : ",") + std::to_string(d);
  }
  log::Info("serving")
      .Str("pool", pool)
      .Int("slots", static_cast<int64_t>(slots.slots))
      .Int("max_slots_per_org", static_cast<int64_t>(slots.max_per_org))
      .Str("cgroups", cgroups ? cgroups->Describe() : "off (--insecure-no-cgroups)")
      .Int("runtimes", static_cast<int64_t>(runtimes.size()))
      .Str("gpu_devices", devices)
      .Str("public_key", Base64Encode((*keys)->public_key()));

  // Run returns once no job is taken any more and the running ones have finished; their
  // results may still wait for billing.
  int rc = service.Run();
  scheduler.Drain();
  (*settler)->Drain(static_cast<int>(flags.GetInt("settle-drain-ms")));
  return rc;  // the settler logs each result it abandons
}
