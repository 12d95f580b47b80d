// The bus subjects the secrets service serves and publishes (see proto/toolgate/v1/toolgate.proto).
#pragma once

#include "toolgate/core/subjects.h"

namespace toolgate::secrets {

inline constexpr const char* kInvokeSubject = core::kSecretsStageSubject;  // queue group
inline constexpr const char* kNextStageSubject = core::kBillingStageSubject;
using core::kSecretChangedSubject;
inline constexpr const char* kQueueGroup = "secrets";

}  // namespace toolgate::secrets
