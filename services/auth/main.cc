// toolgate-auth: users, organizations, sessions and API keys, and the first invoke stage.
#include "AuthMigrations.h"
#include "toolgate/auth/authenticator.h"
#include "toolgate/auth/housekeeper.h"
#include "toolgate/auth/http_api.h"
#include "toolgate/auth/invoke_stage.h"
#include "toolgate/base/flags.h"
#include "toolgate/core/http.h"
#include "toolgate/core/service_main.h"
#include "toolgate/pg/pg.h"

using namespace toolgate;

int main(int argc, char** argv) {
  Flags flags("toolgate-auth",
              "Users, organizations, sessions and API keys; authenticates every invocation.");
  core::DefineCommonFlags(flags);
  core::DefinePostgresFlags(flags);
  flags.Define("key-cache-ttl-ms", "30000",
               "how long a cached API key is trusted before it is read again");
  flags.Define("pg-wait-ms", "60000", "how long to wait for PostgreSQL at start-up");
  flags.Parse(argc, argv);
  auto bus = core::StartService("auth", flags);

  pg::Pool pool(flags.Get("postgres-url"), static_cast<size_t>(flags.GetInt("pg-pool")),
                core::SecretFromFlag("auth", flags, "postgres-password-file"));
  if (Status s = pool.WaitReady(static_cast<int>(flags.GetInt("pg-wait-ms"))); !s.ok()) {
    core::Die("auth", "cannot reach PostgreSQL", s.ToString());
  }
  if (Status s = pg::Migrate(pool, "auth", AuthMigrations()); !s.ok()) {
    core::Die("auth", "migration failed", s.ToString());
  }

  auth::AccountStore accounts(pool);
  auth::KeyStore keys(pool);
  auth::KeyCache cache(flags.GetInt("key-cache-ttl-ms") * 1000);
  auth::UsageBatcher usage;
  auth::KeyDirectory directory(keys, cache, *bus);
  bus::Service service("auth", *bus, static_cast<size_t>(flags.GetInt("threads")));

  auth::HttpApi http(accounts, keys, directory);
  core::Router router;
  http.Register(router);
  auth::Authenticator authenticator(directory, accounts, usage);
  auth::InvokeStage invoke(service, directory, accounts, usage);
  // Declared after everything it uses, so it stops (and writes the last batch) first.
  auth::Housekeeper housekeeper(keys, accounts, cache, usage);

  for (Status s : {directory.ListenForRevocations(), authenticator.Serve(service), invoke.Start(),
                   core::ServeHttp(service, router)}) {
    if (!s.ok()) core::Die("auth", "cannot subscribe", s.ToString());
  }
  return service.Run();
}
