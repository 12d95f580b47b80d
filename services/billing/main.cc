// toolgate-billing: balances and holds in Redis, the ledger in PostgreSQL, settlement of
// executions and the billing routes. `toolgate-billing reconcile [--dry-run]` repairs Redis
// balances and OAuth grants' budgets from the ledger, checks the whole-ledger identity
// (ledger_identity.h) and exits.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "toolgate/base/flags.h"
#include "toolgate/billing/billing_service.h"
#include "toolgate/billing/ledger_identity.h"
#include "toolgate/billing/reconcile.h"
#include "toolgate/billing/stripe_provider.h"
#include "toolgate/bus/service.h"
#include "toolgate/core/admin_server.h"
#include "toolgate/core/service_main.h"
#include "toolgate/pg/service.h"

namespace {

using namespace toolgate;

constexpr const char* kName = "billing";

redis::Options RedisOptions(const Flags& flags) {
  auto address = core::ParseRedisUrl(flags.Get("redis-url"));
  if (!address) core::Die(kName, "bad --redis-url", flags.Get("redis-url"));
  redis::Options options;
  options.host = address->host;
  options.port = address->port;
  options.password = address->password;
  // A password file wins over the URL's: the URL is shown in state files and logs.
  if (std::string file = core::SecretFromFlag(kName, flags, "redis-password-file"); !file.empty()) {
    options.password = file;
  }
  options.pool_size = static_cast<size_t>(flags.GetInt("redis-pool"));
  return options;
}

// Checkout funding's payment provider, its secrets read from their files; null in the other
// modes. Refuses to start (Die) in checkout mode without both secret files: billing would take
// members to a payment page whose payments it could never credit.
std::unique_ptr<billing::PaymentProvider> PaymentProviderFor(const Flags& flags,
                                                             const billing::Config& config) {
  if (config.funding != billing::FundingMode::kCheckout) return nullptr;
  for (const char* flag : {"stripe-secret-key-file", "stripe-webhook-secret-file"}) {
    if (flags.Get(flag).empty()) {
      core::Die(kName, "--funding checkout needs --" + std::string(flag),
                "the Stripe secret key and the webhook endpoint's signing secret, each in a file "
                "(docs/operations.md, \"Checkout funding\")");
    }
  }
  billing::StripeOptions options;
  options.api_base = config.stripe_api_base;
  // SecretFromFlag's failure names the flag and the file, never its contents.
  options.secret_key = core::SecretFromFlag(kName, flags, "stripe-secret-key-file");
  options.webhook_secret = core::SecretFromFlag(kName, flags, "stripe-webhook-secret-file");
  return std::make_unique<billing::StripeProvider>(std::move(options));
}

int RunReconcile(const Flags& flags, const billing::Config& config) {
  auto connected = pg::ConnectFromFlags("billing reconcile", flags, 1);
  pg::Pool& pool = *connected;
  redis::Client redis(RedisOptions(flags));
  billing::LedgerStore ledger(pool);
  billing::BalanceStore balances(redis, config.limits);
  bool dry_run = flags.GetBool("dry-run");
  auto report = billing::Reconcile(ledger, balances, dry_run, stdout);
  if (!report.ok()) {
    std::fprintf(stderr, "billing reconcile: %s\n", report.status().ToString().c_str());
    return 1;
  }
  // After the repairs: a balance reconcile set right no longer counts against the identity.
  auto identity = billing::CheckLedgerIdentity(pool, balances);
  if (!identity.ok()) {
    std::fprintf(stderr, "billing reconcile: ledger identity: %s\n",
                 identity.status().ToString().c_str());
    return 1;
  }
  std::printf("%s\n", identity->Json().c_str());
  const bool repaired = report->repaired + report->budgets_repaired ==
                        report->differences + report->budget_differences;
  return repaired && identity->difference_micro_usd() == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  Flags flags("toolgate-billing",
              "Balances, holds, the ledger and settlement of executions.\n"
              "Commands: none runs the service; `reconcile [--dry-run]` sets Redis balances and\n"
              "OAuth grants' budgets to the ledger's sums, checks the whole-ledger identity and\n"
              "exits 0 when they agree (or were repaired) and the identity holds, else 1.");
  core::DefineCommonFlags(flags);
  core::DefinePostgresFlags(flags);
  core::DefineRedisFlags(flags);
  billing::DefineBillingFlags(flags);
  flags.Define("dry-run", "false", "reconcile: report differences, change nothing");

  // Flags takes a value for every flag; a bare --dry-run means --dry-run=true.
  std::vector<std::string> args(argv, argv + argc);
  std::vector<char*> argp;
  for (std::string& arg : args) {
    if (arg == "--dry-run") arg = "--dry-run=true";
    argp.push_back(arg.data());
  }
  std::vector<std::string> commands = flags.Parse(static_cast<int>(argp.size()), argp.data());

  auto config = billing::ConfigFromFlags(flags);
  if (!config.ok()) core::Die(kName, "bad configuration", config.status().message());
  if (commands.size() == 1 && commands[0] == "reconcile") return RunReconcile(flags, *config);
  if (!commands.empty()) core::Die(kName, "unknown command", commands[0] + " (see --help)");

  auto payments = PaymentProviderFor(flags, *config);
  auto bus = core::StartService(kName, flags);
  auto connected = pg::ConnectFromFlags(kName, flags);
  pg::Pool& pool = *connected;
  if (Status s = billing::MigrateSchema(pool); !s.ok()) {
    core::Die(kName, "migration failed", s.ToString());
  }
  redis::Client redis(RedisOptions(flags));
  auto postgres_ready = pg::ReadinessFromFlags(kName, flags);
  redis::Options probe_options = RedisOptions(flags);
  probe_options.pool_size = 1;
  redis::Client redis_probe(probe_options);
  core::ReadinessCheck redis_ready(
      "redis", [&redis_probe] { return redis_probe.Command({"PING"}).status(); });
  bus::Service service(kName, *bus, static_cast<size_t>(flags.GetInt("threads")));
  billing::BillingService billing(service, pool, redis, *config, std::move(payments));
  if (Status s = billing.Start(); !s.ok()) core::Die(kName, "cannot subscribe", s.ToString());
  int rc = service.Run();
  billing.Stop();
  bus->Drain(1000);  // flushes the answers of the last settlements
  return rc;
}
