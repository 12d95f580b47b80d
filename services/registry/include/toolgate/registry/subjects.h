// The bus subjects the registry serves and publishes (see proto/toolgate/v1/toolgate.proto).
#pragma once

namespace toolgate::registry {

inline constexpr const char* kInvokeSubject = "tg.invoke.registry";      // InvokeJob, queue group
inline constexpr const char* kNextStageSubject = "tg.invoke.secrets";    // InvokeJob onwards
inline constexpr const char* kCodeSubject = "tg.registry.code";          // CodeRequest -> CodeReply
inline constexpr const char* kExecutionSubject = "tg.events.execution";  // ExecutionRecorded
inline constexpr const char* kFunctionChangedSubject = "tg.events.function_changed";
inline constexpr const char* kWorkspaceChangedSubject = "tg.events.workspace_changed";
inline constexpr const char* kQueueGroup = "registry";

}  // namespace toolgate::registry
