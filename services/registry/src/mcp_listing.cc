#include "toolgate/registry/mcp_listing.h"

#include <string_view>

#include "toolgate/base/crypto.h"
#include "toolgate/base/json.h"
#include "toolgate/base/log.h"
#include "toolgate/core/problem.h"
#include "toolgate/registry/model.h"
#include "toolgate/registry/subjects.h"

namespace toolgate::registry {
namespace {

// The join on functions makes "an MCP function's version without a listing" one condition of
// one statement: two edges storing at once, or a PATCH turning mcp off meanwhile, cannot both
// pass a check and then write.
constexpr const char* kStoreSql =
    "UPDATE registry.versions v SET mcp_listing = jsonb_build_object("
    "  'tools', $3::jsonb, 'resources', $4::jsonb, 'resource_templates', $5::jsonb,"
    "  'prompts', $6::jsonb) "
    "FROM registry.functions f "
    "WHERE v.function_id = $1 AND v.version = $2 AND f.id = v.function_id AND f.mcp"
    "  AND v.mcp_listing IS NULL";

// Why kStoreSql matched nothing: no row when the function does not exist.
constexpr const char* kWhyNotSql =
    "SELECT f.mcp, v.version IS NOT NULL, v.mcp_listing IS NOT NULL "
    "FROM registry.functions f "
    "LEFT JOIN registry.versions v ON v.function_id = f.id AND v.version = $2 "
    "WHERE f.id = $1";

struct ListingArray {
  const char* field;
  const std::string& (v1::McpListing::*get)() const;
};

constexpr ListingArray kArrays[] = {
    {"listing.tools_json", &v1::McpListing::tools_json},
    {"listing.resources_json", &v1::McpListing::resources_json},
    {"listing.resource_templates_json", &v1::McpListing::resource_templates_json},
    {"listing.prompts_json", &v1::McpListing::prompts_json},
};

std::string_view OrEmptyArray(const std::string& json) {
  return json.empty() ? std::string_view("[]") : std::string_view(json);
}

// What is wrong with one array's text, or "".
std::string ArrayError(std::string_view json) {
  if (json.size() > kMaxMcpListingArrayBytes) {
    return "is " + std::to_string(json.size()) + " bytes; at most " +
           std::to_string(kMaxMcpListingArrayBytes) + " are kept";
  }
  auto doc = ParseJson(json);
  if (!doc.ok()) return "is not JSON: " + std::string(doc.status().message());
  simdjson::dom::array array;
  if (doc->root.get_array().get(array) != simdjson::SUCCESS) return "must be a JSON array";
  if (array.size() > kMaxMcpListingEntries) {
    return "has " + std::to_string(array.size()) + " entries; at most " +
           std::to_string(kMaxMcpListingEntries) + " are kept";
  }
  size_t index = 0;
  for (simdjson::dom::element entry : array) {
    if (!entry.is_object()) return "entry " + std::to_string(index) + " is not an object";
    ++index;
  }
  return "";
}

v1::McpListingSetReply Refused(v1::Problem problem) {
  v1::McpListingSetReply reply;
  *reply.mutable_problem() = std::move(problem);
  return reply;
}

}  // namespace

std::optional<v1::Problem> CheckMcpListing(const v1::McpListing& listing) {
  for (const ListingArray& a : kArrays) {
    std::string error = ArrayError(OrEmptyArray((listing.*a.get)()));
    if (!error.empty()) return core::ValidationProblem(a.field, error);
  }
  return std::nullopt;
}

Result<McpListingOutcome> StoreMcpListing(pg::Pool& pool, const std::string& function_id,
                                          const std::string& version,
                                          const v1::McpListing& listing) {
  pg::Params params = {function_id, version};
  for (const ListingArray& a : kArrays) params.emplace_back(OrEmptyArray((listing.*a.get)()));
  auto stored = pool.Exec(kStoreSql, params);
  if (!stored.ok()) return stored.status();
  if (stored->affected() == 1) return McpListingOutcome::kStored;
  auto why = pool.Exec(kWhyNotSql, {function_id, version});
  if (!why.ok()) return why.status();
  if (why->empty()) return McpListingOutcome::kFunctionNotFound;
  if (!why->Bool(0, 0)) return McpListingOutcome::kNotMcp;
  if (!why->Bool(0, 1)) return McpListingOutcome::kVersionNotFound;
  // A listing stored by a concurrent set, or one stored earlier: either way not this one.
  return McpListingOutcome::kAlreadyListed;
}

v1::McpListingSetReply SetMcpListing(pg::Pool& pool, bus::Bus& bus, const std::string& request) {
  v1::McpListingSet set;
  if (!set.ParseFromString(request) || set.function_id().empty() || set.version().empty() ||
      !set.has_listing()) {
    return Refused(core::MakeProblem("bad_request", "Malformed bus message."));
  }
  const std::string id = NormalizeFunctionId(set.function_id());
  const std::string not_found = "No function " + set.function_id() + ".";
  if (!IsUuid(id)) return Refused(core::MakeProblem("function_not_found", not_found));
  if (auto problem = CheckMcpListing(set.listing())) return Refused(std::move(*problem));
  auto outcome = StoreMcpListing(pool, id, set.version(), set.listing());
  if (!outcome.ok()) {
    // PostgreSQL's JSON is stricter than simdjson's (it refuses \u0000 in strings).
    if (outcome.status().code() == Status::Code::kInvalidArgument) {
      return Refused(core::MakeProblem(
          "bad_request", "The listing cannot be stored: " + outcome.status().message()));
    }
    log::Error("mcp listing not stored").Str("error", outcome.status().ToString());
    return Refused(
        core::MakeProblem("service_unavailable", "The registry cannot be written; retry shortly."));
  }
  switch (*outcome) {
    case McpListingOutcome::kStored:
      break;
    case McpListingOutcome::kFunctionNotFound:
      return Refused(core::MakeProblem("function_not_found", not_found));
    case McpListingOutcome::kNotMcp:
      return Refused(core::MakeProblem(
          "bad_request", "Function " + id + " is not an MCP function; it has no listing."));
    case McpListingOutcome::kVersionNotFound:
      return Refused(
          core::MakeProblem("version_not_found",
                            "Function " + id + " has no published version " + set.version() + "."));
    case McpListingOutcome::kAlreadyListed:
      return Refused(core::MakeProblem("conflict", "Version " + set.version() + " of function " +
                                                       id +
                                                       " has its listing; a listing is written "
                                                       "once."));
  }
  log::Info("mcp listing stored").Str("function_id", id).Str("version", set.version());
  // The same event as publishing the version: an edge that cached the function's tools before
  // the listing existed lists from the listing from now on.
  v1::FunctionChanged event;
  event.set_function_id(id);
  Status s = bus.Publish(kFunctionChangedSubject, event.SerializeAsString());
  if (!s.ok()) log::Warn("function_changed not published").Str("error", s.ToString());
  return v1::McpListingSetReply();
}

Status ServeMcpListing(bus::Service& service, pg::Pool& pool) {
  return service.Handle(kMcpListingSubject, kQueueGroup, [&service, &pool](bus::Message&& m) {
    // Stored even when nobody waits for the answer: the listing is as good either way.
    v1::McpListingSetReply reply = SetMcpListing(pool, service.bus(), m.data);
    if (m.reply.empty()) return;
    Status s = service.bus().Publish(m.reply, reply.SerializeAsString());
    if (!s.ok()) log::Warn("mcp listing reply not sent").Str("error", s.ToString());
  });
}

}  // namespace toolgate::registry
