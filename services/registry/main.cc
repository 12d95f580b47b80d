// toolgate-registry: functions, versions, code, workspace adds and the marketplace (search,
// favorites, ratings, snippets); resolves functions for the invoke chain. See
// include/toolgate/registry/*.h.
#include <chrono>

#include "toolgate/base/flags.h"
#include "toolgate/bus/service.h"
#include "toolgate/core/admin_server.h"
#include "toolgate/core/http.h"
#include "toolgate/core/service_main.h"
#include "toolgate/pg/pg.h"
#include "toolgate/pg/service.h"
#include "toolgate/registry/api.h"
#include "toolgate/registry/marketplace_api.h"
#include "toolgate/registry/mcp_listing.h"
#include "toolgate/registry/stages.h"
#include "toolgate/registry/store.h"
#include "toolgate/registry/syntax_check.h"
#include "toolgate/registry/workspace_tools.h"

using namespace toolgate;

int main(int argc, char** argv) {
  Flags flags("toolgate-registry",
              "Functions, versions and workspace adds; resolves functions for invocations.");
  core::DefineCommonFlags(flags);
  core::DefinePostgresFlags(flags);
  flags.Define("code-cache-mb", "256", "memory for cached handler code and bundles, in MiB");
  flags.Define("syntax-checks-at-once", "2",
               "publish-time syntax checks running at the same time (as many more publishes may "
               "wait for a turn); a publish that waits longer than --syntax-check-timeout-ms, or "
               "finds that many waiting, is answered 503");
  flags.Define("syntax-check-memory-mb", "256",
               "memory one syntax check may use, interpreter and code included, in MiB");
  flags.Define("syntax-check-timeout-ms", "10000", "wall time of one syntax check");
  flags.Define("syntax-check-uid", "65534",
               "unprivileged user a syntax check runs as when the registry runs as root");
  flags.Define("syntax-check-gid", "65534", "its group");
  flags.Define("bundle-max-mb", "50", "largest bundle (.tar.gz) a version may publish, in MiB");
  flags.Define("bundle-max-unpacked-mb", "250",
               "most data a bundle may unpack to (the sum of its files' sizes), in MiB");
  flags.Define("bundle-max-files", "10000",
               "most entries (files, directories and links) a bundle may hold");
  flags.Parse(argc, argv);
  const std::string name = "registry";
  auto bus = core::StartService(name, flags);

  auto connected = pg::ConnectFromFlags(name, flags);
  pg::Pool& pool = *connected;
  auto postgres_ready = pg::ReadinessFromFlags(name, flags);
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

  registry::SyntaxCheckLimits limits;
  limits.memory_mb = static_cast<int>(flags.GetInt("syntax-check-memory-mb"));
  limits.timeout_ms = static_cast<int>(flags.GetInt("syntax-check-timeout-ms"));
  limits.uid = static_cast<uid_t>(flags.GetInt("syntax-check-uid"));
  limits.gid = static_cast<gid_t>(flags.GetInt("syntax-check-gid"));
  const int64_t at_once = flags.GetInt("syntax-checks-at-once");
  if (at_once < 1 || limits.memory_mb < 16 || limits.timeout_ms < 1 || limits.uid == 0) {
    core::Die(name, "bad syntax check flags",
              "--syntax-checks-at-once must be at least 1, --syntax-check-memory-mb at least 16, "
              "--syntax-check-timeout-ms at least 1 and --syntax-check-uid other than 0");
  }
  // As many publishes may wait for a turn as may run: together they hold at most twice
  // --syntax-checks-at-once of the worker threads that invocations share.
  registry::SyntaxCheckTurns syntax_checks(
      static_cast<size_t>(at_once), static_cast<size_t>(at_once), limits.timeout_ms,
      [limits](std::string_view runtime, std::string_view code) {
        return registry::CheckSyntax(runtime, code, limits);
      });

  registry::BundleLimits bundle_limits;
  const int64_t bundle_mb = flags.GetInt("bundle-max-mb");
  const int64_t unpacked_mb = flags.GetInt("bundle-max-unpacked-mb");
  const int64_t bundle_files = flags.GetInt("bundle-max-files");
  // A bundle travels in one bus message (to the registry, then to executors), which NATS caps
  // at 64 MiB; a base64 upload takes a third more.
  if (bundle_mb < 1 || bundle_mb > 60 || unpacked_mb < bundle_mb || bundle_files < 1) {
    core::Die(name, "bad bundle flags",
              "--bundle-max-mb must be 1 to 60, --bundle-max-unpacked-mb at least as much, and "
              "--bundle-max-files at least 1");
  }
  bundle_limits.max_compressed_bytes = static_cast<size_t>(bundle_mb) << 20;
  bundle_limits.max_unpacked_bytes = static_cast<uint64_t>(unpacked_mb) << 20;
  bundle_limits.max_entries = static_cast<size_t>(bundle_files);

  bus::Service service(name, *bus, static_cast<size_t>(flags.GetInt("threads")));
  registry::RegistryApi api(
      store, *bus,
      [&syntax_checks](std::string_view runtime, std::string_view code) {
        return syntax_checks.Check(runtime, code);
      },
      functions, bundle_limits);
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
  if (Status s = registry::ServeMcpListing(service, pool); !s.ok()) {
    core::Die(name, "subscribe", s.ToString());
  }
  if (Status s = core::ServeHttp(service, router); !s.ok()) {
    core::Die(name, "subscribe", s.ToString());
  }
  return service.Run();
}
