#include "toolgate/billing/earnings.h"

#include <algorithm>
#include <tuple>

#include "toolgate/base/json_writer.h"
#include "toolgate/base/time.h"
#include "toolgate/core/problem.h"

namespace toolgate::billing {
namespace {

int64_t StartOfUtcDay(int64_t ms) {
  int64_t day = ms / kDayMs;
  if (ms % kDayMs < 0) --day;  // before 1970: towards the earlier midnight
  return day * kDayMs;
}

std::string UtcDate(int64_t ms) {
  return FormatRfc3339(ms).substr(0, 10);
}

void Refuse(v1::Problem& problem, std::string_view field, std::string_view message) {
  if (problem.code().empty()) {
    problem = core::MakeProblem("invalid_period",
                                "Give from and to as RFC 3339 dates (2026-12-01) or times "
                                "(2026-12-01T00:00:00Z), to after from, at most 366 days apart.");
  }
  core::AddFieldError(&problem, field, message);
}

}  // namespace

std::variant<EarningsPeriod, v1::Problem> ParseEarningsPeriod(std::string_view from,
                                                              std::string_view to, int64_t now_ms) {
  v1::Problem problem;
  std::optional<int64_t> from_ms;
  std::optional<int64_t> to_ms;
  for (auto [name, text, out] :
       {std::tuple{"from", from, &from_ms}, std::tuple{"to", to, &to_ms}}) {
    if (text.empty()) continue;
    *out = ParseRfc3339(text);
    if (!*out) Refuse(problem, name, "must be an RFC 3339 date or date-time");
  }
  if (!problem.code().empty()) return problem;
  EarningsPeriod period;
  period.to_ms = to_ms.value_or(StartOfUtcDay(now_ms) + kDayMs);
  period.from_ms = from_ms.value_or(period.to_ms - kDefaultEarningsDays * kDayMs);
  if (period.to_ms <= period.from_ms) {
    Refuse(problem, "to", "must be after from");
  } else if (period.to_ms - period.from_ms > kMaxEarningsDays * kDayMs) {
    Refuse(problem, to_ms ? "to" : "from", "must be at most 366 days after from");
  }
  if (!problem.code().empty()) return problem;
  return period;
}

int64_t Payable::payable_micro_usd() const {
  return std::max<int64_t>(0, std::min(earned_micro_usd - paid_out_micro_usd, balance_micro_usd));
}

std::string PayoutJson(const PayoutItem& payout, bool with_operator) {
  JsonWriter w;
  w.BeginObject().Field("payout_id", std::to_string(payout.payout_id));
  if (with_operator) w.Field("organization_id", payout.org_id);
  w.Field("amount_micro_usd", payout.amount_micro_usd)
      .Field("reference", payout.reference)
      .Field("created_at", FormatRfc3339(payout.created_ms));
  if (with_operator) {
    w.Key("recorded_by")
        .BeginObject()
        .Field("user_id", payout.recorded_by_user_id)
        .Field("email", payout.recorded_by_email)
        .EndObject();
    w.Field("payable_after_micro_usd", payout.payable_after_micro_usd);
  }
  w.EndObject();
  return w.Take();
}

std::string EarningsJson(const EarningsStatement& s) {
  JsonWriter w;
  w.BeginObject()
      .Field("organization_id", s.org_id)
      .Field("from", FormatRfc3339(s.period.from_ms))
      .Field("to", FormatRfc3339(s.period.to_ms));
  int64_t calls = 0, gross = 0, net = 0;
  w.Key("items").BeginArray();
  for (const EarningsRow& row : s.rows) {
    w.BeginObject().Field("date", row.date).Field("function_id", row.function_id);
    w.Key("function_name");
    if (row.function_name) {
      w.String(*row.function_name);
    } else {
      w.Null();
    }
    w.Field("calls", row.calls)
        .Field("gross_micro_usd", row.gross_micro_usd)
        .Field("commission_micro_usd", row.commission_micro_usd())
        .Field("net_micro_usd", row.net_micro_usd)
        .EndObject();
    calls += row.calls;
    gross += row.gross_micro_usd;
    net += row.net_micro_usd;
  }
  w.EndArray();
  w.Key("totals")
      .BeginObject()
      .Field("calls", calls)
      .Field("gross_micro_usd", gross)
      .Field("commission_micro_usd", gross - net)
      .Field("net_micro_usd", net)
      .EndObject();
  int64_t paid = 0;
  w.Key("payouts").BeginArray();
  for (const PayoutItem& payout : s.payouts) {
    w.Raw(PayoutJson(payout, false));
    paid += payout.amount_micro_usd;
  }
  w.EndArray();
  w.Field("payouts_micro_usd", paid)
      .Field("earned_micro_usd", s.payable.earned_micro_usd)
      .Field("paid_out_micro_usd", s.payable.paid_out_micro_usd)
      .Field("balance_micro_usd", s.payable.balance_micro_usd)
      .Field("payable_micro_usd", s.payable.payable_micro_usd())
      .EndObject();
  return w.Take();
}

std::string CsvCell(std::string_view text) {
  std::string cell;
  if (!text.empty() && std::string_view("=+-@\t\r").find(text.front()) != std::string_view::npos) {
    cell += '\'';
  }
  cell += text;
  if (cell.find_first_of(",\"\r\n") == std::string::npos) return cell;
  std::string quoted = "\"";
  for (char c : cell) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  quoted += '"';
  return quoted;
}

std::string EarningsCsv(const EarningsStatement& s) {
  std::string out =
      "date,function_id,function_name,calls,gross_micro_usd,commission_micro_usd,"
      "net_micro_usd\r\n";
  for (const EarningsRow& row : s.rows) {
    out += CsvCell(row.date) + ',' + CsvCell(row.function_id) + ',' +
           CsvCell(row.function_name.value_or("")) + ',' + std::to_string(row.calls) + ',' +
           std::to_string(row.gross_micro_usd) + ',' + std::to_string(row.commission_micro_usd()) +
           ',' + std::to_string(row.net_micro_usd) + "\r\n";
  }
  return out;
}

std::string EarningsCsvFilename(const EarningsPeriod& period) {
  return "toolgate-earnings-" + UtcDate(period.from_ms) + "-" + UtcDate(period.to_ms - 1) + ".csv";
}

}  // namespace toolgate::billing
