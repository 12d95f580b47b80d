// RegistryApi: PATCH and DELETE /functions/{id}/versions/{version}, the publisher's say over a
// version once it is published.
#include "request_fields.h"
#include "toolgate/base/json_writer.h"
#include "toolgate/base/log.h"
#include "toolgate/core/problem.h"
#include "toolgate/registry/api.h"

namespace toolgate::registry {
namespace {

v1::HttpResponse VersionNotFound(const std::string& function_id, const std::string& version) {
  return core::ProblemResponse(
      "version_not_found",
      "Function " + function_id + " has no published version " + version + ".");
}

}  // namespace

v1::HttpResponse RegistryApi::UpdateVersion(const core::Request& r) {
  v1::HttpResponse refusal;
  auto owned = OwnedFunction(r, &refusal);
  if (!owned) return refusal;
  simdjson::dom::object object;
  v1::Problem problem;
  auto doc = ParseObjectBody(r.http.body(), &object, &problem);
  if (!doc) return core::ProblemResponse(problem);
  FieldReader in(object);
  for (auto member : object) {
    if (member.key != "deprecated") in.AddError(member.key, "is not a field of a version update");
  }
  auto deprecated = in.Bool("deprecated");
  if (in.ok() && !deprecated) in.AddError("deprecated", "is required");
  if (!in.ok()) return core::ProblemResponse(in.problem());
  const std::string& version = r.params[1];
  auto updated = store_.SetVersionDeprecated(owned->id, version, *deprecated);
  if (!updated.ok()) return core::Unavailable(updated.status());
  if (!*updated) return VersionNotFound(owned->id, version);
  AnnounceFunction(owned->id);
  log::Info(*deprecated ? "version deprecated" : "version undeprecated")
      .Str("function_id", owned->id)
      .Str("version", version);
  JsonWriter w;
  w.BeginObject()
      .Field("function_id", owned->id)
      .Field("version", version)
      .Field("deprecated", *deprecated)
      .EndObject();
  return core::JsonResponse(200, w.Take());
}

v1::HttpResponse RegistryApi::UnpublishVersion(const core::Request& r) {
  v1::HttpResponse refusal;
  auto owned = OwnedFunction(r, &refusal);
  if (!owned) return refusal;
  const std::string& version = r.params[1];
  auto gone = store_.UnpublishVersion(owned->id, version);
  if (!gone.ok()) return core::Unavailable(gone.status());
  if (!*gone) return VersionNotFound(owned->id, version);
  // Every replica forgets the version: calls pinned to it are 404 from now on, and "latest" is
  // the next highest.
  AnnounceFunction(owned->id);
  log::Info("version unpublished").Str("function_id", owned->id).Str("version", version);
  return core::NoContent();
}

}  // namespace toolgate::registry
