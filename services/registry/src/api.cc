#include "toolgate/registry/api.h"

#include <algorithm>

#include "request_fields.h"
#include "toolgate/base/crypto.h"
#include "toolgate/base/json_writer.h"
#include "toolgate/base/log.h"
#include "toolgate/base/time.h"
#include "toolgate/core/env_keys.h"
#include "toolgate/core/problem.h"
#include "toolgate/registry/marketplace_api.h"
#include "toolgate/registry/multipart_form.h"
#include "toolgate/registry/subjects.h"
#include "toolgate/registry/views.h"

namespace toolgate::registry {
namespace {

v1::HttpResponse FunctionNotFound(const std::string& id) {
  return core::ProblemResponse("function_not_found", "No function " + id + " is visible to you.");
}

bool Visible(const FunctionRecord& f, const v1::Principal& caller) {
  return f.org_id == caller.org_id() || f.visibility == "public";
}

}  // namespace

RegistryApi::RegistryApi(RegistryStore& store, bus::Bus& bus, SyntaxChecker check,
                         FunctionCache& cache, BundleLimits bundle_limits)
    : store_(store), cache_(cache), bus_(bus), check_(std::move(check)), bundles_(bundle_limits) {}

void RegistryApi::AddRoutes(core::Router& router) {
  router.Add("POST", "/functions", [this](const core::Request& r) { return CreateFunction(r); });
  router.Add("PATCH", "/functions/{id}",
             [this](const core::Request& r) { return UpdateFunction(r); });
  // Public like the marketplace that links to it; the viewer sees its own private functions.
  router.Add(
      "GET", "/functions/{id}", [this](const core::Request& r) { return GetFunction(r); },
      /*require_auth=*/false);
  router.Add("DELETE", "/functions/{id}",
             [this](const core::Request& r) { return DeleteFunction(r); });
  router.Add("POST", "/functions/{id}/versions",
             [this](const core::Request& r) { return PublishVersion(r); });
  router.Add("PATCH", "/functions/{id}/versions/{version}",
             [this](const core::Request& r) { return UpdateVersion(r); });
  router.Add("DELETE", "/functions/{id}/versions/{version}",
             [this](const core::Request& r) { return UnpublishVersion(r); });
  router.Add("POST", "/workspace/tools", [this](const core::Request& r) { return AddTool(r); });
  router.Add("GET", "/workspace/tools", [this](const core::Request& r) { return ListTools(r); });
  router.Add("DELETE", "/workspace/tools/{function_id}",
             [this](const core::Request& r) { return RemoveTool(r); });
  router.Add("PUT", "/workspace/tools/{function_id}/env-keys",
             [this](const core::Request& r) { return SetToolEnvKeys(r); });
  router.Add("GET", "/workspace/tools/{function_id}/env-keys",
             [this](const core::Request& r) { return GetToolEnvKeys(r); });
  router.Add("DELETE", "/workspace/tools/{function_id}/env-keys",
             [this](const core::Request& r) { return ClearToolEnvKeys(r); });
}

void RegistryApi::AnnounceFunction(const std::string& function_id) {
  cache_.DropFunction(function_id);
  v1::FunctionChanged event;
  event.set_function_id(function_id);
  Status s = bus_.Publish(kFunctionChangedSubject, event.SerializeAsString());
  if (!s.ok()) log::Warn("function_changed not published").Str("error", s.ToString());
}

void RegistryApi::AnnounceWorkspace(const std::string& org_id, const std::string& function_id) {
  cache_.DropWorkspace(org_id);
  v1::WorkspaceChanged event;
  event.set_org_id(org_id);
  event.set_function_id(function_id);
  Status s = bus_.Publish(kWorkspaceChangedSubject, event.SerializeAsString());
  if (!s.ok()) log::Warn("workspace_changed not published").Str("error", s.ToString());
}

v1::HttpResponse RegistryApi::Detail(int status, const FunctionRecord& function) {
  auto versions = store_.ListVersions(function.id);
  if (!versions.ok()) return core::Unavailable(versions.status());
  std::optional<VersionRecord> latest;
  if (!versions->empty()) {
    auto got = store_.GetVersion(function.id, versions->front().version);
    if (!got.ok()) return core::Unavailable(got.status());
    latest = std::move(*got);
  }
  auto week = store_.LastWeek(function.id);
  if (!week.ok()) return core::Unavailable(week.status());
  return core::JsonResponse(
      status, FunctionDetailJson(function, *versions, latest ? &*latest : nullptr, &*week));
}

std::optional<FunctionRecord> RegistryApi::OwnedFunction(const core::Request& r,
                                                         v1::HttpResponse* refusal) {
  const std::string& id = r.params[0];
  auto found = store_.GetFunction(id);
  if (!found.ok()) {
    *refusal = core::Unavailable(found.status());
  } else if (!found->has_value() || !Visible(**found, r.principal())) {
    *refusal = FunctionNotFound(id);
  } else if ((*found)->org_id != r.principal().org_id()) {
    *refusal = core::ProblemResponse(
        "forbidden", "Only the organization that owns this function may change it.");
  } else {
    return std::move(**found);
  }
  return std::nullopt;
}

v1::HttpResponse RegistryApi::CreateFunction(const core::Request& r) {
  auto parsed = ParseFunctionFields(r.http.body(), /*creating=*/true);
  if (auto* problem = std::get_if<v1::Problem>(&parsed)) return core::ProblemResponse(*problem);
  auto created = store_.CreateFunction(std::get<FunctionFields>(parsed), r.principal());
  if (!created.ok()) return core::Unavailable(created.status());
  // Replicas may hold this id as "unknown" from an earlier call.
  AnnounceFunction(created->id);
  return Detail(201, *created);
}

v1::HttpResponse RegistryApi::UpdateFunction(const core::Request& r) {
  v1::HttpResponse refusal;
  auto owned = OwnedFunction(r, &refusal);
  if (!owned) return refusal;
  auto parsed = ParseFunctionFields(r.http.body(), /*creating=*/false);
  if (auto* problem = std::get_if<v1::Problem>(&parsed)) return core::ProblemResponse(*problem);
  auto updated =
      store_.UpdateFunction(owned->id, r.principal().org_id(), std::get<FunctionFields>(parsed));
  if (updated.status().code() == Status::Code::kNotFound) return FunctionNotFound(r.params[0]);
  if (!updated.ok()) return core::Unavailable(updated.status());
  AnnounceFunction(updated->id);
  return Detail(200, *updated);
}

v1::HttpResponse RegistryApi::DeleteFunction(const core::Request& r) {
  v1::HttpResponse refusal;
  auto owned = OwnedFunction(r, &refusal);
  if (!owned) return refusal;
  auto deleted = store_.DeleteFunction(owned->id, r.principal().org_id());
  if (deleted.status().code() == Status::Code::kNotFound) return FunctionNotFound(r.params[0]);
  if (!deleted.ok()) return core::Unavailable(deleted.status());
  // Every replica forgets it (invocations are 404 from now on), and every workspace that had it.
  AnnounceFunction(owned->id);
  for (const std::string& org : *deleted) AnnounceWorkspace(org, owned->id);
  log::Info("function deleted").Str("function_id", owned->id);
  return core::NoContent();
}

v1::HttpResponse RegistryApi::GetFunction(const core::Request& r) {
  auto found = store_.GetFunction(r.params[0]);
  if (!found.ok()) return core::Unavailable(found.status());
  if (!found->has_value() || !Visible(**found, ViewerOf(r))) return FunctionNotFound(r.params[0]);
  return Detail(200, **found);
}

v1::HttpResponse RegistryApi::PublishVersion(const core::Request& r) {
  v1::HttpResponse refusal;
  auto owned = OwnedFunction(r, &refusal);
  if (!owned) return refusal;
  std::string_view body = r.http.body();
  std::optional<std::string_view> uploaded;
  auto content_type = r.http.headers().find("content-type");
  if (content_type != r.http.headers().end() && IsMultipartForm(content_type->second)) {
    auto form = ParseMultipartForm(content_type->second, r.http.body());
    if (!form.ok()) return core::ProblemResponse("bad_request", form.status().message());
    auto metadata = std::find_if(form->begin(), form->end(),
                                 [](const FormPart& p) { return p.name == "metadata"; });
    if (metadata == form->end()) {
      return core::ProblemResponse(
          "bad_request",
          "A multipart upload needs a part \"metadata\" holding the "
          "version's JSON fields (and a part \"bundle\" with the archive).");
    }
    body = metadata->body;
    for (const FormPart& part : *form) {
      if (part.name == "bundle") uploaded = part.body;
    }
  }
  auto parsed = ParseVersionRequest(body, check_, bundles_, uploaded);
  if (auto* problem = std::get_if<v1::Problem>(&parsed)) return core::ProblemResponse(*problem);
  const auto& draft = std::get<VersionDraft>(parsed);
  auto inserted = store_.InsertVersion(owned->id, draft);
  if (inserted.status().code() == Status::Code::kConflict) {
    return core::ProblemResponse("version_exists",
                                 "A version equal to " + draft.version +
                                     " is already published, or was unpublished; published "
                                     "versions are immutable and their numbers are never reused; "
                                     "publish a higher version.");
  }
  if (!inserted.ok()) return core::Unavailable(inserted.status());
  AnnounceFunction(owned->id);
  // The owner's workspace lists the function from its first version on (its listeners hear).
  AnnounceWorkspace(owned->org_id, owned->id);
  log::Info("version published")
      .Str("function_id", owned->id)
      .Str("version", draft.version)
      .Str("bundle_digest", draft.bundle_info.digest);
  return core::JsonResponse(201, VersionDetailJson(*inserted, owned->mcp));
}

v1::HttpResponse RegistryApi::AddTool(const core::Request& r) {
  simdjson::dom::object object;
  v1::Problem problem;
  auto doc = ParseObjectBody(r.http.body(), &object, &problem);
  if (!doc) return core::ProblemResponse(problem);
  FieldReader in(object);
  auto id = in.String("function_id", true, 1, 64);
  if (!in.ok()) return core::ProblemResponse(in.problem());
  auto found = store_.GetFunction(*id);
  if (!found.ok()) return core::Unavailable(found.status());
  if (!found->has_value() || !Visible(**found, r.principal())) return FunctionNotFound(*id);
  const FunctionRecord& f = **found;
  if (f.org_id == r.principal().org_id()) {
    return core::ProblemResponse("conflict",
                                 "Your organization already owns this function; it is in your "
                                 "workspace.");
  }
  auto added = store_.AddToWorkspace(r.principal().org_id(), f.id);
  if (added.status().code() == Status::Code::kConflict) {
    return core::ProblemResponse("conflict", "This function is already in your workspace.");
  }
  if (!added.ok()) return core::Unavailable(added.status());
  AnnounceWorkspace(r.principal().org_id(), f.id);
  JsonWriter w;
  w.BeginObject().Field("function_id", f.id).Field("added_at", FormatRfc3339(*added)).EndObject();
  return core::JsonResponse(201, w.Take());
}

v1::HttpResponse RegistryApi::ListTools(const core::Request& r) {
  auto owned = store_.ListOwned(r.principal().org_id());
  if (!owned.ok()) return core::Unavailable(owned.status());
  auto added = store_.ListAdded(r.principal().org_id());
  if (!added.ok()) return core::Unavailable(added.status());
  return core::JsonResponse(200, WorkspaceJson(*owned, *added));
}

v1::HttpResponse RegistryApi::SetToolEnvKeys(const core::Request& r) {
  const std::string id = NormalizeFunctionId(r.params[0]);
  const std::string& org = r.principal().org_id();
  auto found = store_.GetFunction(id);
  if (!found.ok()) return core::Unavailable(found.status());
  if (!found->has_value() || !Visible(**found, r.principal())) return FunctionNotFound(r.params[0]);
  if ((*found)->org_id != org) {
    auto added = store_.LoadAdded(org);
    if (!added.ok()) return core::Unavailable(added.status());
    if (!added->count(id)) {
      return core::ProblemResponse("function_not_added",
                                   "Add the function to your workspace first: POST "
                                   "/api/v1/workspace/tools {\"function_id\": \"" +
                                       id + "\"}");
    }
  }
  simdjson::dom::object object;
  v1::Problem problem;
  auto doc = ParseObjectBody(r.http.body(), &object, &problem);
  if (!doc) return core::ProblemResponse(problem);
  FieldReader in(object);
  auto env_keys = in.String("env_keys", true, 1, 4096);
  if (!in.ok()) return core::ProblemResponse(in.problem());
  auto mappings = core::ParseEnvKeys(*env_keys);
  if (!mappings.ok()) {
    return core::ProblemResponse(core::ValidationProblem("env_keys", mappings.status().message()));
  }
  // Names the latest version declares: a binding for anything else could never be used.
  auto versions = store_.ListVersions(id);
  if (!versions.ok()) return core::Unavailable(versions.status());
  std::vector<std::string> declared;
  if (!versions->empty()) {
    auto latest = store_.GetVersion(id, versions->front().version);
    if (!latest.ok()) return core::Unavailable(latest.status());
    if (latest->has_value()) declared = (*latest)->declared_keys;
  }
  for (const core::EnvKeyMapping& m : *mappings) {
    if (std::find(declared.begin(), declared.end(), m.name) == declared.end()) {
      return core::ProblemResponse(core::ValidationProblem(
          "env_keys", "the function's latest version declares no key " + m.name));
    }
  }
  Status stored = store_.SetWorkspaceEnvKeys(org, id, *env_keys);
  if (!stored.ok()) return core::Unavailable(stored);
  AnnounceWorkspace(org, id);
  return core::NoContent();
}

v1::HttpResponse RegistryApi::GetToolEnvKeys(const core::Request& r) {
  const std::string id = NormalizeFunctionId(r.params[0]);
  auto stored = store_.WorkspaceEnvKeys(r.principal().org_id(), id);
  if (!stored.ok()) return core::Unavailable(stored.status());
  if (!stored->has_value()) {
    return core::ProblemResponse("not_found", "No secret mapping is stored for function " +
                                                  r.params[0] + " in your workspace.");
  }
  // Secret ids only, never values: the mapping says which of the organization's secrets each
  // declared key gets.
  JsonWriter w;
  w.BeginObject().Field("function_id", id).Field("env_keys", **stored).EndObject();
  return core::JsonResponse(200, w.Take());
}

v1::HttpResponse RegistryApi::ClearToolEnvKeys(const core::Request& r) {
  const std::string id = NormalizeFunctionId(r.params[0]);
  auto cleared = store_.ClearWorkspaceEnvKeys(r.principal().org_id(), id);
  if (!cleared.ok()) return core::Unavailable(cleared.status());
  if (!*cleared) {
    return core::ProblemResponse("not_found", "No secret mapping is stored for function " +
                                                  r.params[0] + " in your workspace.");
  }
  AnnounceWorkspace(r.principal().org_id(), id);
  return core::NoContent();
}

v1::HttpResponse RegistryApi::RemoveTool(const core::Request& r) {
  const std::string id = NormalizeFunctionId(r.params[0]);
  auto removed = store_.RemoveFromWorkspace(r.principal().org_id(), id);
  if (!removed.ok()) return core::Unavailable(removed.status());
  if (!*removed) {
    return core::ProblemResponse("not_found", "Function " + r.params[0] +
                                                  " is not among the tools your organization "
                                                  "added.");
  }
  AnnounceWorkspace(r.principal().org_id(), id);
  return core::NoContent();
}

}  // namespace toolgate::registry
