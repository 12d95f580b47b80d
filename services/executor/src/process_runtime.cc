#include "toolgate/executor/process_runtime.h"

#include <optional>

#include "toolgate/base/log.h"
#include "toolgate/base/time.h"
#include "toolgate/executor/bundle_unpack.h"
#include "toolgate/executor/egress_fetch.h"
#include "toolgate/executor/process_worker.h"

namespace toolgate::executor {
namespace {

constexpr uint64_t kMiB = 1 << 20;
// Address space Python needs beyond the handler's memory: the interpreter, its libraries and
// thread stacks.
constexpr uint64_t kPythonAddressSpaceRoom = 128 * kMiB;
// Address space the Lua worker needs beyond the handler's memory: itself, its libraries, and
// the JSON and log buffers its allocator does not count.
constexpr uint64_t kLuaAddressSpaceRoom = 128 * kMiB;
// The Lua worker stops a handler at its deadline itself and stays warm; it is killed only
// when a call in C ignores the hook this long past the deadline.
constexpr int64_t kLuaKillGraceMs = 100;
// Data node needs beyond the handler's heap: V8's own structures and buffers (about 48 MiB
// measured at start).
constexpr uint64_t kNodeDataRoom = 96 * kMiB;

ExecutionOutcome PlatformFailure(std::string what) {
  ExecutionOutcome out;
  out.kind = ExecutionOutcome::Kind::kPlatformFailure;
  out.failure = std::move(what);
  return out;
}

// A worker process and what its sandbox shows at /bundle: a view a bundle can be shown on later,
// or the bundle bound when the sandbox was built. The process is stopped first, then the view
// unmounted, then the bundle's files released.
class BundleWorker : public Worker {
 public:
  BundleWorker(std::unique_ptr<Worker> process, std::unique_ptr<BundleView> view, BundleRef bound)
      : bound_(std::move(bound)), view_(std::move(view)), process_(std::move(process)) {}
  ~BundleWorker() override { process_.reset(); }
  WorkerReply Call(const Invocation& invocation, int64_t deadline_us) override {
    return process_->Call(invocation, deadline_us);
  }
  bool Alive() override { return process_->Alive(); }
  Status ShowBundle(BundleRef bundle) override {
    if (!view_) return Status::Internal("this worker's sandbox has no bundle view");
    return view_->Show(std::move(bundle));
  }

