// toolgate-registry: functions, versions, code, workspace adds and the marketplace (search,
// favorites, ratings, snippets); resolves functions for the invoke chain. See
// include/toolgate/registry/*.h.
#include <chrono>

#include "toolgate/base/flags.h"
#include "toolgate/bus/service.h"
#include "toolgate/core/http.h"
#include "toolgate/core/service_main.h"
#include "toolgate/pg/pg.h"
#include "toolgate/registry/api.h"
#include "toolgate/registry/marketplace_api.h"
#include "toolgate/registry/stages.h"
#include "toolgate/registry/store.h"
#include "toolgate/registry/workspace_tools.h"

using namespace toolgate;

int main(int argc, char** argv) {
  Flags flags("toolgate-registry",
              "Functions, versions and workspace adds; resolves functions for invocations.");
  core::DefineCommonFlags(flags);
  core::DefinePostgresFlags(flags);
  flags.Define("code-cache-mb", "256", "memory for cached handler code, in MiB");
  flags.Parse(argc, argv);
  const std::string name = "registry";
  auto bus = core::StartService(name, flags);

  pg::Pool pool(flags.Get("postgres-url"), static_cast<size_t>(flags.GetInt("pg-pool")),
                core::SecretFromFlag(name, flags, "postgres-password-file"));
  if (Status s = pool.WaitReady(30000); !s.ok()) {
    core::Die(name, "cannot reach PostgreSQL", s.ToString());
  }
  registry::RegistryStore store(pool);
  if (Status s = store.Migrate(); !s.ok()) core::Die(name, "migration failed", s.ToString());

  registry::FunctionCache functions(store);
  registry::CodeCache code(
      [&store](const std::string& id, const std::string& version) {
        return store.LoadCode(id, version);
      },
      static_cast<size_t>(flags.GetInt("code-cache-mb")) << 20);
  registry::ExecutionCounter executions(
      [&store](const registry::ExecutionCounter::Counts& counts) {
        return store.AddExecutions(counts);
      },
      std::chrono::seconds(1));

  bus::Service service(name, *bus, static_cast<size_t>(flags.GetInt("threads")));
  registry::RegistryApi api(store, *bus, registry::CheckSyntax, functions);
  registry::MarketplaceStore market_store(pool);
  registry::FavoritesStore favorites(pool);
  registry::RatingsStore ratings(pool);
  registry::MarketplaceApi market(store, market_store, favorites, ratings);
  core::Router router;
  api.AddRoutes(router);
  market.AddRoutes(router);
  registry::RegistryStages stages(*bus, functions, code, executions);
  if (Status s = stages.Subscribe(service); !s.ok()) core::Die(name, "subscribe", s.ToString());
  if (Status s = registry::ServeWorkspaceTools(service, pool); !s.ok()) {
    core::Die(name, "subscribe", s.ToString());
  }
  if (Status s = core::ServeHttp(service, router); !s.ok()) {
    core::Die(name, "subscribe", s.ToString());
  }
  return service.Run();
}
