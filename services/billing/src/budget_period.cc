#include "toolgate/billing/budget_period.h"

#include <charconv>
#include <cstdio>

namespace toolgate::billing {
namespace {

constexpr int64_t kDayMs = 24 * 3600 * 1000LL;

// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil).
int64_t DaysFromCivil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

struct Civil {
  int64_t y, m, d;
};

Civil CivilFromDays(int64_t z) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const int64_t doe = z - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  const int64_t d = doy - (153 * mp + 2) / 5 + 1;
  const int64_t m = mp + (mp < 10 ? 3 : -9);
  return {yoe + era * 400 + (m <= 2), m, d};
}

int64_t FloorDiv(int64_t a, int64_t b) {
  return a / b - ((a % b != 0) && ((a < 0) != (b < 0)));
}

std::optional<int64_t> Digits(std::string_view text) {
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || ptr != text.data() + text.size()) return std::nullopt;
  return v;
}

BudgetPeriod Make(PeriodUnit unit, Civil c) {
  BudgetPeriod p;
  p.unit = unit;
  char name[48];  // room for any int64 year, which no clock reaches
  if (unit == PeriodUnit::kDay) {
    p.start_ms = DaysFromCivil(c.y, c.m, c.d) * kDayMs;
    p.end_ms = p.start_ms + kDayMs;
    std::snprintf(name, sizeof name, "%04d-%02d-%02d", static_cast<int>(c.y), static_cast<int>(c.m),
                  static_cast<int>(c.d));
  } else {
    p.start_ms = DaysFromCivil(c.y, c.m, 1) * kDayMs;
    p.end_ms = (c.m == 12 ? DaysFromCivil(c.y + 1, 1, 1) : DaysFromCivil(c.y, c.m + 1, 1)) * kDayMs;
    std::snprintf(name, sizeof name, "%04d-%02d", static_cast<int>(c.y), static_cast<int>(c.m));
  }
  p.name = name;
  return p;
}

}  // namespace

BudgetPeriod PeriodAt(PeriodUnit unit, int64_t now_ms) {
  return Make(unit, CivilFromDays(FloorDiv(now_ms, kDayMs)));
}

std::optional<BudgetPeriod> ParsePeriod(PeriodUnit unit, std::string_view name) {
  const size_t size = unit == PeriodUnit::kDay ? 10 : 7;
  if (name.size() != size || name[4] != '-' || (unit == PeriodUnit::kDay && name[7] != '-')) {
    return std::nullopt;
  }
  auto y = Digits(name.substr(0, 4));
  auto m = Digits(name.substr(5, 2));
  auto d = unit == PeriodUnit::kDay ? Digits(name.substr(8, 2)) : std::optional<int64_t>(1);
  if (!y || !m || !d || *m < 1 || *m > 12 || *d < 1 || *d > 31) return std::nullopt;
  // Through the day's number, so that a day past its month's end ("2026-02-30") names no day.
  BudgetPeriod p = PeriodAt(unit, DaysFromCivil(*y, *m, *d) * kDayMs);
  if (p.name != name) return std::nullopt;
  return p;
}

std::string_view PeriodUnitTag(PeriodUnit unit) {
  return unit == PeriodUnit::kDay ? "d" : "m";
}

std::string_view PeriodUnitName(PeriodUnit unit) {
  return unit == PeriodUnit::kDay ? "daily" : "monthly";
}

}  // namespace toolgate::billing
