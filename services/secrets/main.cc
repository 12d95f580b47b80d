// toolgate-secrets: secrets encrypted at rest, and their delivery, sealed, to executors. See
// include/toolgate/secrets/*.h.
#include "toolgate/base/flags.h"
#include "toolgate/bus/service.h"
#include "toolgate/core/admin_server.h"
#include "toolgate/core/http.h"
#include "toolgate/core/service_main.h"
#include "toolgate/pg/pg.h"
#include "toolgate/secrets/api.h"
#include "toolgate/secrets/crypto.h"
#include "toolgate/secrets/secret_cache.h"
#include "toolgate/secrets/stage.h"
#include "toolgate/secrets/store.h"

using namespace toolgate;

int main(int argc, char** argv) {
  Flags flags("toolgate-secrets",
              "Secrets, encrypted at rest; resolves X-Env-Keys for invocations, sealed for the "
              "executors.");
  core::DefineCommonFlags(flags);
  core::DefinePostgresFlags(flags);
  flags.Define("master-key", "",
               "master key, base64 of 32 bytes; when empty, --master-key-file is used");
  flags.Define("master-key-file", "./data/keys/master.key",
               "file holding the master key in base64; created (mode 0600) when missing");
  flags.Define("executor-public-key-file", "./data/keys/executor.pub",
               "the executor pool's X25519 public key, base64 of 32 bytes");
  flags.Parse(argc, argv);
  const std::string name = "secrets";
  auto bus = core::StartService(name, flags);  // also initializes libsodium

  auto master = secrets::LoadMasterKey(flags.Get("master-key"), flags.Get("master-key-file"));
  if (!master.ok()) core::Die(name, "bad master key", master.status().message());
  secrets::SecretBox box(*master);
  secrets::Wipe(*master);
  auto executor_key = secrets::LoadExecutorPublicKey(flags.Get("executor-public-key-file"));
  if (!executor_key.ok()) core::Die(name, "bad executor key", executor_key.status().message());

  pg::Pool pool(flags.Get("postgres-url"), static_cast<size_t>(flags.GetInt("pg-pool")),
                core::SecretFromFlag(name, flags, "postgres-password-file"));
  if (Status s = pool.WaitReady(30000); !s.ok()) {
    core::Die(name, "cannot reach PostgreSQL", s.ToString());
  }
  // Readiness reads PostgreSQL through a connection of its own: a pool busy with work must not
  // read as a store that is away.
  pg::Pool ready_probe(flags.Get("postgres-url"), 1,
                       core::SecretFromFlag(name, flags, "postgres-password-file"));
  core::ReadinessCheck postgres_ready(
      "postgres", [&ready_probe] { return ready_probe.Exec("SELECT 1").status(); });
  secrets::SecretStore store(pool, box);
  if (Status s = store.Migrate(); !s.ok()) core::Die(name, "migration failed", s.ToString());
  secrets::SecretCache cache(
      [&store](const std::vector<std::string>& ids) { return store.Fetch(ids); });

  bus::Service service(name, *bus, static_cast<size_t>(flags.GetInt("threads")));
  secrets::SecretsApi api(store, *bus);
  core::Router router;
  api.AddRoutes(router);
  secrets::SecretsStage stage(*bus, cache, box, *executor_key);
  if (Status s = stage.Subscribe(service); !s.ok()) core::Die(name, "subscribe", s.ToString());
  if (Status s = core::ServeHttp(service, router); !s.ok()) {
    core::Die(name, "subscribe", s.ToString());
  }
  return service.Run();
}
