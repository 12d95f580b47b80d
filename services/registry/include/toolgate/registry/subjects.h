// The bus subjects the registry serves and publishes (see proto/toolgate/v1/toolgate.proto).
#pragma once

#include "toolgate/core/subjects.h"

namespace toolgate::registry {

inline constexpr const char* kCodeSubject = "tg.registry.code";          // CodeRequest -> CodeReply
inline constexpr const char* kExecutionSubject = "tg.events.execution";  // ExecutionsRecorded
using core::kFunctionChangedSubject;
using core::kFunctionViewSubject;
using core::kWorkspaceChangedSubject;
inline constexpr const char* kQueueGroup = "registry";

}  // namespace toolgate::registry
