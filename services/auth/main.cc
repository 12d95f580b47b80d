// toolgate-auth: users, organizations, sessions and API keys, and the first invoke stage.
// `toolgate-auth create-operator --email E [--password-file F]` creates a platform operator on
// the database and exits (operator_command.h).
#include <cstdio>

#include "AuthMigrations.h"
#include "toolgate/auth/authenticator.h"
#include "toolgate/auth/housekeeper.h"
#include "toolgate/auth/http_api.h"
#include "toolgate/auth/oauth_api.h"
#include "toolgate/auth/operator_command.h"
#include "toolgate/auth/organization_lookup.h"
#include "toolgate/base/crypto.h"
#include "toolgate/base/flags.h"
#include "toolgate/core/admin_server.h"
#include "toolgate/core/http.h"
#include "toolgate/core/service_main.h"
#include "toolgate/pg/pg.h"
#include "toolgate/pg/service.h"

using namespace toolgate;

namespace {

int RunCreateOperator(const Flags& flags) {
  InitCrypto();
  auto connected = pg::ConnectFromFlags("auth create-operator", flags, 1);
  pg::Pool& pool = *connected;
  if (Status s = pg::Migrate(pool, "auth", AuthMigrations()); !s.ok()) {
    std::fprintf(stderr, "auth create-operator: migration failed: %s\n", s.ToString().c_str());
    return 1;
  }
  auth::AccountStore accounts(pool);
  auto created = auth::CreateOperator(accounts, flags.Get("email"), flags.Get("password-file"));
  if (!created.ok()) {
    std::fprintf(stderr, "auth create-operator: %s\n", created.status().message().c_str());
    return created.status().code() == Status::Code::kInvalidArgument ? 2 : 1;
  }
  std::printf("operator created: %s\nuser_id: %s\norganization_id: %s\n",
              created->account.email.c_str(), created->account.user_id.c_str(),
              created->account.org_id.c_str());
  if (!created->password.empty()) {
    // Printed once, stored only as its Argon2id hash.
    std::printf("password: %s\n", created->password.c_str());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Flags flags("toolgate-auth",
              "Users, organizations, sessions and API keys; authenticates every invocation.");
  core::DefineCommonFlags(flags);
  core::DefinePostgresFlags(flags);
  flags.Define("key-cache-ttl-ms", "30000",
               "how long a cached API key is trusted before it is read again");
  flags.Define("login-max-failures", "5",
               "failed logins per account before it is locked (with exponential backoff)");
  flags.Define("login-max-failures-per-client", "30",
               "failed logins per client address before it is locked");
  flags.Define("signup-max-per-client", "50", "sign-ups per client address before it is locked");
  flags.Define("login-backoff-ms", "1000", "the first lock; each further attempt doubles it");
  flags.Define("login-backoff-max-ms", "900000", "the longest lock");
  flags.Define("login-window-ms", "3600000",
               "a subject's count starts over this long after its last counted attempt");
  flags.Define("public-url", "",
               "the system's public URL (https://mcp.example.com): the OAuth issuer and the "
               "origin of every MCP resource; empty: http:// and the Host of each request");
  flags.Define("oauth-metadata-allow-cidr", "",
               "networks (comma-separated CIDRs) where client metadata documents may be fetched "
               "although they are not public addresses");
  flags.Define("oauth-metadata-ca-file", "",
               "an extra CA bundle to verify client metadata documents' servers with");
  flags.Define("oauth-clients-file", "",
               "a JSON file of the operator's pre-registered OAuth clients (docs/oauth.md)");
  flags.Define("email", "", "create-operator: the operator's email");
  flags.Define("password-file", "",
               "create-operator: a file whose first line is the password (default: generate one "
               "and print it once)");
  std::vector<std::string> commands = flags.Parse(argc, argv);
  if (commands.size() == 1 && commands[0] == "create-operator") return RunCreateOperator(flags);
  if (!commands.empty()) core::Die("auth", "unknown command", commands[0]);
  auto bus = core::StartService("auth", flags);

  auto connected = pg::ConnectFromFlags("auth", flags);
  pg::Pool& pool = *connected;
  if (Status s = pg::Migrate(pool, "auth", AuthMigrations()); !s.ok()) {
    core::Die("auth", "migration failed", s.ToString());
  }

  auto postgres_ready = pg::ReadinessFromFlags("auth", flags);
  auth::AccountStore accounts(pool);
  auth::KeyStore keys(pool);
  auth::KeyCache cache(flags.GetInt("key-cache-ttl-ms") * 1000);
  core::UsageBatcher usage;
  auth::KeyDirectory directory(keys, cache, *bus);
  bus::Service service("auth", *bus, static_cast<size_t>(flags.GetInt("threads")));

  auth::ThrottlePolicy policy;
  policy.account_failures = static_cast<int>(flags.GetInt("login-max-failures"));
  policy.client_failures = static_cast<int>(flags.GetInt("login-max-failures-per-client"));
  policy.client_signups = static_cast<int>(flags.GetInt("signup-max-per-client"));
  policy.base_ms = flags.GetInt("login-backoff-ms");
  policy.max_ms = flags.GetInt("login-backoff-max-ms");
  policy.window_ms = flags.GetInt("login-window-ms");
  if (policy.account_failures <= 0 || policy.client_failures <= 0 || policy.client_signups <= 0 ||
      policy.base_ms <= 0 || policy.max_ms < policy.base_ms || policy.window_ms <= 0) {
    core::Die("auth", "bad sign-in throttle flags",
              "thresholds and times must be positive, --login-backoff-max-ms at least "
              "--login-backoff-ms");
  }
  auth::SignInThrottle throttle(pool, policy);
  auth::HttpApi http(accounts, keys, directory, throttle);
  auth::OAuthStore oauth_store(pool);
  auth::ClientMetadataOptions metadata_options;
  for (const auto& text : flags.GetList("oauth-metadata-allow-cidr")) {
    auto cidr = core::Cidr::Parse(text);
    if (!cidr.ok()) core::Die("auth", "bad --oauth-metadata-allow-cidr", cidr.status().ToString());
    metadata_options.allowed_cidrs.push_back(*cidr);
  }
  metadata_options.ca_file = flags.Get("oauth-metadata-ca-file");
  auth::ClientMetadataFetcher metadata(metadata_options);
  if (std::string file = flags.Get("oauth-clients-file"); !file.empty()) {
    auto clients = auth::LoadPreRegisteredClients(file);
    if (!clients.ok()) core::Die("auth", "bad --oauth-clients-file", clients.status().ToString());
    for (const auto& client : *clients) {
      if (Status s = oauth_store.UpsertPreRegisteredClient(client); !s.ok()) {
        core::Die("auth", "cannot store a pre-registered client", s.ToString());
      }
    }
  }
  auth::OAuthApi oauth(oauth_store, metadata, directory, throttle, *bus,
                       auth::OAuthOptions{.public_url = flags.Get("public-url")});
  core::Router router;
  http.Register(router);
  oauth.Register(router);
  auth::Authenticator authenticator(directory, accounts, usage);
  // Declared after everything it uses, so it stops (and writes the last batch) first.
  auth::Housekeeper housekeeper(keys, accounts, cache, usage, throttle, oauth_store);

  for (Status s :
       {directory.ListenForRevocations(), authenticator.Serve(service),
        auth::ServeOrganizationLookup(service, accounts), core::ServeHttp(service, router)}) {
    if (!s.ok()) core::Die("auth", "cannot subscribe", s.ToString());
  }
  return service.Run();
}
