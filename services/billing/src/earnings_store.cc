#include "toolgate/billing/earnings_store.h"

#include <utility>

#include "toolgate/base/log.h"
#include "toolgate/billing/payout.h"

namespace toolgate::billing {
namespace {

using pg::Param;

constexpr const char* kPayoutColumns =
    "ledger_id, org_id, amount_micro_usd, reference, recorded_by_user_id, recorded_by_email, "
    "payable_after_micro_usd, (extract(epoch FROM created_at) * 1000)::bigint";

PayoutItem PayoutAt(const pg::Rows& rows, int i, int first = 0) {
  PayoutItem p;
  p.payout_id = rows.Int(i, first + 0);
  p.org_id = rows.Str(i, first + 1);
  p.amount_micro_usd = rows.Int(i, first + 2);
  p.reference = rows.Str(i, first + 3);
  p.recorded_by_user_id = rows.Str(i, first + 4);
  p.recorded_by_email = rows.Str(i, first + 5);
  p.payable_after_micro_usd = rows.Int(i, first + 6);
  p.created_ms = rows.Int(i, first + 7);
  return p;
}

std::vector<PayoutItem> PayoutsOf(const pg::Rows& rows) {
  std::vector<PayoutItem> out;
  for (int i = 0; i < rows.size(); ++i) out.push_back(PayoutAt(rows, i));
  return out;
}

// Earned (the revenue rows, from ledger_revenue_org_created alone), paid out and the balance
// (as LedgerStore::Sum reads it: the ledger's rows less the charged executions).
constexpr const char* kPayableSql =
    "SELECT (SELECT coalesce(sum(amount_micro_usd), 0) FROM billing.ledger "
    "WHERE org_id = $1 AND type = 'revenue')::bigint, "
    "(SELECT coalesce(sum(amount_micro_usd), 0) FROM billing.payouts WHERE org_id = $1)::bigint, "
    "((SELECT coalesce(sum(amount_micro_usd), 0) FROM billing.ledger WHERE org_id = $1) - "
    "(SELECT coalesce(sum(total_micro_usd), 0) FROM billing.executions "
    "WHERE org_id = $1 AND charged))::bigint";

template <typename Executor>
Result<Payable> ReadPayable(Executor& executor, const std::string& org_id) {
  auto rows = executor.Exec(kPayableSql, {org_id});
  if (!rows.ok()) return rows.status();
  Payable p;
  p.earned_micro_usd = rows->Int(0, 0);
  p.paid_out_micro_usd = rows->Int(0, 1);
  p.balance_micro_usd = rows->Int(0, 2);
  return p;
}

// The entry an idempotency key of the organization names, with the payout's details when it is
// one.
constexpr const char* kKeyedEntrySql =
    "SELECT l.type, l.amount_micro_usd, p.ledger_id IS NOT NULL, coalesce(p.ledger_id, 0), "
    "coalesce(p.org_id, ''), coalesce(p.amount_micro_usd, 0), coalesce(p.reference, ''), "
    "coalesce(p.recorded_by_user_id, ''), coalesce(p.recorded_by_email, ''), "
    "coalesce(p.payable_after_micro_usd, 0), "
    "coalesce((extract(epoch FROM p.created_at) * 1000)::bigint, 0) "
    "FROM billing.ledger l LEFT JOIN billing.payouts p ON p.ledger_id = l.id "
    "WHERE l.org_id = $1 AND l.idempotency_key = $2";

// The outcome of a request whose key names an earlier entry: the same payout, or a refusal.
PayoutOutcome EarlierOutcome(const pg::Rows& rows, const NewPayout& payout) {
  PayoutOutcome out;
  const std::string type = rows.Str(0, 0);
  const bool is_payout = rows.Str(0, 2) == "t";
  if (is_payout) {
    out.payout = PayoutAt(rows, 0, 3);
    if (out.payout.amount_micro_usd == payout.amount_micro_usd &&
        out.payout.reference == payout.reference) {
      out.kind = PayoutOutcome::Kind::kRepeated;
      return out;
    }
    out.key_use = "a payout of " + std::to_string(out.payout.amount_micro_usd) +
                  " micro-USD with reference \"" + out.payout.reference + "\"";
  } else {
    out.key_use = "a " + type + " of " + std::to_string(rows.Int(0, 1)) + " micro-USD";
  }
  out.kind = PayoutOutcome::Kind::kKeyReused;
  out.payout = {};
  return out;
}

}  // namespace

Result<std::vector<EarningsRow>> EarningsStore::Rows(const std::string& org_id,
                                                     const EarningsPeriod& period, int limit) {
  // From ledger_revenue_org_created alone.
  auto rows = pool_.Exec(
      "SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, function_id, "
      "count(*), coalesce(sum(function_micro_usd), 0)::bigint, "
      "coalesce(sum(amount_micro_usd), 0)::bigint FROM billing.ledger "
      "WHERE org_id = $1 AND type = 'revenue' "
      "AND created_at >= to_timestamp($2::bigint / 1000.0) "
      "AND created_at < to_timestamp($3::bigint / 1000.0) "
      "GROUP BY day, function_id ORDER BY day, function_id LIMIT $4",
      {org_id, std::to_string(period.from_ms), std::to_string(period.to_ms),
       std::to_string(limit)});
  if (!rows.ok()) return rows.status();
  std::vector<EarningsRow> out;
  for (int i = 0; i < rows->size(); ++i) {
    EarningsRow row;
    row.date = rows->Str(i, 0);
    row.function_id = rows->Str(i, 1);
    row.calls = rows->Int(i, 2);
    row.gross_micro_usd = rows->Int(i, 3);
    row.net_micro_usd = rows->Int(i, 4);
    out.push_back(std::move(row));
  }
  return out;
}

Result<std::vector<PayoutItem>> EarningsStore::PayoutsIn(const std::string& org_id,
                                                         const EarningsPeriod& period, int limit) {
  auto rows = pool_.Exec(
      std::string("SELECT ") + kPayoutColumns +
          " FROM billing.payouts WHERE org_id = $1 "
          "AND created_at >= to_timestamp($2::bigint / 1000.0) "
          "AND created_at < to_timestamp($3::bigint / 1000.0) ORDER BY ledger_id LIMIT $4",
      {org_id, std::to_string(period.from_ms), std::to_string(period.to_ms),
       std::to_string(limit)});
  if (!rows.ok()) return rows.status();
  return PayoutsOf(*rows);
}

Result<Page<PayoutItem>> EarningsStore::Payouts(const std::string& org_id, int limit,
                                                std::optional<int64_t> before_id) {
  auto rows = pool_.Exec(
      std::string("SELECT ") + kPayoutColumns +
          " FROM billing.payouts WHERE org_id = $1 AND ($2::bigint IS NULL OR ledger_id < $2) "
          "ORDER BY ledger_id DESC LIMIT $3",
      {org_id, before_id ? Param(std::to_string(*before_id)) : Param(), std::to_string(limit + 1)});
  if (!rows.ok()) return rows.status();
  Page<PayoutItem> page;
  page.items = PayoutsOf(*rows);
  if (static_cast<int>(page.items.size()) > limit) {
    page.items.resize(limit);
    page.next_before = page.items.back().payout_id;
  }
  return page;
}

Result<Payable> EarningsStore::PayableOf(const std::string& org_id) {
  return ReadPayable(pool_, org_id);
}

Result<PayoutOutcome> EarningsStore::RecordPayout(const NewPayout& payout,
                                                  const PayoutBalanceSteps& steps) {
  PayoutOutcome out;
  bool refused = false;          // out says why; the transaction rolls back
  std::optional<int64_t> taken;  // the ledger id whose payout the balance step took
  Status s = pool_.Transaction([&](pg::Conn& conn) -> Status {
    // One organization's payouts take their turns, whichever replica serves them: the second of
    // two concurrent requests for the same money reads the first's row and finds nothing left.
    auto lock = conn.Exec("SELECT pg_advisory_xact_lock(hashtext('billing.payouts'), hashtext($1))",
                          {payout.org_id});
    if (!lock.ok()) return lock.status();
    if (!payout.idempotency_key.empty()) {
      auto earlier = conn.Exec(kKeyedEntrySql, {payout.org_id, payout.idempotency_key});
      if (!earlier.ok()) return earlier.status();
      if (!earlier->empty()) {
        out = EarlierOutcome(*earlier, payout);
        return Status::Ok();  // nothing written: the commit is a no-op
      }
    }
    auto payable = ReadPayable(conn, payout.org_id);
    if (!payable.ok()) return payable.status();
    if (PayoutRefusal(payout.amount_micro_usd, *payable)) {
      out.kind = PayoutOutcome::Kind::kExceedsPayable;
      out.payable = *payable;
      refused = true;
      return Status::Internal("payout refused");
    }
    auto inserted = conn.Exec(
        "INSERT INTO billing.ledger (org_id, type, amount_micro_usd, idempotency_key) "
        "VALUES ($1, 'payout', $2, $3) ON CONFLICT (org_id, idempotency_key) DO NOTHING "
        "RETURNING id",
        {payout.org_id, std::to_string(-payout.amount_micro_usd),
         payout.idempotency_key.empty() ? Param() : Param(payout.idempotency_key)});
    if (!inserted.ok()) return inserted.status();
    if (inserted->empty()) {
      // A credit with the same key committed since the look above (credits take no lock).
      auto earlier = conn.Exec(kKeyedEntrySql, {payout.org_id, payout.idempotency_key});
      if (!earlier.ok()) return earlier.status();
      if (earlier->empty()) return Status::Internal("payout key conflict without an entry");
      out = EarlierOutcome(*earlier, payout);
      return Status::Ok();
    }
    PayoutItem& item = out.payout;
    item.payout_id = inserted->Int(0, 0);
    item.org_id = payout.org_id;
    item.amount_micro_usd = payout.amount_micro_usd;
    item.reference = payout.reference;
    item.recorded_by_user_id = payout.recorded_by_user_id;
    item.recorded_by_email = payout.recorded_by_email;
    item.payable_after_micro_usd =
        Payable{payable->earned_micro_usd, payable->paid_out_micro_usd + payout.amount_micro_usd,
                payable->balance_micro_usd - payout.amount_micro_usd}
            .payable_micro_usd();
    auto detail = conn.Exec(
        "INSERT INTO billing.payouts (ledger_id, org_id, amount_micro_usd, reference, "
        "recorded_by_user_id, recorded_by_email, payable_after_micro_usd) "
        "VALUES ($1, $2, $3, $4, $5, $6, $7) "
        "RETURNING (extract(epoch FROM created_at) * 1000)::bigint",
        {std::to_string(item.payout_id), item.org_id, std::to_string(item.amount_micro_usd),
         item.reference, item.recorded_by_user_id, item.recorded_by_email,
         std::to_string(item.payable_after_micro_usd)});
    if (!detail.ok()) return detail.status();
    item.created_ms = detail->Int(0, 0);
    // Last, with every row written: the money leaves the cached balance only if no call in
    // flight holds it, and the rows commit only if it left.
    auto take = steps.take(item.payout_id);
    if (!take.ok()) return take.status();
    switch (take->verdict) {
      case PayoutTake::Verdict::kTaken:
      case PayoutTake::Verdict::kTakenBefore:
        taken = item.payout_id;
        out.kind = PayoutOutcome::Kind::kRecorded;
        return Status::Ok();
      case PayoutTake::Verdict::kNotAvailable:
        out.kind = PayoutOutcome::Kind::kExceedsAvailable;
        out.available_micro_usd = take->available_micro_usd;
        refused = true;
        return Status::Internal("payout refused");
      case PayoutTake::Verdict::kNotLoaded:
        break;
    }
    return Status::Unavailable("the cached balance is not loaded");
  });
  if (refused) {
    out.payout = {};
    return out;
  }
  if (s.ok()) return out;
  if (taken) {
    // Only the commit can have failed. Give the money back to the cached balance unless the row
    // is there after all (the commit's answer was lost, not the commit).
    auto found =
        pool_.Exec("SELECT 1 FROM billing.payouts WHERE ledger_id = $1", {std::to_string(*taken)});
    if (found.ok() && found->empty()) {
      steps.give_back(*taken);
    } else if (found.ok()) {
      return out;  // committed
    } else {
      log::Error("payout's commit unknown; reconcile repairs the balance")
          .Str("org_id", payout.org_id)
          .Str("ledger_id", std::to_string(*taken))
          .Str("error", found.status().ToString());
    }
  }
  return s;
}

}  // namespace toolgate::billing
