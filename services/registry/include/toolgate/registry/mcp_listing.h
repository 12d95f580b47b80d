// The listing of an MCP version (its handler's tools, resources, resource templates and prompts),
// stored once by the edge that ran the handler's list methods right after the version was
// published:
//   tg.registry.mcp_listing (queue "registry")  McpListingSet -> McpListingSetReply
//
// The registry keeps it in registry.versions.mcp_listing, as
// {"tools": [...], "resources": [...], "resource_templates": [...], "prompts": [...]}, and
// LoadWorkspaceTools hands it to the workspace endpoint, which then lists without running any
// handler. A listing is written once, like the version: the edge is trusted with its content
// (only the edge may publish the subject), but not with rewriting what a client has been shown.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "toolgate/bus/service.h"
#include "toolgate/core/subjects.h"
#include "toolgate/pg/pg.h"
#include "toolgate/v1/toolgate.pb.h"

namespace toolgate::registry {

using core::kMcpListingSubject;

// Bounds of each of a listing's four arrays: its JSON text, and its entries.
inline constexpr size_t kMaxMcpListingArrayBytes = 256 * 1024;
inline constexpr size_t kMaxMcpListingEntries = 500;

// The refusal of the first of listing's arrays (tools_json, resources_json,
// resource_templates_json, prompts_json, in that order) that is not a JSON array of at most
// kMaxMcpListingEntries objects in at most kMaxMcpListingArrayBytes: a validation_failed
// problem naming the field ("listing.tools_json"). nullopt when all four pass; "" counts as
// "[]". Pure.
std::optional<v1::Problem> CheckMcpListing(const v1::McpListing& listing);

// How StoreMcpListing ended; only kStored changed anything.
enum class McpListingOutcome {
  kStored,
  kFunctionNotFound,
  kNotMcp,           // the function is not an MCP function
  kVersionNotFound,  // no such version is published
  kAlreadyListed,    // the version has its listing: it is never replaced
};

// Stores listing (checked by CheckMcpListing) as version of function_id's listing, in one
// UPDATE that only a version of an MCP function without a listing matches; when it matches
// nothing, a second statement says why. function_id must be a UUID. Unavailable when
// PostgreSQL cannot answer. Thread-safe (the pool is).
Result<McpListingOutcome> StoreMcpListing(pg::Pool& pool, const std::string& function_id,
                                          const std::string& version,
                                          const v1::McpListing& listing);

// Answers one McpListingSet: a problem unless it was well-formed, passed CheckMcpListing and was
// stored (bad_request, validation_failed, function_not_found, version_not_found, conflict,
// service_unavailable); after storing, publishes FunctionChanged on bus so that every edge drops
// its cached view of the function. Thread-safe.
v1::McpListingSetReply SetMcpListing(pg::Pool& pool, bus::Bus& bus, const std::string& request);

// Answers kMcpListingSubject on service's worker pool. pool must outlive the service.
Status ServeMcpListing(bus::Service& service, pg::Pool& pool);

}  // namespace toolgate::registry