 private:
  BundleRef bound_;
  std::unique_ptr<BundleView> view_;
  std::unique_ptr<Worker> process_;
};

std::string PoolKey(std::string_view runtime, const Invocation& inv, int device) {
  std::string key;
  for (std::string_view part : {runtime, inv.function_id, inv.version, inv.caller_org_id}) {
    key.append(part);
    key.push_back('\0');
  }
  key.append(std::to_string(device));
  return key;
}

// What a worker process depends on before its first call (WorkerSandboxSpec, and the options
// StartWorker derives from the same values): "python 128MB", "python 128MB gpu0", and with
// its bundle's digest for a bundle version's (a shape no spare has).
std::string WorkerShape(std::string_view runtime, int64_t memory_mb, int device,
                        const BundleRef& bundle = nullptr) {
  std::string shape(runtime);
  shape += " " + std::to_string(memory_mb) + "MB";
  if (device >= 0) shape += " gpu" + std::to_string(device);
  if (bundle) shape += " bundle " + bundle->digest;
  return shape;
}

// A worker of language with memory_mb on device (-1: none), holding pool slot, its cgroup in
// cgroup_group ("spare", or the organization's for a worker started for its call), with a
// bundle view when config has them, else bound to bundle (null: none).
Result<std::unique_ptr<Worker>> StartWorker(Language language, const ProcessRuntimeConfig& config,
                                            const RuntimeLimits& limits, int64_t memory_mb,
                                            int device, int slot, const std::string& cgroup_group,
                                            const BundleRef& bundle = nullptr) {
  std::unique_ptr<BundleView> view;
  if (config.bundle_views != nullptr) {
    auto made = config.bundle_views->NewView();
    if (!made.ok()) return made.status();
    view = std::move(*made);
  }
  const std::string shown = view ? view->dir() : bundle ? bundle->dir : std::string();
  const SandboxSpec spec = WorkerSandboxSpec(language, config, memory_mb, slot, device, shown);
  auto plan = BuildSandboxPlan(spec);
  if (!plan.ok()) return plan.status();
  ProcessWorkerOptions options;
  options.memory_mb = memory_mb;
  options.cpu_seconds = spec.limits.cpu_seconds;
  // Room for a body of the largest size with every byte escaped (\u00XX), and the envelope.
  options.max_result_bytes = limits.max_response_bytes * 6 + 4096;
  options.max_response_bytes = limits.max_response_bytes;
  options.max_log_bytes = limits.max_log_bytes;
  options.watch_memory = config.gpu && config.cgroups == nullptr;
  options.cgroups = config.cgroups;
  options.cgroup_group = cgroup_group;
  // The whole sandbox together: the version's memory (tmpfs pages and page cache included),
  // its process limit, and its CPU quota.
  options.cgroup_limits.memory_bytes = static_cast<uint64_t>(std::max<int64_t>(memory_mb, 1)) << 20;
  options.cgroup_limits.pids = spec.limits.processes;
  options.cgroup_limits.cpus = config.sandbox_cpus;
  options.allow_new_threads = config.gpu;
  options.egress = config.egress;
  if (language == Language::kLua) {
    options.stops_at_deadline = true;
    options.kill_grace_ms = kLuaKillGraceMs;
  }
  auto worker = ProcessWorker::Start(*plan, options);
  if (!worker.ok()) return worker.status();
  if (!view && !bundle) return std::unique_ptr<Worker>(std::move(*worker));
  return std::unique_ptr<Worker>(
      new BundleWorker(std::move(*worker), std::move(view), view ? nullptr : bundle));
}

}  // namespace

int64_t DefaultMemoryMb(Language language) {
  return language == Language::kPython ? 256 : 128;
}

SandboxSpec WorkerSandboxSpec(Language language, const ProcessRuntimeConfig& config,
                              int64_t memory_mb, int slot, int device,
                              const std::string& bundle_dir) {
  SandboxSpec spec;
  const uint64_t memory = static_cast<uint64_t>(std::max<int64_t>(memory_mb, 1)) * kMiB;
  const std::string runtime = kSandboxRuntimeDir;
  if (language == Language::kPython) {
    // -I: no user site, no PYTHON* variables, no script directory on sys.path; -S: no site,
    // so none of the host's site-packages (worker.py adds a virtual environment's own, the
    // operator's choice); -B: no .pyc writes; -u: output reaches the log as it is printed.
    spec.argv = {config.python, "-I", "-S", "-B", "-u", runtime + "/python/worker.py"};
    if (!config.gpu) spec.limits.address_space_bytes = memory + kPythonAddressSpaceRoom;
  } else if (language == Language::kLua) {
    // Lua's allocator holds the handler to memory_mb; the rlimit is a backstop.
    spec.argv = {runtime + "/lua/toolgate-lua-worker"};
    spec.limits.address_space_bytes = memory + kLuaAddressSpaceRoom;
  } else {
    spec.argv = {config.node,
                 "--max-old-space-size=" + std::to_string(std::max<int64_t>(memory_mb, 16)),
                 "--no-addons", runtime + "/javascript/worker.js"};
    if (!config.gpu) spec.limits.data_bytes = memory + kNodeDataRoom;
  }
  spec.env = {"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/tmp", "TMPDIR=/tmp", "LANG=C.UTF-8"};
  if (config.egress != nullptr) {
    for (std::string& variable : EgressProxyEnv()) spec.env.push_back(std::move(variable));
  }
  spec.read_only_binds = {{config.runtime_dir, runtime}};
  if (!bundle_dir.empty()) spec.data_binds = {{bundle_dir, kSandboxBundleDir}};
  if (!config.ca_bundle.empty()) {
    spec.read_only_binds.push_back({config.ca_bundle, kSandboxCaBundle});
    spec.env.push_back(std::string(kCaFileEnv) + "=" + kSandboxCaBundle);
    spec.env.push_back(std::string("NODE_EXTRA_CA_CERTS=") + kSandboxCaBundle);
  }
  spec.system_paths.insert(spec.system_paths.end(), config.extra_read_only.begin(),
                           config.extra_read_only.end());
  spec.host_root_uid = config.uid_base;
  spec.host_root_gid = config.uid_base;
  spec.host_uid = config.uid_base + 1 + static_cast<uid_t>(slot);
  spec.host_gid = config.uid_base + 1 + static_cast<gid_t>(slot);
  spec.limits.tmp_bytes = config.tmp_bytes;
  if (config.gpu) {
    // CUDA starts many threads and files, and reads the PCI topology from /sys.
    spec.limits.processes = 512;
    spec.limits.open_files = 4096;
    spec.system_paths.push_back("/sys");
    if (device >= 0) {
      spec.devices = GpuDeviceNodes(device);
      spec.env.push_back("CUDA_VISIBLE_DEVICES=" + std::to_string(device));
      spec.env.push_back("CUDA_DEVICE_ORDER=PCI_BUS_ID");  // the order of nvidia-smi and /dev
    }
  }
  return spec;
}

ProcessRuntime::ProcessRuntime(Language language, ProcessRuntimeConfig config, RuntimeLimits limits,
                               WorkerPool& pool, GpuSlots* gpu)
    : language_(language), config_(std::move(config)), limits_(limits), pool_(pool), gpu_(gpu) {
  const int64_t memory_mb = DefaultMemoryMb(language);
  const std::vector<int> devices = gpu_ != nullptr ? gpu_->devices() : std::vector<int>{-1};
  for (int device : devices) {
    pool_.KeepSpares(WorkerShape(name(), memory_mb, device), [language, config = config_, limits,
                                                              memory_mb, device](int slot) {
      return StartWorker(language, config, limits, memory_mb, device, slot, "spare");
    });
  }
}

std::string_view ProcessRuntime::name() const {
  switch (language_) {
    case Language::kPython:
      return "python";
    case Language::kJavaScript:
      return "javascript";
    case Language::kLua:
      return "lua";
  }
  return "";
}

ExecutionOutcome ProcessRuntime::Run(const Invocation& call) {
  // The worker reads a bundle where its sandbox shows it.
  Invocation inv = call;
  if (inv.bundle) {
    if (!IsBundlePath(inv.handler)) {
      return PlatformFailure("not a path inside the bundle: " + std::string(inv.handler));
    }
    inv.bundle_root = kSandboxBundleDir;
  }
  const int64_t deadline_us = MonotonicUs() + inv.timeout_ms * 1000;
  // Held until the call is over: at most calls_per_gpu calls on a device at once.
  std::optional<GpuSlots::Slot> gpu_slot =
      gpu_ != nullptr ? gpu_->Acquire(deadline_us) : std::nullopt;
  if (gpu_ != nullptr && !gpu_slot) {
    return PlatformFailure("no GPU became free before the call's deadline");
  }
  const int device = gpu_slot ? gpu_slot->device() : -1;

  const std::string key = PoolKey(name(), inv, device);
  // With views, a bundle is shown to whichever worker the call gets; without, it is bound into
  // a worker started for it.
  const bool show = inv.bundle && config_.bundle_views != nullptr;
  const BundleRef bind = show ? nullptr : inv.bundle;
  const std::string shape = WorkerShape(name(), inv.memory_mb, device, bind);
  auto start = [&](int slot) {
    return StartWorker(language_, config_, limits_, inv.memory_mb, device, slot,
                       CgroupTree::GroupFor(inv.caller_org_id), bind);
  };

  WorkerReply reply;
  // A worker found dead before the call reached it is replaced once; the call never ran.
  for (int attempt = 0; attempt < 2; ++attempt) {
    auto lease = pool_.Acquire(key, shape, start, deadline_us / 1000);
    if (!lease.ok()) return PlatformFailure("no worker: " + lease.status().ToString());
    if (show && lease->fresh) {
      Status shown = lease->worker->ShowBundle(inv.bundle);
      if (!shown.ok()) {
        pool_.Release(std::move(*lease), /*reusable=*/false);
        return PlatformFailure("cannot show the bundle: " + shown.ToString());
      }
    }
    reply = lease->worker->Call(inv, deadline_us);
    pool_.Release(std::move(*lease), reply.reusable);
    if (reply.kind != WorkerReply::Kind::kNotDelivered) break;
  }

  // A failure before the tool's code started (the worker's own decoding of the call, a
  // bootstrap that died) is the platform's: 502, not charged (contract section 4).
  const bool failed = reply.kind == WorkerReply::Kind::kError ||
                      reply.kind == WorkerReply::Kind::kCrashed ||
                      reply.kind == WorkerReply::Kind::kMemory;
  if (failed && !reply.started) {
    log::Warn("a worker failed before the tool's code started")
        .Str("execution_id", inv.execution_id)
        .Str("function_id", inv.function_id)
        .Str("error", reply.kind == WorkerReply::Kind::kError
                          ? reply.error_type + ": " + reply.error_message
                          : reply.failure);
    ExecutionOutcome out = PlatformFailure("the worker failed before the handler started");
    out.logs = std::move(reply.logs);
    return out;
  }

  ExecutionOutcome out;
  out.runtime_ms = reply.runtime_ms;
  out.cpu_ms = reply.cpu_ms;
  out.memory_used_mb = reply.memory_used_mb;
  out.logs = std::move(reply.logs);
  out.egress = std::move(reply.egress);
  switch (reply.kind) {
    case WorkerReply::Kind::kValue:
      CompleteWithReturnValue(reply.value, limits_, &out);
      break;
    case WorkerReply::Kind::kError:
      CompleteWithError(reply.error_type, reply.error_message, &out);
      break;
    case WorkerReply::Kind::kTimeout:
      out.kind = ExecutionOutcome::Kind::kTimeout;
      break;
    case WorkerReply::Kind::kMemory:
      CompleteWithError(
          "MemoryLimitExceeded",
          "the handler exceeded its memory limit of " + std::to_string(inv.memory_mb) + " MB",
          &out);
      break;
    case WorkerReply::Kind::kCrashed:
      log::Warn("a worker died during a call")
          .Str("execution_id", inv.execution_id)
          .Str("function_id", inv.function_id)
          .Str("version", inv.version)
          .Str("error", reply.failure);
      CompleteWithError("WorkerCrashed", "the process running the handler " + reply.failure, &out);
      break;
    case WorkerReply::Kind::kNotDelivered:
      return PlatformFailure("two workers in a row were dead before the call reached them");
    case WorkerReply::Kind::kCancelled:
      // Charged as it ran when the tool's code had started; otherwise nothing ran.
      out.kind = reply.started ? ExecutionOutcome::Kind::kCancelled
                               : ExecutionOutcome::Kind::kCancelledBeforeStart;
      break;
  }
  return out;
}

}  // namespace toolgate::executor
