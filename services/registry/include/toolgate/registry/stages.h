// The registry's bus work besides its management routes:
//   tg.invoke.registry (queue "registry")  resolve the function and version of an invocation
//                                          (DecideInvoke) and pass the job to tg.invoke.secrets
//                                          (tg.invoke.billing when the version declares no
//                                          keys), or answer the edge with the problem
//   tg.registry.code (queue "registry")    CodeRequest -> CodeReply for executors
//   tg.events.execution (queue "registry") count executions per function, caller and day
//   tg.events.function_changed, tg.events.workspace_changed (every replica)  drop cache entries
#pragma once

#include "toolgate/bus/service.h"
#include "toolgate/core/invoke_stage.h"
#include "toolgate/registry/code_cache.h"
#include "toolgate/registry/execution_counter.h"
#include "toolgate/registry/function_cache.h"

namespace toolgate::registry {

class RegistryStages {
 public:
  // Every argument must outlive the stages. Thread-safe.
  RegistryStages(bus::Bus& bus, FunctionCache& functions, CodeCache& code,
                 ExecutionCounter& executions);

  // Subscribes every handler above on service; a cache miss of an invocation then runs on the
  // service's worker pool.
  Status Subscribe(bus::Service& service);

  void HandleInvoke(bus::Message&& m);
  void HandleCode(bus::Message&& m);
  void HandleExecution(bus::Message&& m);
  void HandleFunctionChanged(bus::Message&& m);
  void HandleWorkspaceChanged(bus::Message&& m);

 private:
  void Resolve(core::StageInput in, const trace::TraceContext& parent);

  bus::Bus& bus_;
  ThreadPool* pool_ = nullptr;  // set by Subscribe; without it every call is decided inline
  FunctionCache& functions_;
  CodeCache& code_;
  ExecutionCounter& executions_;
};

}  // namespace toolgate::registry
