// The bus subjects the registry serves and publishes (see proto/toolgate/v1/toolgate.proto).
#pragma once

namespace toolgate::registry {

inline constexpr const char* kInvokeSubject = "tg.invoke.registry";  // InvokeJob, queue group
// The job goes on to the secrets stage only when the version declares keys to resolve; with none
// that stage has nothing to do, so the job skips it and goes straight to billing.
inline constexpr const char* kSecretsStageSubject = "tg.invoke.secrets";  // InvokeJob onwards
inline constexpr const char* kBillingStageSubject = "tg.invoke.billing";  // InvokeJob onwards
inline constexpr const char* kCodeSubject = "tg.registry.code";          // CodeRequest -> CodeReply
inline constexpr const char* kExecutionSubject = "tg.events.execution";  // ExecutionsRecorded
inline constexpr const char* kFunctionChangedSubject = "tg.events.function_changed";
inline constexpr const char* kWorkspaceChangedSubject = "tg.events.workspace_changed";
inline constexpr const char* kQueueGroup = "registry";

}  // namespace toolgate::registry
