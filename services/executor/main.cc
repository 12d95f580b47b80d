// toolgate-executor: runs functions for one compute pool. See job_executor.h and lua_runtime.h.
#include <memory>
#include <thread>
#include <vector>

#include "toolgate/base/crypto.h"
#include "toolgate/base/flags.h"
#include "toolgate/base/log.h"
#include "toolgate/bus/service.h"
#include "toolgate/core/service_main.h"
#include "toolgate/executor/code_store.h"
#include "toolgate/executor/executor_keys.h"
#include "toolgate/executor/job_executor.h"
#include "toolgate/executor/lua_runtime.h"
#include "toolgate/executor/settler.h"

int main(int argc, char** argv) {
  using namespace toolgate;
  using namespace toolgate::executor;
  const std::string kName = "toolgate-executor";
  Flags flags(kName, "Runs functions on the CPU or GPU pool: Lua in-process.");
  core::DefineCommonFlags(flags);
  unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  flags.Define("threads", std::to_string(2 * cores),
               "worker threads running executions (default: 2 x hardware threads)");
  flags.Define("pool", "cpu", "compute pool served: cpu or gpu (tg.exec.<pool>.<runtime>)");
  flags.Define("gpu-devices", "", "GPU device ids for --pool gpu, comma-separated (e.g. 0,1)");
  flags.Define("executor-key-file", "./data/keys/executor.key",
               "base64 X25519 secret key of the pool; opens the sealed secrets of each call");
  flags.Define("max-response-bytes", "6291456", "largest response body (500 ResponseTooLarge)");
  flags.Define("max-log-bytes", "65536", "largest execution log kept per call");
  flags.Define("code-cache-bytes", "268435456", "memory for cached function code (LRU)");
  flags.Define("registry-timeout-ms", "2000", "how long a code request to the registry may take");
  flags.Define("settle-drain-ms", "30000",
               "on shutdown, how long to keep settling results billing has not acked");
  flags.Parse(argc, argv);

  const std::string pool = flags.Get("pool");
  if (pool != "cpu" && pool != "gpu") core::Die(kName, "--pool", "must be cpu or gpu");
  if (pool == "gpu" && flags.Get("gpu-devices").empty()) {
    core::Die(kName, "--pool gpu", "needs --gpu-devices (the GPU ids this executor may use)");
  }
  InitCrypto();
  auto keys = ExecutorKeys::LoadFile(flags.Get("executor-key-file"));
  if (!keys.ok()) core::Die(kName, "cannot load --executor-key-file", keys.status().message());

  auto bus = core::StartService("executor", flags);
  bus::BusOptions settle_options;
  settle_options.url = flags.Get("nats-url");
  settle_options.name = "executor-settler";
  auto settler = Settler::Start(settle_options);
  if (!settler.ok()) core::Die(kName, "cannot connect the settler", settler.status().ToString());

  RuntimeLimits limits;
  limits.max_response_bytes = static_cast<size_t>(flags.GetInt("max-response-bytes"));
  limits.max_log_bytes = static_cast<size_t>(flags.GetInt("max-log-bytes"));
  // The runtimes of each pool. GPU work is Python only (contract section 6); Python and
  // JavaScript join here as their worker pools are built.
  std::vector<std::unique_ptr<Runtime>> owned;
  if (pool == "cpu") owned.push_back(std::make_unique<LuaRuntime>(limits));
  std::vector<Runtime*> runtimes;
  for (auto& r : owned) runtimes.push_back(r.get());
  if (runtimes.empty()) log::Warn("no runtime serves this pool yet").Str("pool", pool);

  RegistryCodeSource registry(*bus, static_cast<int>(flags.GetInt("registry-timeout-ms")));
  CodeStore code(static_cast<size_t>(flags.GetInt("code-cache-bytes")), registry);
  JobExecutor executor(**keys, code, runtimes);
  bus::Service service("executor", *bus, static_cast<size_t>(flags.GetInt("threads")));
  Status s = ServeJobs(service, pool, executor, **settler);
  if (!s.ok()) core::Die(kName, "cannot subscribe", s.ToString());
  log::Info("serving")
      .Str("pool", pool)
      .Int("runtimes", static_cast<int64_t>(runtimes.size()))
      .Str("public_key", Base64Encode((*keys)->public_key()));

  // Run returns once no job is taken any more and the running ones have finished; their
  // results may still wait for billing.
  int rc = service.Run();
  (*settler)->Drain(static_cast<int>(flags.GetInt("settle-drain-ms")));
  return rc;  // the settler logs each result it abandons
}
