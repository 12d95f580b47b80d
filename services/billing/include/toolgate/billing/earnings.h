// A publishing organization's earnings (GET /billing/earnings, docs/api.md "Earnings and
// payouts"): the fees other organizations' calls of its functions paid, less the platform's
// commission, per UTC day and function, with the period's payouts and what can still be paid
// out. This file holds the pure parts: the period a request asks for, the statement's shape, and
// its two renderings (JSON and a CSV statement). No I/O; every function is thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "toolgate/v1/toolgate.pb.h"

namespace toolgate::billing {

// The half-open UTC interval [from_ms, to_ms) a statement covers.
struct EarningsPeriod {
  int64_t from_ms = 0;
  int64_t to_ms = 0;
};

inline constexpr int64_t kDayMs = 24 * 3600 * 1000LL;
// Without from, a statement covers this many days before to.
inline constexpr int64_t kDefaultEarningsDays = 30;
// A statement covers at most this many days: longer ones are asked for in parts.
inline constexpr int64_t kMaxEarningsDays = 366;

// The period of ?from=&to= (each empty when absent, else an RFC 3339 date "2026-12-01", midnight
// UTC, or date-time). to defaults to the start of the UTC day after now_ms (so today is in it),
// from to kDefaultEarningsDays before to. Returns the period, or 400 invalid_period naming each
// bad parameter: not RFC 3339, to not after from, or longer than kMaxEarningsDays.
std::variant<EarningsPeriod, v1::Problem> ParseEarningsPeriod(std::string_view from,
                                                              std::string_view to, int64_t now_ms);

// One UTC day's revenue rows of one function.
struct EarningsRow {
  std::string date;  // "2026-12-01"
  std::string function_id;
  // nullopt when the registry could not name it (deleted, or not reachable).
  std::optional<std::string> function_name;
  int64_t calls = 0;
  int64_t gross_micro_usd = 0;  // the fees the callers paid
  int64_t net_micro_usd = 0;    // the organization's share: the revenue rows' sum
  int64_t commission_micro_usd() const { return gross_micro_usd - net_micro_usd; }
};

// One payout: money an operator sent to the organization (billing.payouts).
struct PayoutItem {
  int64_t payout_id = 0;  // its ledger id
  std::string org_id;
  int64_t amount_micro_usd = 0;  // positive; the ledger row holds its negation
  std::string reference;         // the bank or transfer reference
  std::string recorded_by_user_id;
  std::string recorded_by_email;
  int64_t payable_after_micro_usd = 0;
  int64_t created_ms = 0;
};

// What an organization may be paid out, all time.
struct Payable {
  int64_t earned_micro_usd = 0;    // every revenue row's sum: its net earnings
  int64_t paid_out_micro_usd = 0;  // every payout's sum
  int64_t balance_micro_usd = 0;   // its ledger balance
  // Earnings not yet paid out, but never more than the balance: earnings the organization spent
  // on its own calls are no longer there to pay (docs/decisions.md "What a payout may take").
  int64_t payable_micro_usd() const;
};

struct EarningsStatement {
  std::string org_id;
  EarningsPeriod period;
  std::vector<EarningsRow> rows;    // by date, then function id
  std::vector<PayoutItem> payouts;  // recorded in the period, oldest first
  Payable payable;
};

// The JSON body of GET /billing/earnings (docs/api.md).
std::string EarningsJson(const EarningsStatement& statement);
// The CSV statement (RFC 4180: CRLF, quoted where needed): a header row and one row per day and
// function, each text cell made inert for spreadsheets (CsvCell).
std::string EarningsCsv(const EarningsStatement& statement);
// "toolgate-earnings-2026-11-01-2026-12-01.csv": the dates of from and of the last day in the
// period, for Content-Disposition.
std::string EarningsCsvFilename(const EarningsPeriod& period);

// One CSV cell: quoted when it holds a comma, a quote, CR or LF (quotes doubled). A cell a
// spreadsheet would read as a formula (starting with =, +, -, @, a tab or CR) gets a leading
// apostrophe first, so a function's name can never run as a formula on the reader's machine.
std::string CsvCell(std::string_view text);

// A payout as members and operators see it; with_operator adds organization_id, recorded_by and
// payable_after_micro_usd (operators' listing and answers only).
std::string PayoutJson(const PayoutItem& payout, bool with_operator);

}  // namespace toolgate::billing
