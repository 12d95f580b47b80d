#include "toolgate/billing/ledger_store.h"

#include <algorithm>
#include <tuple>

#include "BillingMigrations.h"
#include "toolgate/base/crypto.h"
#include "toolgate/base/time.h"
#include "toolgate/metrics/metrics.h"

namespace toolgate::billing {
namespace {

using pg::Param;

constexpr const char* kCreatedMs = "(extract(epoch FROM created_at) * 1000)::bigint";

// An organization's balance: its ledger rows and its charged executions (each from its index
// alone: ledger_org_id and executions_org include the amounts).
constexpr const char* kBalanceSql =
    "SELECT (SELECT coalesce(sum(amount_micro_usd), 0) FROM billing.ledger WHERE org_id = $1)::"
    "bigint - (SELECT coalesce(sum(total_micro_usd), 0) FROM billing.executions "
    "WHERE org_id = $1 AND charged)::bigint";

EntryType EntryTypeOf(const std::string& name) {
  return ParseEntryType(name).value_or(EntryType::kCharge);
}

Param OptionalText(const std::string& s) {
  return s.empty() ? Param() : Param(s);
}

template <typename T>
Page<T> ToPage(std::vector<T> items, int limit, int64_t (*position)(const T&)) {
  Page<T> page;
  if (static_cast<int>(items.size()) > limit) {
    items.resize(limit);
    page.next_before = position(items.back());
  }
  page.items = std::move(items);
  return page;
}

// Every column but logs, which only GET /executions/{id} shows.
constexpr const char* kExecutionColumns =
    "seq, execution_id, org_id, owner_org_id, function_id, version, status_code, runtime_ms, "
    "memory_used_mb, compute_type, compute_micro_usd, function_micro_usd, total_micro_usd, "
    "trace_id, (extract(epoch FROM created_at) * 1000)::bigint, egress_bytes, "
    "coalesce(grant_id::text, ''), coalesce(client_name, '')";
// The columns Execution() reads after kExecutionColumns.
constexpr int kLogsColumn = 18;

ExecutionItem ExecutionAt(const pg::Rows& rows, int i) {
  ExecutionItem item;
  item.seq = rows.Int(i, 0);
  ExecutionRecord& r = item.record;
  r.execution_id = rows.Str(i, 1);
  r.org_id = rows.Str(i, 2);
  r.owner_org_id = rows.Str(i, 3);
  r.function_id = rows.Str(i, 4);
  r.version = rows.Str(i, 5);
  r.status_code = static_cast<int32_t>(rows.Int(i, 6));
  r.runtime_ms = rows.Int(i, 7);
  r.memory_used_mb = rows.Int(i, 8);
  r.compute_type = rows.Str(i, 9);
  r.charge.compute_micro_usd = rows.Int(i, 10);
  r.charge.function_micro_usd = rows.Int(i, 11);
  r.charge.total_micro_usd = rows.Int(i, 12);
  r.trace_id = rows.Str(i, 13);
  item.created_ms = rows.Int(i, 14);
  r.egress_bytes = rows.Int(i, 15);
  r.grant_id = rows.Str(i, 16);
  r.client_name = rows.Str(i, 17);
  return item;
}

}  // namespace

Status MigrateSchema(pg::Pool& pool) {
  return pg::Migrate(pool, "billing", BillingMigrations());
}

std::string PgArrayLiteral(const std::vector<std::optional<std::string>>& values) {
  std::string out = "{";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += ',';
    if (!values[i]) {
      out += "NULL";
      continue;
    }
    out += '"';
    for (char c : *values[i]) {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
    out += '"';
  }
  out += '}';
  return out;
}

Result<int64_t> LedgerStore::Sum(const std::string& org_id) {
  auto rows = pool_.Exec(kBalanceSql, {org_id});
  if (!rows.ok()) return rows.status();
  return rows->Int(0, 0);
}

Result<std::vector<std::pair<std::string, int64_t>>> LedgerStore::Sums() {
  auto rows = pool_.Exec(
      "SELECT org_id, sum(amount)::bigint FROM ("
      "  SELECT org_id, amount_micro_usd AS amount FROM billing.ledger "
      "  UNION ALL SELECT org_id, -total_micro_usd FROM billing.executions WHERE charged) entries "
      "GROUP BY org_id ORDER BY org_id");
  if (!rows.ok()) return rows.status();
  std::vector<std::pair<std::string, int64_t>> out;
  for (int i = 0; i < rows->size(); ++i) out.emplace_back(rows->Str(i, 0), rows->Int(i, 1));
  return out;
}

Result<std::vector<std::string>> LedgerStore::RecordSettlements(
    const std::vector<const Settlement*>& batch) {
  static auto& sizes = metrics::Registry::Global()
                           .Histogram("toolgate_billing_ledger_batch_size",
                                      "Settlements written to the ledger in one transaction.", {},
                                      {1, 2, 4, 8, 16, 32, 64, 128, 256, 512})
                           .With({});
  sizes.Observe(static_cast<double>(batch.size()));
  static auto& seconds = metrics::Registry::Global()
                             .Histogram("toolgate_billing_ledger_batch_duration_seconds",
                                        "Time to write one batch of settlements to the ledger.")
                             .With({});
  const int64_t start_us = MonotonicUs();
  // Rows in one global order, so that two replicas writing overlapping retries take their
  // locks in the same order and cannot deadlock. A charge is its execution's row (charged), not
  // a ledger row: the ledger takes the rest.
  std::vector<const Settlement*> settlements(batch);
  std::sort(settlements.begin(), settlements.end(), [](const Settlement* a, const Settlement* b) {
    return a->execution.execution_id < b->execution.execution_id;
  });
  using Column = std::vector<std::optional<std::string>>;
  std::vector<const LedgerEntry*> entries;
  std::vector<const ExecutionRecord*> executions;
  Column charged;
  for (const Settlement* s : settlements) {
    executions.push_back(&s->execution);
    bool has_charge = false;
    for (const LedgerEntry& e : s->entries) {
      if (e.type == EntryType::kCharge) {
        has_charge = true;
      } else {
        entries.push_back(&e);
      }
    }
    charged.emplace_back(has_charge ? "t" : "f");
  }
  std::sort(entries.begin(), entries.end(), [](const LedgerEntry* a, const LedgerEntry* b) {
    return std::tie(a->execution_id, a->type) < std::tie(b->execution_id, b->type);
  });

  auto column = [](const auto& rows, auto field) {
    Column c;
    c.reserve(rows.size());
    for (const auto* row : rows) c.emplace_back(field(*row));
    return PgArrayLiteral(c);
  };
  // NULL for a call made without a grant (a grant's client may have given no name: '').
  auto with_grant = [](const ExecutionRecord& r, const std::string& value) {
    return r.grant_id.empty() ? std::optional<std::string>() : std::optional<std::string>(value);
  };
  pg::Params ledger_params = {
      column(entries, [](const LedgerEntry& e) { return e.org_id; }),
      column(entries, [](const LedgerEntry& e) { return std::string(EntryTypeName(e.type)); }),
      column(entries, [](const LedgerEntry& e) { return e.execution_id; }),
      column(entries, [](const LedgerEntry& e) { return e.function_id; }),
      column(entries, [](const LedgerEntry& e) { return e.version; }),
      column(entries, [](const LedgerEntry& e) { return std::to_string(e.compute_micro_usd); }),
      column(entries, [](const LedgerEntry& e) { return std::to_string(e.function_micro_usd); }),
      column(entries, [](const LedgerEntry& e) { return std::to_string(e.amount_micro_usd); }),
  };
  using R = ExecutionRecord;
  pg::Params execution_params = {
      column(executions, [](const R& r) { return r.execution_id; }),
      column(executions, [](const R& r) { return r.org_id; }),
      column(executions, [](const R& r) { return r.owner_org_id; }),
      column(executions, [](const R& r) { return r.function_id; }),
      column(executions, [](const R& r) { return r.version; }),
      column(executions, [](const R& r) { return std::to_string(r.status_code); }),
      column(executions, [](const R& r) { return std::to_string(r.runtime_ms); }),
      column(executions, [](const R& r) { return std::to_string(r.memory_used_mb); }),
      column(executions, [](const R& r) { return r.compute_type; }),
      column(executions, [](const R& r) { return std::to_string(r.charge.compute_micro_usd); }),
      column(executions, [](const R& r) { return std::to_string(r.charge.function_micro_usd); }),
      column(executions, [](const R& r) { return std::to_string(r.charge.total_micro_usd); }),
      column(executions, [](const R& r) { return r.trace_id; }),
      column(executions, [](const R& r) { return r.logs; }),
      column(executions, [](const R& r) { return r.egress_json; }),
      column(executions, [](const R& r) { return std::to_string(r.egress_bytes); }),
      column(executions, [](const R& r) { return r.hops_json.empty() ? "[]" : r.hops_json; }),
      PgArrayLiteral(charged),
      column(executions, [&](const R& r) { return with_grant(r, r.grant_id); }),
      column(executions, [&](const R& r) { return with_grant(r, r.client_name); }),
      column(executions,
             [](const R& r) { return r.key_id.empty() ? std::optional<std::string>() : r.key_id; }),
  };

  // The final states of asynchronous and keyed calls, in the same order.
  std::vector<const StateUpdate*> states;
  for (const Settlement* s : settlements) {
    if (s->state) states.push_back(&*s->state);
  }
  pg::Params state_params = {
      column(states, [](const StateUpdate& u) { return u.execution_id; }),
      column(states,
             [](const StateUpdate& u) { return std::string(ExecutionStatusName(u.status)); }),
      column(states, [](const StateUpdate& u) { return Base64Encode(u.reply); }),
  };

  // One statement, so one round trip and one implicit transaction: a BEGIN, two INSERTs and a
  // COMMIT cost PostgreSQL four wakeups per batch, which under load was most of its CPU per call.
  // The ledger's params come first ($1..$8), the executions' after ($9..$29), the states' last
  // ($30..$32). A state is final once written; only a lost one (its hold expired with no result)
  // is replaced by the result that arrives late after all.
  pg::Params params = std::move(ledger_params);
  params.insert(params.end(), std::make_move_iterator(execution_params.begin()),
                std::make_move_iterator(execution_params.end()));
  params.insert(params.end(), std::make_move_iterator(state_params.begin()),
                std::make_move_iterator(state_params.end()));
  auto r = pool_.Exec(
      "WITH states AS ("
      "  UPDATE billing.execution_states s SET status = u.status, "
      "  reply = decode(u.reply, 'base64'), finished_at = now(), lost = false "
      "  FROM unnest($30::text[], $31::text[], $32::text[]) AS u(id, status, reply) "
      "  WHERE s.execution_id = u.id AND (s.finished_at IS NULL OR s.lost)), "
      "ledger AS ("
      "  INSERT INTO billing.ledger (org_id, type, execution_id, function_id, version, "
      "  compute_micro_usd, function_micro_usd, amount_micro_usd) "
      "  SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], "
      "  $6::bigint[], $7::bigint[], $8::bigint[]) "
      "  ON CONFLICT (execution_id, type) DO NOTHING) "
      "INSERT INTO billing.executions (execution_id, org_id, owner_org_id, function_id, "
      "version, status_code, runtime_ms, memory_used_mb, compute_type, compute_micro_usd, "
      "function_micro_usd, total_micro_usd, trace_id, logs, egress, egress_bytes, hops, "
      "charged, grant_id, client_name, key_id) "
      "SELECT * FROM unnest($9::text[], $10::text[], $11::text[], $12::text[], $13::text[], "
      "$14::integer[], $15::bigint[], $16::bigint[], $17::text[], $18::bigint[], $19::bigint[], "
      "$20::bigint[], $21::text[], $22::text[], $23::text[], $24::bigint[], $25::text[], "
      "$26::boolean[], $27::uuid[], $28::text[], $29::text[]) "
      "ON CONFLICT (execution_id) DO NOTHING RETURNING execution_id",
      params);
  seconds.Observe(static_cast<double>(MonotonicUs() - start_us) / 1e6);
  if (!r.ok()) return r.status();
  std::vector<std::string> recorded;
  for (int i = 0; i < r->size(); ++i) recorded.push_back(r->Str(i, 0));
  return recorded;
}

Result<std::optional<SettleStep>> LedgerStore::ChargeOf(const std::string& execution_id) {
  auto rows = pool_.Exec(
      "SELECT type, org_id, amount_micro_usd FROM billing.ledger WHERE execution_id = $1 "
      "UNION ALL SELECT 'charge', org_id, -total_micro_usd FROM billing.executions "
      "WHERE execution_id = $1 AND charged",
      {execution_id});
  if (!rows.ok()) return rows.status();
  SettleStep step;
  step.execution_id = execution_id;
  bool charged = false;
  for (int i = 0; i < rows->size(); ++i) {
    if (rows->Str(i, 0) == "charge") {
      charged = true;
      step.org_id = rows->Str(i, 1);
      step.total_micro_usd = -rows->Int(i, 2);
    } else if (rows->Str(i, 0) == "revenue") {
      step.owner_org_id = rows->Str(i, 1);
      step.revenue_micro_usd = rows->Int(i, 2);
    }
  }
  if (!charged) return std::optional<SettleStep>();
  return std::optional<SettleStep>(std::move(step));
}

namespace {

// The first answer to a credit with this key, with what the ledger row says of its source.
constexpr const char* kEarlierCreditSql =
    "SELECT l.id, l.amount_micro_usd, t.balance_micro_usd, l.type, coalesce(l.reason, ''), "
    "coalesce(l.granted_by_user_id, ''), coalesce(l.granted_by_email, '') FROM billing.ledger l "
    "JOIN billing.top_ups t ON t.ledger_id = l.id "
    "WHERE l.org_id = $1 AND l.idempotency_key = $2";

CreditOutcome EarlierCredit(const pg::Rows& rows) {
  CreditOutcome out;
  out.ledger_id = rows.Int(0, 0);
  out.amount_micro_usd = rows.Int(0, 1);
  out.balance_micro_usd = rows.Int(0, 2);
  out.first = false;
  out.type = EntryTypeOf(rows.Str(0, 3));
  out.reason = rows.Str(0, 4);
  out.granted_by_user_id = rows.Str(0, 5);
  out.granted_by_email = rows.Str(0, 6);
  return out;
}

}  // namespace

Result<CreditOutcome> LedgerStore::CreditIn(pg::Conn& conn, const NewCredit& credit) {
  // A concurrent request with the same key waits here on the unique index until the first
  // commits, then inserts nothing and reads the first answer below.
  const PaymentSource& p = credit.payment;
  auto inserted = conn.Exec(
      "INSERT INTO billing.ledger (org_id, type, amount_micro_usd, idempotency_key, reason, "
      "granted_by_user_id, granted_by_email, provider, provider_event_id, checkout_session_id, "
      "payment_intent_id, dispute_id) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) "
      "ON CONFLICT (org_id, idempotency_key) DO NOTHING RETURNING id",
      {credit.org_id, std::string(EntryTypeName(credit.type)),
       std::to_string(credit.amount_micro_usd), OptionalText(credit.idempotency_key),
       OptionalText(credit.reason), OptionalText(credit.granted_by_user_id),
       OptionalText(credit.granted_by_email), OptionalText(p.provider), OptionalText(p.event_id),
       OptionalText(p.checkout_session_id), OptionalText(p.payment_intent_id),
       OptionalText(p.dispute_id)});
  if (!inserted.ok()) return inserted.status();
  if (inserted->empty()) {
    auto earlier = conn.Exec(kEarlierCreditSql, {credit.org_id, credit.idempotency_key});
    if (!earlier.ok()) return earlier.status();
    if (earlier->empty()) return Status::Internal("credit key conflict without a first answer");
    return EarlierCredit(*earlier);
  }
  CreditOutcome out;
  out.ledger_id = inserted->Int(0, 0);
  out.amount_micro_usd = credit.amount_micro_usd;
  out.type = credit.type;
  out.reason = credit.reason;
  out.granted_by_user_id = credit.granted_by_user_id;
  out.granted_by_email = credit.granted_by_email;
  auto sum = conn.Exec(kBalanceSql, {credit.org_id});
  if (!sum.ok()) return sum.status();
  out.balance_micro_usd = sum->Int(0, 0);
  auto memo =
      conn.Exec("INSERT INTO billing.top_ups (ledger_id, balance_micro_usd) VALUES ($1, $2)",
                {std::to_string(out.ledger_id), std::to_string(out.balance_micro_usd)});
  if (!memo.ok()) return memo.status();
  return out;
}

Result<CreditOutcome> LedgerStore::Credit(const NewCredit& credit) {
  CreditOutcome out;
  Status s = pool_.Transaction([&](pg::Conn& conn) -> Status {
    auto outcome = CreditIn(conn, credit);
    if (!outcome.ok()) return outcome.status();
    out = std::move(*outcome);
    return Status::Ok();
  });
  if (!s.ok()) return s;
  return out;
}

Result<TopUpOutcome> LedgerStore::TopUp(const std::string& org_id, int64_t amount_micro_usd,
                                        const std::string& idempotency_key) {
  NewCredit credit;
  credit.org_id = org_id;
  credit.type = EntryType::kTopUp;
  credit.amount_micro_usd = amount_micro_usd;
  credit.idempotency_key = idempotency_key;
  return Credit(credit);
}

Result<std::optional<CreditOutcome>> LedgerStore::FindCredit(const std::string& org_id,
                                                             const std::string& idempotency_key) {
  auto rows = pool_.Exec(kEarlierCreditSql, {org_id, idempotency_key});
  if (!rows.ok()) return rows.status();
  if (rows->empty()) return std::optional<CreditOutcome>();
  return std::optional<CreditOutcome>(EarlierCredit(*rows));
}

Result<Page<LedgerItem>> LedgerStore::Entries(const std::string& org_id, int limit,
                                              std::optional<int64_t> before_id) {
  auto rows = pool_.Exec(
      // Charges are the charged executions, whose seq is their ledger id: each table gives its
      // newest limit + 1, and the page is the newest of both.
      std::string("SELECT id, type, execution_id, function_id, version, compute_micro_usd, "
                  "function_micro_usd, amount_micro_usd, ") +
          kCreatedMs +
          ", reason, granted_by_user_id, granted_by_email, provider, provider_event_id, "
          "checkout_session_id, payment_intent_id, dispute_id"
          " FROM ((SELECT id, type, coalesce(execution_id, '') AS execution_id, "
          "coalesce(function_id, '') AS function_id, coalesce(version, '') AS version, "
          "compute_micro_usd, function_micro_usd, amount_micro_usd, created_at, "
          "coalesce(reason, '') AS reason, coalesce(granted_by_user_id, '') AS granted_by_user_id, "
          "coalesce(granted_by_email, '') AS granted_by_email, "
          "coalesce(provider, '') AS provider, "
          "coalesce(provider_event_id, '') AS provider_event_id, "
          "coalesce(checkout_session_id, '') AS checkout_session_id, "
          "coalesce(payment_intent_id, '') AS payment_intent_id, "
          "coalesce(dispute_id, '') AS dispute_id "
          "FROM billing.ledger WHERE org_id = $1 AND ($2::bigint IS NULL OR id < $2) "
          "ORDER BY id DESC LIMIT $3) "
          "UNION ALL (SELECT seq, 'charge', execution_id, function_id, version, "
          "compute_micro_usd, function_micro_usd, -total_micro_usd, created_at, '', '', '', "
          "'', '', '', '', '' "
          "FROM billing.executions WHERE org_id = $1 AND charged "
          "AND ($2::bigint IS NULL OR seq < $2) ORDER BY seq DESC LIMIT $3)) entries "
          "ORDER BY id DESC LIMIT $3",
      {org_id, before_id ? Param(std::to_string(*before_id)) : Param(), std::to_string(limit + 1)});
  if (!rows.ok()) return rows.status();
  std::vector<LedgerItem> items;
  for (int i = 0; i < rows->size(); ++i) {
    LedgerItem item;
    item.id = rows->Int(i, 0);
    item.entry.org_id = org_id;
    item.entry.type = EntryTypeOf(rows->Str(i, 1));
    item.entry.execution_id = rows->Str(i, 2);
    item.entry.function_id = rows->Str(i, 3);
    item.entry.version = rows->Str(i, 4);
    item.entry.compute_micro_usd = rows->Int(i, 5);
    item.entry.function_micro_usd = rows->Int(i, 6);
    item.entry.amount_micro_usd = rows->Int(i, 7);
    item.created_ms = rows->Int(i, 8);
    item.entry.reason = rows->Str(i, 9);
    item.entry.granted_by_user_id = rows->Str(i, 10);
    item.entry.granted_by_email = rows->Str(i, 11);
    PaymentSource& payment = item.entry.payment;
    payment.provider = rows->Str(i, 12);
    payment.event_id = rows->Str(i, 13);
    payment.checkout_session_id = rows->Str(i, 14);
    payment.payment_intent_id = rows->Str(i, 15);
    payment.dispute_id = rows->Str(i, 16);
    items.push_back(std::move(item));
  }
  return ToPage<LedgerItem>(std::move(items), limit,
                            [](const LedgerItem& item) { return item.id; });
}

Result<Page<ExecutionItem>> LedgerStore::Executions(const std::string& org_id,
                                                    const std::string& function_id, int limit,
                                                    std::optional<int64_t> before_seq) {
  auto rows = pool_.Exec(
      std::string("SELECT ") + kExecutionColumns +
          " FROM billing.executions WHERE org_id = $1 AND ($2::text IS NULL OR function_id = $2)"
          " AND ($3::bigint IS NULL OR seq < $3) ORDER BY seq DESC LIMIT $4",
      {org_id, OptionalText(function_id), before_seq ? Param(std::to_string(*before_seq)) : Param(),
       std::to_string(limit + 1)});
  if (!rows.ok()) return rows.status();
  std::vector<ExecutionItem> items;
  for (int i = 0; i < rows->size(); ++i) items.push_back(ExecutionAt(*rows, i));
  return ToPage<ExecutionItem>(std::move(items), limit,
                               [](const ExecutionItem& item) { return item.seq; });
}

Result<std::optional<ExecutionItem>> LedgerStore::Execution(const std::string& org_id,
                                                            const std::string& execution_id) {
  auto rows = pool_.Exec(
      std::string("SELECT ") + kExecutionColumns +
          ", logs, egress, hops FROM billing.executions WHERE execution_id = $1 AND org_id = $2",
      {execution_id, org_id});
  if (!rows.ok()) return rows.status();
  if (rows->empty()) return std::optional<ExecutionItem>();
  ExecutionItem item = ExecutionAt(*rows, 0);
  item.record.logs = rows->Str(0, kLogsColumn);
  item.record.egress_json = rows->Str(0, kLogsColumn + 1);
  item.record.hops_json = rows->Str(0, kLogsColumn + 2);
  return std::optional<ExecutionItem>(std::move(item));
}

Result<int64_t> LedgerStore::BudgetSpent(const Budget& budget) {
  switch (budget.kind) {
    case BudgetKind::kGrant: {
      // From executions_grant alone.
      auto rows = pool_.Exec(
          "SELECT coalesce(sum(total_micro_usd), 0)::bigint FROM billing.executions "
          "WHERE grant_id = $1::uuid AND charged",
          {budget.id});
      if (!rows.ok()) return rows.status();
      return rows->Int(0, 0);
    }
    case BudgetKind::kKey:
    case BudgetKind::kOrg: {
      if (!budget.period) return Status::InvalidArgument("a period budget without its period");
      const bool key = budget.kind == BudgetKind::kKey;
      // From executions_org_created alone: the period's charges by the execution's time (a
      // call held just before midnight and recorded after it counts in the new day here, and
      // in the old one in Redis: the rebuilt budget errs towards spent).
      auto rows = pool_.Exec(
          "SELECT coalesce(sum(total_micro_usd), 0)::bigint FROM billing.executions "
          "WHERE org_id = $1 AND created_at >= to_timestamp($2::bigint / 1000.0) "
          "AND created_at < to_timestamp($3::bigint / 1000.0) AND charged "
          "AND ($4 = '' OR key_id = $4)",
          {key ? budget.org_id : budget.id, std::to_string(budget.period->start_ms),
           std::to_string(budget.period->end_ms), key ? budget.id : std::string()});
      if (!rows.ok()) return rows.status();
      return rows->Int(0, 0);
    }
  }
  return Status::Internal("unknown budget kind");
}

Result<std::vector<UsageRow>> LedgerStore::Usage(const std::string& org_id, UsageGroup group,
                                                 int64_t from_ms, int64_t to_ms, int limit) {
  // Fixed expressions, never the caller's text.
  const char* expression = "coalesce(key_id, '')";
  if (group == UsageGroup::kFunction) expression = "function_id";
  if (group == UsageGroup::kDay) {
    expression = "to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD')";
  }
  // From executions_org_created alone.
  auto rows = pool_.Exec(
      std::string("SELECT ") + expression +
          " AS g, count(*), coalesce(sum(total_micro_usd) FILTER (WHERE charged), 0)::bigint "
          "FROM billing.executions WHERE org_id = $1 "
          "AND created_at >= to_timestamp($2::bigint / 1000.0) "
          "AND created_at < to_timestamp($3::bigint / 1000.0) GROUP BY g ORDER BY g LIMIT $4",
      {org_id, std::to_string(from_ms), std::to_string(to_ms), std::to_string(limit)});
  if (!rows.ok()) return rows.status();
  std::vector<UsageRow> out;
  for (int i = 0; i < rows->size(); ++i) {
    out.push_back(UsageRow{rows->Str(i, 0), rows->Int(i, 1), rows->Int(i, 2)});
  }
  return out;
}

Result<std::vector<std::pair<std::string, int64_t>>> LedgerStore::GrantSpends() {
  auto rows = pool_.Exec(
      "SELECT grant_id::text, coalesce(sum(total_micro_usd) FILTER (WHERE charged), 0)::bigint "
      "FROM billing.executions WHERE grant_id IS NOT NULL GROUP BY grant_id ORDER BY grant_id");
  if (!rows.ok()) return rows.status();
  std::vector<std::pair<std::string, int64_t>> out;
  for (int i = 0; i < rows->size(); ++i) out.emplace_back(rows->Str(i, 0), rows->Int(i, 1));
  return out;
}

Result<std::vector<GrantUsageRow>> LedgerStore::GrantUsage(
    const std::string& org_id, const std::vector<std::string>& grant_ids) {
  std::vector<GrantUsageRow> out;
  if (grant_ids.empty()) return out;
  std::vector<std::optional<std::string>> ids(grant_ids.begin(), grant_ids.end());
  // One array parameter for every id; executions_grant holds the other columns.
  auto rows = pool_.Exec(
      "SELECT grant_id::text, count(*), "
      "coalesce(sum(total_micro_usd) FILTER (WHERE charged), 0)::bigint, "
      "(extract(epoch FROM max(created_at)) * 1000)::bigint "
      "FROM billing.executions WHERE grant_id = ANY($2::uuid[]) AND org_id = $1 "
      "GROUP BY grant_id ORDER BY grant_id",
      {org_id, PgArrayLiteral(ids)});
  if (!rows.ok()) return rows.status();
  for (int i = 0; i < rows->size(); ++i) {
    out.push_back({rows->Str(i, 0), rows->Int(i, 1), rows->Int(i, 2), rows->Int(i, 3)});
  }
  return out;
}

}  // namespace toolgate::billing
