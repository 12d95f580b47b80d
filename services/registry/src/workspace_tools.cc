#include "toolgate/registry/workspace_tools.h"

#include "toolgate/base/json.h"
#include "toolgate/base/log.h"
#include "toolgate/core/problem.h"
#include "toolgate/core/runtime_names.h"

namespace toolgate::registry {
namespace {

// Owned and added functions in one statement, so the list is one consistent snapshot. The
// lateral join picks each function's latest version (numeric order of its parts).
constexpr const char* kWorkspaceToolsSql =
    "WITH listed AS ("
    "  SELECT f.id, 0 AS part, f.created_at AS listed_at FROM registry.functions f"
    "  WHERE f.org_id = $1"
    "  UNION ALL"
    "  SELECT f.id, 1, a.created_at FROM registry.functions f"
    "  JOIN registry.workspace_adds a ON a.function_id = f.id"
    "  WHERE a.org_id = $1 AND f.org_id <> $1 AND f.visibility = 'public')"
    "SELECT f.id::text, f.name, f.description, f.mcp, v.version, v.input_schema::text,"
    "  array_to_json(v.declared_keys)::text, COALESCE(b.env_keys, ''),"
    "  v.mcp_listing IS NOT NULL, (v.mcp_listing->'tools')::text,"
    "  (v.mcp_listing->'resources')::text, (v.mcp_listing->'resource_templates')::text,"
    "  (v.mcp_listing->'prompts')::text, COALESCE(v.output_schema::text, ''), f.icon_url,"
    "  v.price_micro_usd, f.org_id = $1, v.compute_type, v.timeout_ms, v.memory_mb "
    "FROM listed l JOIN registry.functions f ON f.id = l.id "
    "LEFT JOIN registry.workspace_env_keys b ON b.org_id = $1 AND b.function_id = f.id "
    "JOIN LATERAL (SELECT version, input_schema, declared_keys, mcp_listing, output_schema,"
    "  price_micro_usd, compute_type, timeout_ms, memory_mb"
    "  FROM registry.versions"
    "  WHERE function_id = f.id ORDER BY p1 DESC, p2 DESC, p3 DESC, p4 DESC LIMIT 1) v ON true "
    "ORDER BY l.part, l.listed_at, f.id";

}  // namespace

Result<std::vector<v1::WorkspaceTool>> LoadWorkspaceTools(pg::Pool& pool,
                                                          const std::string& org_id) {
  auto rows = pool.Exec(kWorkspaceToolsSql, {org_id});
  if (!rows.ok()) return rows.status();
  std::vector<v1::WorkspaceTool> tools;
  tools.reserve(static_cast<size_t>(rows->size()));
  for (int r = 0; r < rows->size(); ++r) {
    v1::WorkspaceTool t;
    t.set_function_id(rows->Str(r, 0));
    t.set_name(rows->Str(r, 1));
    t.set_description(rows->Str(r, 2));
    t.set_mcp(rows->Bool(r, 3));
    t.set_version(rows->Str(r, 4));
    t.set_input_schema_json(rows->Str(r, 5));
    t.set_env_keys(rows->Str(r, 7));
    t.set_output_schema_json(rows->Str(r, 13));
    t.set_icon_url(rows->Str(r, 14));
    // What a call costs this organization: tools/list shows it (docs/mcp.md, "Prices").
    t.set_price_micro_usd(rows->Int(r, 15));
    t.set_owned(rows->Bool(r, 16));
    t.set_compute_type(core::ParseComputeType(rows->Str(r, 17)).value_or(v1::COMPUTE_TYPE_CPU));
    t.set_timeout_ms(static_cast<int32_t>(rows->Int(r, 18)));
    t.set_memory_mb(static_cast<int32_t>(rows->Int(r, 19)));
    if (rows->Bool(r, 8)) {
      // Written whole by StoreMcpListing, so each of the four keys is there; mutable_listing()
      // sets has_listing(), which tells the edge to list from it.
      v1::McpListing* listing = t.mutable_listing();
      listing->set_tools_json(rows->Str(r, 9));
      listing->set_resources_json(rows->Str(r, 10));
      listing->set_resource_templates_json(rows->Str(r, 11));
      listing->set_prompts_json(rows->Str(r, 12));
    }
    auto keys = ParseJson(rows->Str(r, 6));
    simdjson::dom::array array;
    if (keys.ok() && keys->root.get_array().get(array) == simdjson::SUCCESS) {
      for (auto key : array) {
        std::string_view name;
        if (key.get_string().get(name) == simdjson::SUCCESS) t.add_declared_keys(std::string(name));
      }
    }
    tools.push_back(std::move(t));
  }
  return tools;
}

Status ServeWorkspaceTools(bus::Service& service, pg::Pool& pool) {
  return service.Handle(kWorkspaceToolsSubject, "registry", [&service, &pool](bus::Message&& m) {
    if (m.reply.empty()) return;
    v1::WorkspaceToolsRequest request;
    v1::WorkspaceToolsReply reply;
    if (!request.ParseFromString(m.data) || request.org_id().empty()) {
      *reply.mutable_problem() = core::MakeProblem("bad_request", "Malformed bus message.");
    } else if (auto tools = LoadWorkspaceTools(pool, request.org_id()); !tools.ok()) {
      log::Error("workspace tools unavailable").Str("error", tools.status().ToString());
      *reply.mutable_problem() =
          core::MakeProblem("service_unavailable", "The registry cannot be read; retry shortly.");
    } else {
      for (auto& t : *tools) *reply.add_tools() = std::move(t);
    }
    Status s = service.bus().Publish(m.reply, reply.SerializeAsString());
    if (!s.ok()) log::Warn("workspace tools reply not sent").Str("error", s.ToString());
  });
}

}  // namespace toolgate::registry
