// The periods of spending limits: a UTC calendar day or a UTC calendar month. A period budget's
// Redis key names its period ("2026-12-01", "2026-12"), so a new day starts a new budget without
// anything resetting the old one, and the caller's clock alone decides which period a hold
// counts against (the scripts never read the time for budgets, so a test can drive the day).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace toolgate::billing {

enum class PeriodUnit { kDay, kMonth };

struct BudgetPeriod {
  PeriodUnit unit = PeriodUnit::kDay;
  int64_t start_ms = 0;  // the period's first instant, UTC
  int64_t end_ms = 0;    // the next period's first instant
  std::string name;      // "2026-12-01" (a day) or "2026-12" (a month)
};

// The day or month that contains now_ms (Unix epoch milliseconds, UTC).
BudgetPeriod PeriodAt(PeriodUnit unit, int64_t now_ms);
// The period a name gives (as PeriodAt names it); nullopt for any other text.
std::optional<BudgetPeriod> ParsePeriod(PeriodUnit unit, std::string_view name);
// "d" or "m": how a budget key marks the unit.
std::string_view PeriodUnitTag(PeriodUnit unit);
// "daily" or "monthly": how the API names it.
std::string_view PeriodUnitName(PeriodUnit unit);

}  // namespace toolgate::billing
