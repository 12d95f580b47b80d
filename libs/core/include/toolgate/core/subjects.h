// Every bus subject Toolgate uses, built and parsed here and nowhere else (messages:
// proto/toolgate/v1/toolgate.proto; who may publish and subscribe: bus_permissions.h).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "toolgate/bus/bus.h"
#include "toolgate/v1/toolgate.pb.h"

namespace toolgate::core {

// The invoke path. The edge decides key and version, then sends the job to secrets only when
// the version declares keys to resolve, to billing otherwise; billing holds and sends it to the
// executor pool of its compute type and runtime; the executor sends the result to billing.
inline constexpr const char* kSecretsStageSubject = "tg.invoke.secrets";  // InvokeJob
inline constexpr const char* kBillingStageSubject = "tg.invoke.billing";  // InvokeJob
// "tg.exec.<pool>.<runtime>" (InvokeJob), or nullopt for an unspecified or unknown runtime or
// compute type (nothing unknown is spliced into a subject).
std::optional<std::string> ExecSubject(v1::ComputeType compute, v1::Runtime runtime);
// The same from the wire names an executor serves ("cpu"/"gpu", "lua"/"python"/"javascript").
std::string ExecSubject(std::string_view pool, std::string_view runtime_name);
// "tg.billing.settle.<execution_id>" (ExecutionResult, acked): any billing replica settles it.
std::string SettleSubject(std::string_view execution_id);
inline constexpr const char* kSettleSubjects = "tg.billing.settle.*";
// "tg.billing.unserved.<execution_id>": the reply subject of an executor job. Nothing is
// published there; only the server's "no responders" notice lands there, on the publishing
// billing replica.
std::string UnservedSubject(std::string_view execution_id);
inline constexpr const char* kUnservedSubjects = "tg.billing.unserved.*";
// The execution id of an unserved subject; empty when subject is not one or its id is invalid.
std::string ExecutionIdOfUnservedSubject(std::string_view subject);
// True for 1 to 128 characters of [A-Za-z0-9_-] (a UUID is one): safe as a subject token and a
// Redis key part.
bool IsValidExecutionId(std::string_view id);

// Asynchronous executions (Prefer: respond-async): billing queues each accepted job (InvokeJob)
// in the JetStream stream kAsyncStream, on "tg.async.queue.<org_id>" (an id that is not a safe
// token goes on "tg.async.queue._"); every billing replica's dispatcher takes jobs from its
// durable consumer kAsyncDispatchConsumer.
inline constexpr const char* kAsyncStream = "TG_ASYNC";
inline constexpr const char* kAsyncQueueSubjects = "tg.async.queue.*";
inline constexpr const char* kAsyncDispatchConsumer = "dispatch";
std::string AsyncQueueSubject(std::string_view org_id);
// CancelExecution: billing -> every executor (no queue group); the one running it kills it.
inline constexpr const char* kCancelExecutionSubject = "tg.exec.cancel";

// The owners' answers to the edge's cache misses, and the edge's batched report of key uses.
inline constexpr const char* kKeyLookupSubject = "tg.auth.key_lookup";  // KeyLookupRequest
inline constexpr const char* kKeysUsedSubject = "tg.auth.keys_used";    // KeysUsed
inline constexpr const char* kFunctionViewSubject = "tg.registry.function_view";
inline constexpr const char* kAuthenticateSubject = "tg.auth.authenticate";  // sessions, keys
inline constexpr const char* kCodeSubject = "tg.registry.code";  // CodeRequest -> CodeReply
inline constexpr const char* kWorkspaceToolsSubject = "tg.registry.workspace_tools";
// McpListingSet -> McpListingSetReply: the edge stores an MCP version's listing.
inline constexpr const char* kMcpListingSubject = "tg.registry.mcp_listing";
// GrantUsageRequest -> GrantUsageReply: auth asks billing what OAuth grants have spent.
inline constexpr const char* kGrantUsageSubject = "tg.billing.grant_usage";
// ComputeMediansRequest -> ComputeMediansReply: the edge asks billing what versions' recent
// calls cost in compute, for the prices MCP tools/list shows.
inline constexpr const char* kComputeMediansSubject = "tg.billing.compute_medians";
// OrganizationLookupRequest -> OrganizationLookupReply: billing asks auth before an operator's
// credit grant whether the organization exists and who the operator is.
inline constexpr const char* kOrganizationLookupSubject = "tg.auth.organization_lookup";

// Broadcasts (no queue group) that invalidate cached decisions on every replica.
inline constexpr const char* kKeyRevokedSubject = "tg.events.key_revoked";  // KeyRevoked
inline constexpr const char* kFunctionChangedSubject = "tg.events.function_changed";
inline constexpr const char* kWorkspaceChangedSubject = "tg.events.workspace_changed";
inline constexpr const char* kSecretChangedSubject = "tg.events.secret_changed";
inline constexpr const char* kMcpSessionEndedSubject = "tg.events.mcp_session_ended";
// An MCP session's logging/setLevel (McpSessionLogLevel), for every edge replica.
inline constexpr const char* kMcpSessionLogLevelSubject = "tg.events.mcp_session_log_level";
// Billing -> registry (queue "registry"): the executions one settlement batch recorded.
inline constexpr const char* kExecutionEventsSubject = "tg.events.execution";
// An MCP client's answer to a request an edge sent it on a handler's behalf, relayed by the
// replica that received it to every edge (McpClientAnswer); the one waiting takes it.
inline constexpr const char* kMcpClientAnswersSubject = "tg.edge.mcp_client_answers";
// A starting edge asks a running one for the ended MCP sessions (queue "edge").
inline constexpr const char* kMcpSessionsEndedSubject = "tg.edge.mcp_sessions_ended";

// "tg.<service>.http": a service's management API (HttpRequest -> HttpResponse).
std::string HttpSubject(std::string_view service);
// "tg.health.<service>": empty -> "ok" (built in libs/bus, whose Service answers it).
using bus::HealthSubject;

}  // namespace toolgate::core
