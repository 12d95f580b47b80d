#include "body_admission.h"

#include <array>
#include <string_view>
#include <utility>

#include "mcp_bus.h"
#include "toolgate/base/crypto.h"
#include "toolgate/core/key_decision.h"
#include "toolgate/core/problem.h"
#include "upload_route.h"

namespace toolgate::edge {
namespace {

constexpr std::string_view kApiPrefix = "/api/v1/";

// The routes under /api/v1 that take a body from anyone: a caller without an account or a
// session signs up, signs in, or signs out. Every other API route needs a caller.
constexpr std::array<std::string_view, 3> kAnonymousRoutes = {
    "/api/v1/auth/signup", "/api/v1/auth/login", "/api/v1/auth/logout"};

enum class Route { kOpen, kInvoke, kMcp, kManagement };

Route Classify(std::string_view path) {
  if (path == "/mcp" || path.starts_with("/mcp/")) return Route::kMcp;
  if (!path.starts_with(kApiPrefix)) return Route::kOpen;  // the web app: nothing takes a body
  for (std::string_view open : kAnonymousRoutes) {
    if (path == open) return Route::kOpen;
  }
  // An estimate is answered as the call would be: the same caller and body rules.
  if (path.starts_with("/api/v1/functions/") &&
      (path.ends_with("/invoke") || path.ends_with("/estimate"))) {
    return Route::kInvoke;
  }
  return Route::kManagement;
}

// The {id} of /api/v1/functions/{id}/versions.
std::string UploadFunctionId(std::string_view path) {
  constexpr std::string_view kPrefix = "/api/v1/functions/";
  constexpr std::string_view kSuffix = "/versions";
  return core::NormalizeFunctionId(
      path.substr(kPrefix.size(), path.size() - kPrefix.size() - kSuffix.size()));
}

v1::Problem NotSignedIn() {
  return core::MakeProblem("not_authenticated",
                           "Sign in, or send an API key with the manage scope.");
}

}  // namespace

BodyAdmission::BodyAdmission(Limits limits, DecisionCaches& caches, DecisionSource& source,
                             std::function<int64_t()> wall_ms)
    : limits_(limits), caches_(caches), source_(source), wall_ms_(std::move(wall_ms)) {}

BodyVerdict BodyAdmission::Admit(bool upload) const {
  BodyVerdict verdict;
  verdict.body_limit = upload ? limits_.max_upload_bytes : limits_.max_body_bytes;
  return verdict;
}

BodyVerdict BodyAdmission::Refuse(v1::Problem problem) {
  BodyVerdict verdict;
  verdict.refusal = std::move(problem);
  return verdict;
}

std::optional<BodyVerdict> BodyAdmission::Decide(const RequestHead& head, Later later) {
  const std::string_view path = std::string_view(head.target).substr(0, head.target.find('?'));
  const Route route = Classify(path);
  const bool upload = IsUploadRoute(head.method, head.target);
  const std::string function_id = upload ? UploadFunctionId(path) : std::string();
  const std::string key = ApiKeyFrom(head.Value("authorization"));

  if (!key.empty()) {
    const std::string sha = Sha256(key);
    if (auto cached = caches_.Key(sha)) return DecideKey(*cached, upload, function_id, later);
    const uint64_t generation = caches_.key_generation();
    source_.LookupKey(sha, [this, sha, generation, upload, function_id,
                            later](Result<v1::KeyLookupReply> answer) {
      if (!answer.ok()) return later(Refuse(BusFailureProblem(answer.status())));
      if (answer->has_problem()) return later(Refuse(answer->problem()));
      CachedKey entry = CachedKeyOf(*answer);
      caches_.PutKey(sha, entry, generation);
      if (auto verdict = DecideKey(entry, upload, function_id, later)) later(std::move(*verdict));
    });
    return std::nullopt;
  }
  if (route == Route::kOpen) return Admit(false);
  const std::optional<std::string> session = head.Cookie("tg_session");
  if (!session || session->empty()) {
    if (route == Route::kManagement) return Refuse(NotSignedIn());
    return Refuse(
        core::MakeProblem("missing_api_key", "Send your API key in the Authorization header."));
  }
  // A session cookie is checked where it is needed: only the upload route's large limit
  // depends on who the caller is. Elsewhere the owner decides, on a body of the general size.
  if (!upload) return Admit(false);
  source_.AuthenticateSession(
      Sha256(*session), [this, function_id, later](Result<v1::AuthenticateReply> answer) {
        if (!answer.ok()) return later(Refuse(BusFailureProblem(answer.status())));
        if (answer->has_problem()) return later(Refuse(NotSignedIn()));
        if (auto verdict = DecideUpload(answer->principal().org_id(), function_id, later)) {
          later(std::move(*verdict));
        }
      });
  return std::nullopt;
}

std::optional<BodyVerdict> BodyAdmission::DecideKey(const CachedKey& key, bool upload,
                                                    const std::string& function_id, Later later) {
  const core::KeyRecord* record = key.record ? &*key.record : nullptr;
  if (auto problem = core::CheckKey(record, wall_ms_())) return Refuse(std::move(*problem));
  if (!upload) return Admit(false);
  if (!core::HasScope(record->scopes, core::kScopeManage)) {
    return Refuse(core::MakeProblem(
        "insufficient_scope", "This API key lacks the manage scope; create one that has it."));
  }
  return DecideUpload(record->org_id, function_id, std::move(later));
}

std::optional<BodyVerdict> BodyAdmission::DecideUpload(const std::string& org_id,
                                                       const std::string& function_id,
                                                       Later later) {
  if (auto cached = caches_.Function(org_id, function_id)) return UploadVerdict(org_id, *cached);
  const uint64_t generation = caches_.function_generation();
  source_.ViewFunction(
      function_id, org_id,
      [this, org_id, function_id, generation, later](Result<v1::FunctionViewReply> answer) {
        if (!answer.ok()) return later(Refuse(BusFailureProblem(answer.status())));
        if (answer->has_problem()) return later(Refuse(answer->problem()));
        CachedFunctionView view = CachedViewOf(function_id, *answer);
        caches_.PutFunction(org_id, view, generation);
        later(UploadVerdict(org_id, view));
      });
  return std::nullopt;
}

BodyVerdict BodyAdmission::UploadVerdict(const std::string& org_id,
                                         const CachedFunctionView& view) const {
  const core::CachedFunction* f = view.function.get();
  // The registry's rule for changing a function (RegistryApi::OwnedFunction).
  if (f == nullptr || (f->org_id != org_id && !f->is_public)) {
    return Refuse(core::MakeProblem("function_not_found",
                                    "No function " + view.function_id + " is visible to you."));
  }
  if (f->org_id != org_id) {
    return Refuse(core::MakeProblem(
        "forbidden", "Only the organization that owns this function may change it."));
  }
  return Admit(true);
}

}  // namespace toolgate::edge
