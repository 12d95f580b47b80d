// toolgate-secrets: secrets encrypted at rest, and their delivery, sealed, to executors. See
// include/toolgate/secrets/*.h.
#include <cstdio>

#include "toolgate/base/crypto.h"
#include "toolgate/base/flags.h"
#include "toolgate/bus/service.h"
#include "toolgate/core/admin_server.h"
#include "toolgate/core/http.h"
#include "toolgate/core/service_main.h"
#include "toolgate/pg/pg.h"
#include "toolgate/pg/service.h"
#include "toolgate/secrets/api.h"
#include "toolgate/secrets/crypto.h"
#include "toolgate/secrets/secret_cache.h"
#include "toolgate/secrets/stage.h"
#include "toolgate/secrets/store.h"

using namespace toolgate;

namespace {

// `toolgate-secrets rotate-master-key --new-master-key-file F`: re-encrypts every stored secret
// from the current master key to F's in one transaction, then exits. Run it while no secrets
// replica runs, and start them again with F as their master key (docs/operations.md).
int RotateMasterKey(const Flags& flags) {
  const std::string name = "secrets rotate-master-key";
  InitCrypto();
  const std::string new_path = flags.Get("new-master-key-file");
  if (new_path.empty()) core::Die(name, "missing flag", "--new-master-key-file");
  auto current = secrets::LoadMasterKey(flags.Get("master-key"), flags.Get("master-key-file"));
  if (!current.ok()) core::Die(name, "bad master key", current.status().message());
  auto next = secrets::LoadMasterKey("", new_path);
  if (!next.ok()) core::Die(name, "bad new master key", next.status().message());
  if (*current == *next) core::Die(name, "--new-master-key-file", "is the current master key");
  secrets::SecretBox from(*current), to(*next);
  secrets::Wipe(*current);
  secrets::Wipe(*next);
  auto connected = pg::ConnectFromFlags(name, flags, 1);
  pg::Pool& pool = *connected;
  auto rekeyed = secrets::SecretStore(pool, from).Rekey(to);
  if (!rekeyed.ok()) core::Die(name, "failed", rekeyed.status().ToString());
  std::printf(
      "re-encrypted %lld secrets under %s; start the secrets service with it as its "
      "master key\n",
      static_cast<long long>(*rekeyed), new_path.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Flags flags("toolgate-secrets",
              "Secrets, encrypted at rest; resolves X-Env-Keys for invocations, sealed for the "
              "executors.\nCommands: none runs the service; `rotate-master-key "
              "--new-master-key-file F` re-encrypts every secret under F's key and exits.");
  core::DefineCommonFlags(flags);
  core::DefinePostgresFlags(flags);
  flags.Define("master-key", "",
               "master key, base64 of 32 bytes; when empty, --master-key-file is used");
  flags.Define("master-key-file", "./data/keys/master.key",
               "file holding the master key in base64; created (mode 0600) when missing");
  flags.Define("executor-public-key-file", "./data/keys/executor.pub",
               "the executor pool's X25519 public key, base64 of 32 bytes");
  flags.Define("new-master-key-file", "",
               "rotate-master-key: the new master key's file (created, mode 0600, when missing)");
  std::vector<std::string> commands = flags.Parse(argc, argv);
  const std::string name = "secrets";
  if (commands.size() == 1 && commands[0] == "rotate-master-key") {
    return RotateMasterKey(flags);
  }
  if (!commands.empty()) core::Die(name, "unknown command", commands[0] + " (see --help)");
  auto bus = core::StartService(name, flags);  // also initializes libsodium

  auto master = secrets::LoadMasterKey(flags.Get("master-key"), flags.Get("master-key-file"));
  if (!master.ok()) core::Die(name, "bad master key", master.status().message());
  secrets::SecretBox box(*master);
  secrets::Wipe(*master);
  auto executor_key = secrets::LoadExecutorPublicKey(flags.Get("executor-public-key-file"));
  if (!executor_key.ok()) core::Die(name, "bad executor key", executor_key.status().message());

  auto connected = pg::ConnectFromFlags(name, flags);
  pg::Pool& pool = *connected;
  auto postgres_ready = pg::ReadinessFromFlags(name, flags);
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
