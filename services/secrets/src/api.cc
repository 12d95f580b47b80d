#include "toolgate/secrets/api.h"

#include "toolgate/base/json_writer.h"
#include "toolgate/base/log.h"
#include "toolgate/base/time.h"
#include "toolgate/core/problem.h"
#include "toolgate/secrets/requests.h"
#include "toolgate/secrets/subjects.h"

namespace toolgate::secrets {
namespace {

void WriteMeta(JsonWriter& w, const SecretMeta& m) {
  w.BeginObject()
      .Field("id", m.id)
      .Field("name", m.name)
      .Field("created_at", FormatRfc3339(m.created_at_ms))
      .Field("updated_at", FormatRfc3339(m.updated_at_ms))
      .EndObject();
}

v1::HttpResponse MetaResponse(int status, const SecretMeta& m) {
  JsonWriter w;
  WriteMeta(w, m);
  return core::JsonResponse(status, w.Take());
}

v1::HttpResponse SecretNotFound() {
  return core::ProblemResponse("not_found",
                               "Your organization has no such secret; GET /api/v1/secrets lists "
                               "them.");
}

}  // namespace

void SecretsApi::AddRoutes(core::Router& router) {
  router.Add("POST", "/secrets", [this](const core::Request& r) { return Create(r); });
  router.Add("GET", "/secrets", [this](const core::Request& r) { return List(r); });
  router.Add("PUT", "/secrets/{id}", [this](const core::Request& r) { return Update(r); });
  router.Add("DELETE", "/secrets/{id}", [this](const core::Request& r) { return Delete(r); });
}

void SecretsApi::AnnounceChange(const std::string& id) {
  v1::SecretChanged event;
  event.set_secret_id(id);
  Status s = bus_.Publish(kSecretChangedSubject, event.SerializeAsString());
  if (!s.ok()) log::Warn("secret_changed not published").Str("error", s.ToString());
}

v1::HttpResponse SecretsApi::Create(const core::Request& r) {
  auto parsed = ParseSecretInput(r.http.body(), /*with_name=*/true);
  if (auto* problem = std::get_if<v1::Problem>(&parsed)) return core::ProblemResponse(*problem);
  auto& input = std::get<SecretInput>(parsed);
  auto created = store_.Create(r.principal().org_id(), input.name, input.value);
  Wipe(input.value);
  if (created.status().code() == Status::Code::kConflict) {
    return core::ProblemResponse("conflict", "Your organization already has a secret named " +
                                                 input.name +
                                                 "; PUT /api/v1/secrets/{id} "
                                                 "replaces its value.");
  }
  if (!created.ok()) return core::Unavailable(created.status());
  return MetaResponse(201, *created);
}

v1::HttpResponse SecretsApi::List(const core::Request& r) {
  v1::HttpResponse problem;
  auto limit = core::ParseLimit(r, &problem);
  if (!limit) return problem;
  std::string after;
  if (std::string cursor = r.Query("cursor"); !cursor.empty()) {
    auto decoded = core::DecodeCursor(cursor);
    if (!decoded) {
      return core::ProblemResponse(
          core::ValidationProblem("cursor", "is not a cursor from this list"));
    }
    after = *decoded;
  }
  // One row more than asked says whether another page exists.
  auto rows = store_.List(r.principal().org_id(), after, *limit + 1);
  if (!rows.ok()) return core::Unavailable(rows.status());
  const bool more = static_cast<int>(rows->size()) > *limit;
  if (more) rows->pop_back();
  JsonWriter w;
  w.BeginObject().Key("items").BeginArray();
  for (const auto& m : *rows) WriteMeta(w, m);
  w.EndArray().FieldOrNull("next_cursor", more ? core::EncodeCursor(rows->back().name) : "");
  w.EndObject();
  return core::JsonResponse(200, w.Take());
}

v1::HttpResponse SecretsApi::Update(const core::Request& r) {
  auto parsed = ParseSecretInput(r.http.body(), /*with_name=*/false);
  if (auto* problem = std::get_if<v1::Problem>(&parsed)) return core::ProblemResponse(*problem);
  auto& input = std::get<SecretInput>(parsed);
  auto updated = store_.Update(r.principal().org_id(), r.params[0], input.value);
  Wipe(input.value);
  if (!updated.ok()) return core::Unavailable(updated.status());
  if (!updated->has_value()) return SecretNotFound();
  AnnounceChange((*updated)->id);
  return MetaResponse(200, **updated);
}

v1::HttpResponse SecretsApi::Delete(const core::Request& r) {
  auto deleted = store_.Delete(r.principal().org_id(), r.params[0]);
  if (!deleted.ok()) return core::Unavailable(deleted.status());
  if (!*deleted) return SecretNotFound();
  AnnounceChange(CanonicalSecretId(r.params[0]));
  return core::NoContent();
}

}  // namespace toolgate::secrets
