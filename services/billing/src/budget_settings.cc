#include "toolgate/billing/budget_settings.h"

#include <utility>

#include "toolgate/base/time.h"

namespace toolgate::billing {
namespace {

pg::Param CapParam(const std::optional<int64_t>& cap) {
  return cap ? pg::Param(std::to_string(*cap)) : pg::Param();
}

BudgetSettings SettingsAt(const pg::Rows& rows, int i, int first_column) {
  BudgetSettings s;
  if (!rows.IsNull(i, first_column)) s.daily_micro_usd = rows.Int(i, first_column);
  if (!rows.IsNull(i, first_column + 1)) s.monthly_micro_usd = rows.Int(i, first_column + 1);
  return s;
}

void AddBudgets(std::vector<Budget>& out, BudgetKind kind, const std::string& id,
                const std::string& org_id, const BudgetSettings& settings, int64_t now_ms) {
  for (PeriodUnit unit : {PeriodUnit::kDay, PeriodUnit::kMonth}) {
    const auto& cap =
        unit == PeriodUnit::kDay ? settings.daily_micro_usd : settings.monthly_micro_usd;
    Budget b;
    b.kind = kind;
    b.id = id;
    b.cap_micro_usd = cap.value_or(0);
    b.period = PeriodAt(unit, now_ms);
    if (kind == BudgetKind::kKey) b.org_id = org_id;
    out.push_back(std::move(b));
  }
}

}  // namespace

Result<std::optional<BudgetSettings>> BudgetSettingsStore::Get(const std::string& org_id,
                                                               const std::string& key_id) {
  auto rows = pool_.Exec(
      "SELECT daily_micro_usd, monthly_micro_usd FROM billing.budgets "
      "WHERE org_id = $1 AND key_id = $2",
      {org_id, key_id});
  if (!rows.ok()) return rows.status();
  if (rows->empty()) return std::optional<BudgetSettings>();
  return std::optional<BudgetSettings>(SettingsAt(*rows, 0, 0));
}

Status BudgetSettingsStore::Put(const std::string& org_id, const std::string& key_id,
                                const BudgetSettings& settings) {
  auto rows = pool_.Exec(
      "INSERT INTO billing.budgets (org_id, key_id, daily_micro_usd, monthly_micro_usd) "
      "VALUES ($1, $2, $3::bigint, $4::bigint) ON CONFLICT (org_id, key_id) DO UPDATE SET "
      "daily_micro_usd = excluded.daily_micro_usd, monthly_micro_usd = excluded.monthly_micro_usd, "
      "updated_at = now()",
      {org_id, key_id, CapParam(settings.daily_micro_usd), CapParam(settings.monthly_micro_usd)});
  return rows.ok() ? Status::Ok() : rows.status();
}

Result<CallBudgetSettings> BudgetSettingsStore::ForCall(const std::string& org_id,
                                                        const std::string& key_id) {
  auto rows = pool_.Exec(
      "SELECT key_id, daily_micro_usd, monthly_micro_usd FROM billing.budgets "
      "WHERE org_id = $1 AND key_id IN ('', $2)",
      {org_id, key_id});
  if (!rows.ok()) return rows.status();
  CallBudgetSettings out;
  for (int i = 0; i < rows->size(); ++i) {
    if (rows->Str(i, 0).empty()) {
      out.org = SettingsAt(*rows, i, 1);
    } else {
      out.key = SettingsAt(*rows, i, 1);
    }
  }
  return out;
}

BudgetSettingsCache::BudgetSettingsCache(BudgetSettingsStore& store, Options options,
                                         std::function<int64_t()> clock_ms)
    : store_(store),
      options_(options),
      clock_ms_(clock_ms ? std::move(clock_ms) : [] { return MonotonicUs() / 1000; }),
      cache_(options.capacity) {}

std::string BudgetSettingsCache::KeyOf(const std::string& org_id, const std::string& key_id) {
  // Neither id holds a newline.
  return org_id + '\n' + key_id;
}

std::optional<CallBudgetSettings> BudgetSettingsCache::Find(const std::string& org_id,
                                                            const std::string& key_id) {
  return cache_.Get(KeyOf(org_id, key_id), clock_ms_());
}

Result<CallBudgetSettings> BudgetSettingsCache::Load(const std::string& org_id,
                                                     const std::string& key_id) {
  const uint64_t generation = cache_.generation();
  auto settings = store_.ForCall(org_id, key_id);
  if (!settings.ok()) return settings.status();
  cache_.Put(KeyOf(org_id, key_id), *settings, clock_ms_() + options_.ttl_ms, generation);
  return settings;
}

void BudgetSettingsCache::Invalidate(const std::string& org_id) {
  const std::string prefix = org_id + '\n';
  cache_.EraseIf([&](const std::string& key, const CallBudgetSettings&) {
    return key.compare(0, prefix.size(), prefix) == 0;
  });
}

std::vector<Budget> PeriodBudgetsFor(const CallBudgetSettings& settings, const std::string& org_id,
                                     const std::string& key_id, int64_t now_ms) {
  std::vector<Budget> out;
  if (settings.key && !key_id.empty()) {
    AddBudgets(out, BudgetKind::kKey, key_id, org_id, *settings.key, now_ms);
  }
  if (settings.org) AddBudgets(out, BudgetKind::kOrg, org_id, org_id, *settings.org, now_ms);
  return out;
}

}  // namespace toolgate::billing
