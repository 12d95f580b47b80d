// ProcessRuntime: Python, JavaScript and Lua handlers, run in sandboxed worker processes.
//
// Each call goes to a warm worker of its (runtime, function version, caller organization[,
// GPU device]) pool key in the WorkerPool, or a new one (sandbox.h) that loads the version's
// module first. Python is /usr/bin/python3 running runtimes/python/worker.py; JavaScript is
// node running runtimes/javascript/worker.js; Lua is runtimes/lua/toolgate-lua-worker, which
// hosts LuaRuntime (lua_worker.h). The Python and JavaScript workers do contract section 3's
// part a process can do (calling service_handler(event, context) with the secrets in
// context.env and os.environ / process.env, removed again after the call; encoding the return
// value as JSON; naming an exception's class); the rest (normalisation, the deadline, memory,
// crashes) is here.
//
// Cold starts: the runtime names to the pool the shape of the workers most calls need (its
// language at DefaultMemoryMb, on each GPU device), so the pool keeps spares of it: a version's
// first call then takes an interpreter already started in its sandbox and only loads its module.
//
// Bundles: a bundle version's worker shows the version's unpacked bundle read-only at
// kSandboxBundleDir. With bundle_views, every worker's sandbox binds a view of its own there,
// and a bundle version's first call takes a spare (or starts a worker) like any other and
// mounts the bundle on its view before sending the call (docs/architecture.md has the measured
// cold starts). Without, the bundle is bound when the worker's sandbox is built, so a bundle
// version's workers are started for their key (their shape names the digest, which no spare
// has). Either way the worker holds the bundle's files on disk while it lives.
//
// Sealing: Python runs with -I -S (no site, no user site: sys.path is the standard library and,
// for a bundle, the bundle), and every sandbox hides the host's package directories
// (SandboxSpec::hidden_paths); the workers keep node's global module paths and Lua's require to
// the bundle.
//
// Memory: a CPU worker's memory is held by rlimits (Python: RLIMIT_AS at memory_mb plus room for
// the interpreter; node: V8's heap limit at memory_mb, and RLIMIT_DATA, since V8 reserves far
// more address space than it uses). A GPU worker has no address-space limit (the CUDA driver
// maps huge ranges) and is watched instead: its resident memory is sampled and it is killed
// past memory_mb.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "toolgate/executor/bundle_views.h"
#include "toolgate/executor/cgroup.h"
#include "toolgate/executor/gpu.h"
#include "toolgate/executor/runtime.h"
#include "toolgate/executor/sandbox.h"
#include "toolgate/executor/worker_pool.h"

namespace toolgate::executor {

enum class Language { kPython, kJavaScript, kLua };

struct ProcessRuntimeConfig {
  std::string python = "/usr/bin/python3";
  std::string node = "/usr/bin/node";
  // Holds python/worker.py, javascript/worker.js and lua/toolgate-lua-worker; shown read-only
  // at /runtime.
  std::string runtime_dir;
  // More host paths shown read-only at the same path (a Python virtual environment).
  std::vector<std::string> extra_read_only;
  // The combined CA bundle (ca_bundle.h) every sandbox trusts, shown at kSandboxCaBundle and
  // named by SSL_CERT_FILE and NODE_EXTRA_CA_CERTS; empty: the system's bundle only.
  std::string ca_bundle;
  // Worker slot N runs as host uid/gid uid_base + 1 + N; uid_base is every sandbox's root.
  uid_t uid_base = 200000;
  uint64_t tmp_bytes = 64 << 20;
  bool gpu = false;
  // Each sandbox's cgroup is made here (null: no cgroups, --insecure-no-cgroups); must outlive
  // the runtime and its pool.
  CgroupTree* cgroups = nullptr;
  // Where each worker's /bundle view is made, so that a bundle version's first call can take a
  // spare and show it the bundle (bundle_views.h); must outlive the runtime and its pool. Null:
  // a bundle version's workers bind their bundle when they start, and have no spares.
  BundleViews* bundle_views = nullptr;
  // CPU time one sandbox may use per wall time (its cgroup's quota); 0: no quota.
  double sandbox_cpus = 1;
  // Gives every sandbox its egress door and names it in the sandbox's environment (null: no
  // door, no network at all). Must outlive the runtime and its pool.
  EgressGateway* egress = nullptr;
};

// Where the worker runtimes live inside every sandbox.
constexpr const char* kSandboxRuntimeDir = "/runtime";
// Where a bundle version's worker sees its bundle (read-only, noexec).
constexpr const char* kSandboxBundleDir = "/bundle";

// The memory limit a version of language has when its publisher names none (contract section
// 5: 256 MB for Python, 128 MB otherwise): the one most versions keep, so spares have it.
int64_t DefaultMemoryMb(Language language);

// The sandbox of a worker of language for a version with memory_mb, in pool slot, on GPU
// device (-1 on a CPU executor), showing the bundle at bundle_dir (a host path; empty for a
// single-file version) at kSandboxBundleDir.
SandboxSpec WorkerSandboxSpec(Language language, const ProcessRuntimeConfig& config,
                              int64_t memory_mb, int slot, int device,
                              const std::string& bundle_dir = "");

class ProcessRuntime : public Runtime {
 public:
  // pool and gpu (null on a CPU executor) must outlive the runtime; several runtimes may share
  // a pool. Names this runtime's spare shapes to pool (whose factories own copies of what they
  // use, so the pool may outlive the runtime).
  ProcessRuntime(Language language, ProcessRuntimeConfig config, RuntimeLimits limits,
                 WorkerPool& pool, GpuSlots* gpu);

  std::string_view name() const override;
  // Thread-safe.
  ExecutionOutcome Run(const Invocation& invocation) override;

 private:
  Language language_;
  ProcessRuntimeConfig config_;
  RuntimeLimits limits_;
  WorkerPool& pool_;
  GpuSlots* gpu_;
};

}  // namespace toolgate::executor
