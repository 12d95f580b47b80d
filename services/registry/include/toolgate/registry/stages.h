// The registry's bus work besides its management routes:
//   tg.registry.function_view (queue "registry")  FunctionViewRequest -> FunctionViewReply: what
//                                          the edge's version cache needs to decide invocations
//   tg.registry.code (queue "registry")    CodeRequest -> CodeReply for executors
//   tg.events.execution (queue "registry") count executions per function, caller and day
//   tg.events.function_changed, tg.events.workspace_changed (every replica)  drop cache entries
#pragma once

#include "toolgate/bus/service.h"
#include "toolgate/registry/code_cache.h"
#include "toolgate/registry/execution_counter.h"
#include "toolgate/registry/function_cache.h"
#include "toolgate/v1/toolgate.pb.h"

namespace toolgate::registry {

// The edge's view of function_id as seen by caller_org_id, or the problem service_unavailable
// when the store cannot answer. May block on PostgreSQL (through the cache).
v1::FunctionViewReply ViewFunction(FunctionCache& functions, const std::string& function_id,
                                   const std::string& caller_org_id);

class RegistryStages {
 public:
  // Every argument must outlive the stages. Thread-safe.
  RegistryStages(bus::Bus& bus, FunctionCache& functions, CodeCache& code,
                 ExecutionCounter& executions);

  // Subscribes every handler above on service.
  Status Subscribe(bus::Service& service);

  void HandleCode(bus::Message&& m);
  void HandleFunctionView(bus::Message&& m);
  void HandleExecution(bus::Message&& m);
  void HandleFunctionChanged(bus::Message&& m);
  void HandleWorkspaceChanged(bus::Message&& m);

 private:
  bus::Bus& bus_;
  FunctionCache& functions_;
  CodeCache& code_;
  ExecutionCounter& executions_;
};

}  // namespace toolgate::registry
