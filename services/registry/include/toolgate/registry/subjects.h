// The bus subjects the registry serves and publishes (see proto/toolgate/v1/toolgate.proto).
#pragma once

#include "toolgate/core/subjects.h"

namespace toolgate::registry {

using core::kCodeSubject;
inline constexpr const char* kExecutionSubject = core::kExecutionEventsSubject;
using core::kFunctionChangedSubject;
using core::kFunctionViewSubject;
using core::kWorkspaceChangedSubject;
inline constexpr const char* kQueueGroup = "registry";

}  // namespace toolgate::registry
