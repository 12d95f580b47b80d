#include "toolgate/billing/reconcile.h"

#include <chrono>
#include <cstdlib>

#include "toolgate/base/json_writer.h"
#include "toolgate/base/log.h"
#include "toolgate/metrics/metrics.h"

namespace toolgate::billing {
namespace {

void WriteLine(std::FILE* out, const std::string& json) {
  if (out == nullptr) return;
  std::fprintf(out, "%s\n", json.c_str());
  std::fflush(out);
}

Status ReconcileBalances(LedgerStore& ledger, BalanceStore& balances, bool dry_run, std::FILE* out,
                         ReconcileReport& report) {
  auto sums = ledger.Sums();
  if (!sums.ok()) return sums.status();
  for (const auto& [org, sum] : *sums) {
    ++report.organizations;
    auto redis = balances.Balance(org);
    if (!redis.ok()) return redis.status();
    if (!redis->has_value()) {
      ++report.not_loaded;
      continue;
    }
    if (**redis == sum) continue;
    ++report.differences;
    report.difference_micro_usd += std::llabs(**redis - sum);
    JsonWriter w;
    w.BeginObject().Field("org_id", org).Field("redis", **redis).Field("ledger", sum).EndObject();
    WriteLine(out, w.Take());
    if (dry_run) continue;
    auto repaired = balances.Repair(org, **redis, sum);
    if (!repaired.ok()) return repaired.status();
    if (*repaired) ++report.repaired;
  }
  return Status::Ok();
}

// A budget's spent against its grant's charged executions.
Status ReconcileBudgets(LedgerStore& ledger, BalanceStore& balances, bool dry_run, std::FILE* out,
                        ReconcileReport& report) {
  auto spends = ledger.GrantSpends();
  if (!spends.ok()) return spends.status();
  for (const auto& [grant, spent] : *spends) {
    ++report.budgets;
    const Budget budget{BudgetKind::kGrant, grant, 0, {}, {}};
    auto view = balances.ReadBudget(budget);
    if (!view.ok()) return view.status();
    if (!view->spent_micro_usd) {
      ++report.budgets_not_loaded;
      continue;
    }
    const int64_t redis = *view->spent_micro_usd;
    if (redis == spent) continue;
    ++report.budget_differences;
    JsonWriter w;
    w.BeginObject()
        .Field("grant_id", grant)
        .Field("redis", redis)
        .Field("ledger", spent)
        .EndObject();
    WriteLine(out, w.Take());
    if (dry_run) continue;
    auto repaired = balances.RepairBudget(budget, redis, spent);
    if (!repaired.ok()) return repaired.status();
    if (*repaired) ++report.budgets_repaired;
  }
  return Status::Ok();
}

}  // namespace

Result<ReconcileReport> Reconcile(LedgerStore& ledger, BalanceStore& balances, bool dry_run,
                                  std::FILE* out) {
  ReconcileReport report;
  Status s = ReconcileBalances(ledger, balances, dry_run, out, report);
  if (s.ok()) s = ReconcileBudgets(ledger, balances, dry_run, out, report);
  if (!s.ok()) return s;
  JsonWriter w;
  w.BeginObject()
      .Field("summary", true)
      .Field("organizations", report.organizations)
      .Field("differences", report.differences)
      .Field("repaired", report.repaired)
      .Field("not_loaded", report.not_loaded)
      .Field("budgets", report.budgets)
      .Field("budget_differences", report.budget_differences)
      .Field("budgets_repaired", report.budgets_repaired)
      .Field("budgets_not_loaded", report.budgets_not_loaded)
      .Field("dry_run", dry_run)
      .EndObject();
  WriteLine(out, w.Take());
  return report;
}

ReconcileWatch::ReconcileWatch(LedgerStore& ledger, BalanceStore& balances, int64_t interval_ms)
    : ledger_(ledger), balances_(balances), interval_ms_(interval_ms) {}

ReconcileWatch::~ReconcileWatch() {
  Stop();
}

void ReconcileWatch::Start() {
  if (interval_ms_ <= 0 || thread_.joinable()) return;
  thread_ = std::thread([this] { Loop(); });
}

void ReconcileWatch::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

Result<ReconcileReport> ReconcileWatch::CheckOnce() {
  static auto& registry = metrics::Registry::Global();
  static metrics::Gauge& difference =
      registry
          .Gauge("toolgate_billing_reconciliation_difference_micro_usd",
                 "Sum of |Redis balance - ledger sum| over organizations at the last comparison.")
          .With({});
  static metrics::Gauge& differing =
      registry
          .Gauge("toolgate_billing_reconciliation_organizations_differing",
                 "Organizations whose Redis balance differed from the ledger at the last "
                 "comparison.")
          .With({});
  static metrics::Gauge& budgets_differing =
      registry
          .Gauge("toolgate_billing_reconciliation_budgets_differing",
                 "Budgets (OAuth grants' spent) that differed from the ledger at the last "
                 "comparison.")
          .With({});
  static metrics::Counter& errors =
      registry
          .Counter("toolgate_billing_reconciliation_errors_total",
                   "Comparisons of balances with the ledger that could not read the stores.")
          .With({});
  auto report = Reconcile(ledger_, balances_, /*dry_run=*/true, nullptr);
  if (!report.ok()) {
    errors.Inc();
    return report;
  }
  difference.Set(static_cast<double>(report->difference_micro_usd));
  differing.Set(static_cast<double>(report->differences));
  budgets_differing.Set(static_cast<double>(report->budget_differences));
  return report;
}

void ReconcileWatch::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    lock.unlock();
    auto report = CheckOnce();
    if (!report.ok()) {
      log::Warn("balances not compared with the ledger").Str("error", report.status().ToString());
    } else if (report->differences > 0 || report->budget_differences > 0) {
      log::Warn("balances differ from the ledger")
          .Int("organizations", report->differences)
          .Int("difference_micro_usd", report->difference_micro_usd)
          .Int("budgets", report->budget_differences);
    }
    lock.lock();
    cv_.wait_for(lock, std::chrono::milliseconds(interval_ms_), [this] { return stopping_; });
  }
}

}  // namespace toolgate::billing
