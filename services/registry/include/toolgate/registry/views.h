// The JSON documents of the registry's management API (contract section 6). Pure functions.
#pragma once

#include <string>
#include <vector>

#include "toolgate/base/json_writer.h"
#include "toolgate/registry/store.h"

namespace toolgate::registry {

// GET /functions/{id}: the function's fields, organization {id, name}, versions (highest first,
// as given) [{version, runtime, compute_type, published_at, price_micro_usd, egress}],
// latest_version, and of the latest version (latest, may be nullptr) runtime, compute_type,
// input_schema, declared_keys, examples, timeout_ms, memory_mb, egress (as published), handler
// and bundle {digest, size_bytes, files} (both null for single-file code): all null while no
// version is published. Also rating {average,
// count}, executions, and, with stats, last_7_days {executions, success_rate, p50_ms} (the
// rates null without executions; p50_ms is the upper bound of the median's latency bucket).
std::string FunctionDetailJson(const FunctionRecord& function,
                               const std::vector<VersionRecord>& versions,
                               const VersionRecord* latest, const WeekStats* stats = nullptr);

// Writes "last_7_days": {executions, success_rate, p50_ms}, as the detail and the marketplace
// cards show it: success_rate with three decimals rounded down, null without executions;
// p50_ms (the upper bound of the median's latency bucket) null when negative.
void WriteLastSevenDays(JsonWriter& w, int64_t executions, int64_t succeeded, int64_t p50_ms);

// POST /functions/{id}/versions: {function_id, version, mcp, runtime, compute_type,
// input_schema, declared_keys, examples, timeout_ms, memory_mb, price_micro_usd, egress, handler,
// bundle, published_at}; mcp is the function's flag, so that the edge knows from the answer alone
// that a publish needs the version's MCP listing.
std::string VersionDetailJson(const VersionRecord& version, bool mcp);

// GET /workspace/tools: {owned: [summary...], added: [summary...]}, a summary being
// {function_id, name, description, organization {id, name}, latest_version, runtime,
// compute_type, price_micro_usd, visibility, mcp}.
std::string WorkspaceJson(const std::vector<FunctionSummary>& owned,
                          const std::vector<FunctionSummary>& added);

}  // namespace toolgate::registry
