// The bus subjects of the invoke path and of the caches around it, named once for every service
// that publishes or serves them (messages: proto/toolgate/v1/toolgate.proto).
#pragma once

namespace toolgate::core {

// The job's next stages once the edge has decided key and version: secrets only when the
// version declares keys to resolve, billing otherwise.
inline constexpr const char* kSecretsStageSubject = "tg.invoke.secrets";  // InvokeJob
inline constexpr const char* kBillingStageSubject = "tg.invoke.billing";  // InvokeJob

// The owners' answers to the edge's cache misses, and the edge's batched report of key uses.
inline constexpr const char* kKeyLookupSubject = "tg.auth.key_lookup";  // KeyLookupRequest
inline constexpr const char* kKeysUsedSubject = "tg.auth.keys_used";    // KeysUsed
inline constexpr const char* kFunctionViewSubject = "tg.registry.function_view";

// Broadcasts (no queue group) that invalidate cached decisions on every replica.
inline constexpr const char* kKeyRevokedSubject = "tg.events.key_revoked";  // KeyRevoked
inline constexpr const char* kFunctionChangedSubject = "tg.events.function_changed";
inline constexpr const char* kWorkspaceChangedSubject = "tg.events.workspace_changed";

}  // namespace toolgate::core
