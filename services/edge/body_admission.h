// BodyAdmission: the edge's BodyGate (http_front.h). From a request's head alone it decides who
// the caller is and whether this caller may send a body to this route, and how large, so that a
// body nobody may send is refused before its first byte is read:
//
//   * a presented API key must be one auth accepts (401 invalid_api_key, api_key_revoked,
//     api_key_expired otherwise), whatever the route;
//   * routes that need a caller (everything under /api/v1 but sign-up, sign-in and sign-out,
//     and /mcp) refuse a body that comes with neither a key nor a session cookie: 401
//     missing_api_key for invocations and MCP, 401 not_authenticated for the rest;
//   * the upload route (POST /api/v1/functions/{id}/versions, upload_route.h) gets its large
//     limit only for a caller who may publish to that function: a key with the manage scope (403
//     insufficient_scope) or a signed-in session (401 not_authenticated), of the organization
//     that owns the function (404 function_not_found when the caller cannot see it, 403
//     forbidden when it can but does not own it);
//   * every other admitted body gets the general limit.
// These are the owners' rules applied early; the owners still decide the request itself once it
// has arrived. Keys and functions come from DecisionCaches and, on a miss, from the owners through
// the DecisionSource (the invoke path's caches: a warm caller costs no round trip); sessions are
// asked of auth each time (a person uploading). A failed round trip refuses with the bus's
// problem (503 or 504).
//
// Thread-safe. Every reference given to the constructor must outlive the object.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "decision_caches.h"
#include "http_front.h"
#include "http_head.h"
#include "invoke_decider.h"

namespace toolgate::edge {

class BodyAdmission {
 public:
  struct Limits {
    size_t max_body_bytes = 0;    // every route's
    size_t max_upload_bytes = 0;  // the upload route's, for a caller who may publish there
  };
  BodyAdmission(Limits limits, DecisionCaches& caches, DecisionSource& source,
                std::function<int64_t()> wall_ms);

  // A BodyGate: the verdict now, or nullopt and later(verdict) exactly once, on any thread.
  std::optional<BodyVerdict> Decide(const RequestHead& head,
                                    std::function<void(BodyVerdict)> later);

 private:
  using Later = std::function<void(BodyVerdict)>;
  // The caller is known (principal): the upload route's check of the function.
  std::optional<BodyVerdict> DecideUpload(const std::string& org_id, const std::string& function_id,
                                          Later later);
  BodyVerdict UploadVerdict(const std::string& org_id, const CachedFunctionView& view) const;
  // The key's record is known: the key's own check, then the route's.
  std::optional<BodyVerdict> DecideKey(const CachedKey& key, bool upload,
                                       const std::string& function_id, Later later);

  BodyVerdict Admit(bool upload) const;
  static BodyVerdict Refuse(v1::Problem problem);

  const Limits limits_;
  DecisionCaches& caches_;
  DecisionSource& source_;
  std::function<int64_t()> wall_ms_;
};

}  // namespace toolgate::edge
