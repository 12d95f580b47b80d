#include "toolgate/billing/ledger_identity.h"

#include <set>

#include "toolgate/base/json_writer.h"
#include "toolgate/base/log.h"
#include "toolgate/base/time.h"
#include "toolgate/metrics/metrics.h"

namespace toolgate::billing {
namespace {

// Money from outside (credits) and money given back to outside through the provider (debits,
// stored negative).
constexpr const char* kExternalSql =
    "SELECT coalesce(sum(amount_micro_usd) FILTER (WHERE type IN ('top_up', 'grant', "
    "'payment')), 0)::bigint, "
    "coalesce(-sum(amount_micro_usd) FILTER (WHERE type IN ('refund', 'dispute')), 0)::bigint "
    "FROM billing.ledger WHERE type IN ('top_up', 'grant', 'payment', 'refund', 'dispute')";

// The platform's income, from the charges: their compute, and each fee less the revenue row paid
// for it (a fee whose revenue row is missing counts whole; a revenue row whose charge is missing
// counts nowhere here, while it is in its owner's balance).
constexpr const char* kIncomeSql =
    "WITH charges AS ("
    "  SELECT execution_id, compute_micro_usd AS compute, function_micro_usd AS fee "
    "  FROM billing.executions WHERE charged "
    "  UNION ALL SELECT execution_id, compute_micro_usd, function_micro_usd "
    "  FROM billing.ledger WHERE type = 'charge') "
    "SELECT coalesce(sum(c.compute), 0)::bigint, "
    "coalesce(sum(c.fee - coalesce(r.amount_micro_usd, 0)), 0)::bigint "
    "FROM charges c LEFT JOIN billing.ledger r "
    "ON r.execution_id = c.execution_id AND r.type = 'revenue'";

constexpr const char* kPayoutsSql =
    "SELECT coalesce(sum(amount_micro_usd), 0)::bigint FROM billing.payouts";

// Each organization's ledger balance, for those whose balance Redis has not loaded.
constexpr const char* kLedgerBalancesSql =
    "SELECT org_id, sum(amount)::bigint FROM ("
    "  SELECT org_id, amount_micro_usd AS amount FROM billing.ledger "
    "  UNION ALL SELECT org_id, -total_micro_usd FROM billing.executions WHERE charged) entries "
    "GROUP BY org_id";

}  // namespace

int64_t LedgerIdentity::difference_micro_usd() const {
  return (external_credits_micro_usd - provider_debits_micro_usd) -
         (balances_micro_usd + platform_income_micro_usd() + payouts_micro_usd);
}

std::string LedgerIdentity::Json() const {
  JsonWriter w;
  w.BeginObject()
      .Field("identity", true)
      .Field("external_credits_micro_usd", external_credits_micro_usd)
      .Field("provider_debits_micro_usd", provider_debits_micro_usd)
      .Field("balances_micro_usd", balances_micro_usd)
      .Field("compute_micro_usd", compute_micro_usd)
      .Field("commission_micro_usd", commission_micro_usd)
      .Field("platform_income_micro_usd", platform_income_micro_usd())
      .Field("payouts_micro_usd", payouts_micro_usd)
      .Field("organizations_in_redis", organizations_in_redis)
      .Field("organizations_from_ledger", organizations_from_ledger)
      .Field("difference_micro_usd", difference_micro_usd())
      .Field("holds", difference_micro_usd() == 0)
      .EndObject();
  return w.Take();
}

Result<LedgerIdentity> CheckLedgerIdentity(pg::Pool& pool, BalanceStore& balances) {
  LedgerIdentity identity;
  std::vector<std::pair<std::string, int64_t>> ledger_balances;
  Status s = pool.Transaction([&](pg::Conn& conn) -> Status {
    auto isolation = conn.Exec("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY");
    if (!isolation.ok()) return isolation.status();
    auto external = conn.Exec(kExternalSql);
    if (!external.ok()) return external.status();
    identity.external_credits_micro_usd = external->Int(0, 0);
    identity.provider_debits_micro_usd = external->Int(0, 1);
    auto income = conn.Exec(kIncomeSql);
    if (!income.ok()) return income.status();
    identity.compute_micro_usd = income->Int(0, 0);
    identity.commission_micro_usd = income->Int(0, 1);
    auto payouts = conn.Exec(kPayoutsSql);
    if (!payouts.ok()) return payouts.status();
    identity.payouts_micro_usd = payouts->Int(0, 0);
    auto sums = conn.Exec(kLedgerBalancesSql);
    if (!sums.ok()) return sums.status();
    for (int i = 0; i < sums->size(); ++i)
      ledger_balances.emplace_back(sums->Str(i, 0), sums->Int(i, 1));
    return Status::Ok();
  });
  if (!s.ok()) return s;
  auto loaded = balances.LoadedBalances();
  if (!loaded.ok()) return loaded.status();
  std::set<std::string> in_redis;
  for (const auto& [org, balance] : *loaded) {
    identity.balances_micro_usd += balance;
    in_redis.insert(org);
  }
  identity.organizations_in_redis = static_cast<int64_t>(in_redis.size());
  for (const auto& [org, sum] : ledger_balances) {
    if (in_redis.count(org) > 0) continue;
    identity.balances_micro_usd += sum;
    ++identity.organizations_from_ledger;
  }
  return identity;
}

LedgerIdentityWatch::LedgerIdentityWatch(pg::Pool& pool, BalanceStore& balances,
                                         std::chrono::milliseconds interval)
    : pool_(pool), balances_(balances), interval_(interval) {}

void LedgerIdentityWatch::Start() {
  if (interval_.count() <= 0 || task_) return;
  task_ = std::make_unique<net::PeriodicTask>(interval_, [this] {
    auto identity = CheckOnce();
    if (!identity.ok()) {
      log::Warn("ledger identity not checked").Str("error", identity.status().ToString());
    } else if (identity->difference_micro_usd() != 0) {
      log::Error("ledger identity does not hold")
          .Int("difference_micro_usd", identity->difference_micro_usd())
          .Int("external_credits_micro_usd", identity->external_credits_micro_usd)
          .Int("provider_debits_micro_usd", identity->provider_debits_micro_usd)
          .Int("balances_micro_usd", identity->balances_micro_usd)
          .Int("platform_income_micro_usd", identity->platform_income_micro_usd())
          .Int("payouts_micro_usd", identity->payouts_micro_usd);
    }
  });
}

void LedgerIdentityWatch::Stop() {
  task_.reset();  // waits for a check in progress
}

Result<LedgerIdentity> LedgerIdentityWatch::CheckOnce() {
  static auto& registry = metrics::Registry::Global();
  static metrics::Gauge& imbalance =
      registry
          .Gauge("toolgate_billing_ledger_imbalance_micro_usd",
                 "External credits less provider debits, less the balances, the platform's "
                 "income and the payouts, at the last check of the ledger identity (0: it held).")
          .With({});
  static metrics::Gauge& checked =
      registry
          .Gauge("toolgate_billing_ledger_identity_checked_timestamp_seconds",
                 "When the ledger identity was last computed (Unix seconds).")
          .With({});
  static metrics::Counter& errors =
      registry
          .Counter("toolgate_billing_ledger_identity_errors_total",
                   "Checks of the ledger identity that could not read PostgreSQL or Redis.")
          .With({});
  auto identity = CheckLedgerIdentity(pool_, balances_);
  if (!identity.ok()) {
    errors.Inc();
    return identity;
  }
  imbalance.Set(static_cast<double>(identity->difference_micro_usd()));
  checked.Set(static_cast<double>(NowMs()) / 1000.0);
  return identity;
}

}  // namespace toolgate::billing
