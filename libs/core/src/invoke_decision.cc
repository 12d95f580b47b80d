#include "toolgate/core/invoke_decision.h"

#include <algorithm>
#include <string>

#include "toolgate/core/env_keys.h"
#include "toolgate/core/event_depth.h"
#include "toolgate/core/json_schema.h"
#include "toolgate/core/problem.h"

namespace toolgate::core {
namespace {

bool IsBlank(std::string_view s) {
  return s.find_first_not_of(" \t") == std::string_view::npos;
}

// Row 6, the part the registry can judge: the header's syntax and its names against the
// version's declared keys. Whether each secret id exists is the secrets stage's question.
std::optional<v1::Problem> CheckEnvKeys(const v1::InvokeJob& job, const PublishedVersion& v) {
  const bool present = job.env_keys_present() && !IsBlank(job.env_keys_header());
  std::vector<core::EnvKeyMapping> mappings;
  if (present) {
    auto parsed = core::ParseEnvKeys(job.env_keys_header());
    if (!parsed.ok()) return core::MakeProblem("invalid_env_keys", parsed.status().message());
    mappings = std::move(parsed).value();
  }
  auto mapped = [&](const std::string& name) {
    return std::any_of(mappings.begin(), mappings.end(),
                       [&](const core::EnvKeyMapping& m) { return m.name == name; });
  };
  for (const auto& key : v.declared_keys) {
    if (!mapped(key)) {
      return core::MakeProblem("missing_env_key",
                               "This version declares " + key + "; send X-Env-Keys: " + key +
                                   "=<secret_id> with the id of one of your secrets.");
    }
  }
  for (const auto& m : mappings) {
    if (std::find(v.declared_keys.begin(), v.declared_keys.end(), m.name) ==
        v.declared_keys.end()) {
      return core::MakeProblem("undeclared_env_key", "This version does not declare " + m.name +
                                                         "; remove it from X-Env-Keys.");
    }
  }
  return std::nullopt;
}

std::optional<v1::Problem> CheckBody(v1::BodyCheck check) {
  switch (check) {
    case v1::BODY_INVALID_JSON:
      return core::MakeProblem("invalid_json", "Send a JSON object such as {\"event\": {}}.");
    case v1::BODY_MISSING_EVENT:
      return core::MakeProblem("missing_event", "Send a JSON object with an \"event\" member.");
    case v1::BODY_INVALID_EVENT:
      return core::MakeProblem("invalid_event", "\"event\" must be a JSON object or a string.");
    case v1::BODY_EVENT_TOO_DEEP:
      return core::MakeProblem("invalid_event", core::EventTooDeepDetail());
    default:
      return std::nullopt;
  }
}

// Row 5, the version's part: the event against its input_schema. Each error names the JSON
// Pointer of the offending value in the request body ("/event/city").
std::optional<v1::Problem> CheckEvent(std::string_view event_json,
                                      const PublishedVersion& version) {
  // A string event is a payload the tool parses itself (the MCP endpoints send JSON-RPC text
  // so): the schema describes object events.
  const size_t first = event_json.find_first_not_of(" \t\r\n");
  if (version.input_schema == nullptr || version.input_schema->accepts_anything_of_its_type() ||
      first == std::string_view::npos || event_json[first] == '"') {
    return std::nullopt;
  }
  std::vector<core::SchemaError> errors = version.input_schema->Validate(event_json);
  if (errors.empty()) return std::nullopt;
  v1::Problem p =
      core::MakeProblem("invalid_event", "The event does not match version " + version.version +
                                             "'s input_schema; nothing was run or charged.");
  for (const core::SchemaError& e : errors) {
    v1::FieldError* f = p.add_errors();
    f->set_field("/event" + e.pointer);
    f->set_message(e.message);
  }
  return p;
}

}  // namespace

InvokeDecision DecideInvoke(const v1::InvokeJob& job, const CachedFunction* function, bool added) {
  const std::string& caller = job.principal().org_id();
  if (function == nullptr || (!function->is_public && function->org_id != caller)) {
    return core::MakeProblem("function_not_found",
                             "No function " + job.function_id() + " is visible to you.");
  }
  const PublishedVersion* version = job.version().empty()
                                        ? LatestVersion(function->versions)
                                        : FindVersion(function->versions, job.version());
  if (version == nullptr) {
    return core::MakeProblem(
        "version_not_found",
        job.version().empty()
            ? "Function " + function->function_id + " has no published version yet."
            : "Version " + job.version() + " of function " + function->function_id +
                  " is not published; GET /api/v1/functions/" + function->function_id +
                  " lists the published versions.");
  }
  if (function->org_id != caller && !added) {
    return core::MakeProblem("function_not_added",
                             "POST /api/v1/workspace/tools {\"function_id\": \"" +
                                 function->function_id + "\"} adds it");
  }
  if (auto problem = CheckBody(job.body_check())) return *problem;
  if (auto problem = CheckEvent(job.event_json(), *version)) return *problem;
  if (auto problem = CheckEnvKeys(job, *version)) return *problem;

  v1::FunctionVersion out;
  out.set_function_id(function->function_id);
  out.set_version(version->version);
  out.set_owner_org_id(function->org_id);
  out.set_runtime(version->runtime);
  out.set_compute_type(version->compute_type);
  // The version's own price: a price change is a new version, never a new price for an old one.
  out.set_price_micro_usd(version->price_micro_usd);
  out.set_timeout_ms(version->timeout_ms);
  out.set_memory_mb(version->memory_mb);
  for (const auto& key : version->declared_keys) out.add_declared_keys(key);
  out.set_mcp(function->mcp);
  for (const auto& rule : version->egress) out.add_egress(rule);
  out.set_bundle_digest(version->bundle_digest);
  out.set_handler(version->handler);
  return out;
}

}  // namespace toolgate::core
