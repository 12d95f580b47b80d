// The bus subjects the secrets service serves and publishes (see proto/toolgate/v1/toolgate.proto).
#pragma once

namespace toolgate::secrets {

inline constexpr const char* kInvokeSubject = "tg.invoke.secrets";     // InvokeJob, queue group
inline constexpr const char* kNextStageSubject = "tg.invoke.billing";  // InvokeJob onwards
inline constexpr const char* kSecretChangedSubject = "tg.events.secret_changed";
inline constexpr const char* kQueueGroup = "secrets";

}  // namespace toolgate::secrets
