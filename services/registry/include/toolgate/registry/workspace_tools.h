// The functions an organization can use as tools, for the edge's workspace MCP endpoint (/mcp):
//   tg.registry.workspace_tools (queue "registry")  WorkspaceToolsRequest -> WorkspaceToolsReply
//
// Every answer reads PostgreSQL (one indexed statement): an MCP client's tools/list must change
// the moment the organization adds or removes a function, and a cache would have to race the
// broadcast that reports the change.
#pragma once

#include <string>
#include <vector>

#include "toolgate/bus/service.h"
#include "toolgate/core/subjects.h"
#include "toolgate/pg/pg.h"
#include "toolgate/v1/toolgate.pb.h"

namespace toolgate::registry {

using core::kWorkspaceToolsSubject;

// The functions org_id owns (oldest first), then the public functions of other organizations it
// has added (in the order added); only functions with a published version, each with its latest
// version's input schema and declared keys, and its MCP listing (listing, so has_listing()) when it
// has one (mcp_listing.h). Unavailable when PostgreSQL cannot answer.
// Thread-safe (the pool is).
Result<std::vector<v1::WorkspaceTool>> LoadWorkspaceTools(pg::Pool& pool,
                                                          const std::string& org_id);

// Answers kWorkspaceToolsSubject on service's worker pool. pool must outlive the service.
Status ServeWorkspaceTools(bus::Service& service, pg::Pool& pool);

}  // namespace toolgate::registry
