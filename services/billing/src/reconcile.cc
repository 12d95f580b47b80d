#include "toolgate/billing/reconcile.h"

#include "toolgate/base/json_writer.h"

namespace toolgate::billing {
namespace {

void WriteLine(std::FILE* out, const std::string& json) {
  std::fprintf(out, "%s\n", json.c_str());
  std::fflush(out);
}

}  // namespace

Result<ReconcileReport> Reconcile(LedgerStore& ledger, BalanceStore& balances, bool dry_run,
                                  std::FILE* out) {
  auto sums = ledger.Sums();
  if (!sums.ok()) return sums.status();
  ReconcileReport report;
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
    JsonWriter w;
    w.BeginObject().Field("org_id", org).Field("redis", **redis).Field("ledger", sum).EndObject();
    WriteLine(out, w.Take());
    if (dry_run) continue;
    auto repaired = balances.Repair(org, **redis, sum);
    if (!repaired.ok()) return repaired.status();
    if (*repaired) ++report.repaired;
  }
  JsonWriter w;
  w.BeginObject()
      .Field("summary", true)
      .Field("organizations", report.organizations)
      .Field("differences", report.differences)
      .Field("repaired", report.repaired)
      .Field("not_loaded", report.not_loaded)
      .Field("dry_run", dry_run)
      .EndObject();
  WriteLine(out, w.Take());
  return report;
}

}  // namespace toolgate::billing
