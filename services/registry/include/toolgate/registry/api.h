// The registry's management routes on tg.registry.http (contract section 6): functions,
// versions and workspace adds. Every change is announced on tg.events.function_changed or
// tg.events.workspace_changed so that the invoke caches of every replica drop stale entries.
#pragma once

#include <optional>

#include "toolgate/bus/bus.h"
#include "toolgate/core/http.h"
#include "toolgate/registry/bundle_check.h"
#include "toolgate/registry/function_cache.h"
#include "toolgate/registry/store.h"
#include "toolgate/registry/syntax_check.h"

namespace toolgate::registry {

class RegistryApi {
 public:
  // store, bus and cache must outlive the api. Thread-safe. cache is this replica's invoke
  // cache: a change drops its entries here before the answer, so that a call right after the
  // change never sees the old state on this replica (other replicas hear the broadcast event).
  // bundle_limits bound the bundles that versions publish.
  RegistryApi(RegistryStore& store, bus::Bus& bus, SyntaxChecker check, FunctionCache& cache,
              BundleLimits bundle_limits = {});

  // Adds POST/PATCH/GET /functions..., POST /functions/{id}/versions and /workspace/tools.
  // GET /functions/{id} also answers without authentication, for public functions (the
  // marketplace links to it); the caller sees its own private functions too (ViewerOf).
  void AddRoutes(core::Router& router);

  v1::HttpResponse CreateFunction(const core::Request& r);
  v1::HttpResponse UpdateFunction(const core::Request& r);
  v1::HttpResponse GetFunction(const core::Request& r);
  // DELETE /functions/{id}: 204; the owner's only.
  v1::HttpResponse DeleteFunction(const core::Request& r);
  // PUT and DELETE /workspace/tools/{function_id}/env-keys: the organization's stored secret
  // mapping for a function of its workspace, which the workspace MCP endpoint applies.
  v1::HttpResponse SetToolEnvKeys(const core::Request& r);
  v1::HttpResponse ClearToolEnvKeys(const core::Request& r);
  // POST /functions/{id}/versions: a JSON body, or multipart/form-data with the JSON fields in
  // a part "metadata" and the bundle's archive in a part "bundle".
  v1::HttpResponse PublishVersion(const core::Request& r);
  v1::HttpResponse AddTool(const core::Request& r);
  v1::HttpResponse ListTools(const core::Request& r);
  v1::HttpResponse RemoveTool(const core::Request& r);

 private:
  // The function the caller owns, or the response that refuses: 404 when it does not exist or
  // is another organization's private function, 403 when it is another's public one.
  std::optional<FunctionRecord> OwnedFunction(const core::Request& r, v1::HttpResponse* refusal);
  v1::HttpResponse Detail(int status, const FunctionRecord& function);
  void AnnounceFunction(const std::string& function_id);
  void AnnounceWorkspace(const std::string& org_id, const std::string& function_id);

  RegistryStore& store_;
  FunctionCache& cache_;
  bus::Bus& bus_;
  SyntaxChecker check_;
  BundleCheck bundles_;
};

}  // namespace toolgate::registry
