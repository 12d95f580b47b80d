// LedgerStore: the system of record in PostgreSQL (schema `billing`): the ledger (top-ups, grants
// and revenue rows; charges are the charged executions), the first answers to top-ups, and the
// executions. Every statement is parameterised. Thread-safe
// (pg::Pool is); every method returns Unavailable when PostgreSQL cannot be reached.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "toolgate/base/status.h"
#include "toolgate/billing/balance_store.h"
#include "toolgate/billing/charge.h"
#include "toolgate/pg/pg.h"

namespace toolgate::billing {

// Creates or upgrades the `billing` schema (migrations embedded in the binary).
Status MigrateSchema(pg::Pool& pool);

struct LedgerItem {
  int64_t id = 0;
  LedgerEntry entry;
  int64_t created_ms = 0;
};

struct ExecutionItem {
  int64_t seq = 0;  // position in the newest-first listing
  ExecutionRecord record;
  int64_t created_ms = 0;
};

// One page of a newest-first listing; next_before is where the next page starts (the cursor's
// content), nullopt on the last page.
template <typename T>
struct Page {
  std::vector<T> items;
  std::optional<int64_t> next_before;
};

// What one OAuth grant's executions amount to (GET /oauth/grants shows it through auth).
struct GrantUsageRow {
  std::string grant_id;
  int64_t calls = 0;            // executions recorded with the grant
  int64_t spent_micro_usd = 0;  // what the charged ones cost (compute and fees)
  int64_t last_used_ms = 0;     // the latest one's creation time
};

// A credit to record: a member's top-up (demo funding), an operator's grant, or a payment
// provider's payment (checkout funding) and its refunds and disputes. Every way money enters or
// leaves an organization from outside goes through LedgerStore::Credit.
struct NewCredit {
  std::string org_id;
  EntryType type = EntryType::kTopUp;  // kTopUp, kGrant, kPayment, kRefund or kDispute
  // Positive; negative for a refund or a dispute (a debit), which may leave the balance below
  // zero.
  int64_t amount_micro_usd = 0;
  std::string idempotency_key;  // empty: none
  // Required for a grant (the table refuses one without them), empty otherwise.
  std::string reason;
  std::string granted_by_user_id;
  std::string granted_by_email;
  // Required for a payment, refund or dispute (the table refuses one without them).
  PaymentSource payment{};
};

// The answer to a credit: the first one's, for a repeated idempotency key.
struct CreditOutcome {
  int64_t ledger_id = 0;
  int64_t amount_micro_usd = 0;
  int64_t balance_micro_usd = 0;  // the ledger balance right after this credit
  bool first = true;              // false: an earlier request with the same key made it
  EntryType type = EntryType::kTopUp;  // the first request's: a key names one credit of any type
  std::string reason;
  std::string granted_by_user_id;
  std::string granted_by_email;
};
using TopUpOutcome = CreditOutcome;

// How GET /billing/usage groups an organization's executions.
enum class UsageGroup { kKey, kFunction, kDay };

// One group of the usage report: its key (a key id, '' for calls without one; a function id; a
// UTC day "2026-12-01"), its executions and what the charged ones cost.
struct UsageRow {
  std::string group;
  int64_t calls = 0;
  int64_t spent_micro_usd = 0;
};

class LedgerStore {
 public:
  // pool must outlive the store.
  explicit LedgerStore(pg::Pool& pool) : pool_(pool) {}

  // SUM of the organization's entries: its balance.
  Result<int64_t> Sum(const std::string& org_id);
  // Every organization with entries and its sum, ordered by id (for reconcile).
  Result<std::vector<std::pair<std::string, int64_t>>> Sums();

  // Writes the ledger entries and executions rows of many settlements in one transaction (group
  // commit). A charge entry is not a ledger row: it is its execution's row, marked charged, whose
  // seq is the charge's ledger id; the readers below add charged executions to the ledger's rows.
  // Rows that exist already (a retried result) are left as they are, so a retry never charges
  // twice. Returns the execution ids recorded by this call, not before it.
  Result<std::vector<std::string>> RecordSettlements(const std::vector<const Settlement*>& batch);
  // The captured charge of an execution, from its charge and revenue entries; nullopt when it was
  // not charged.
  Result<std::optional<SettleStep>> ChargeOf(const std::string& execution_id);

  // Records a credit and its answer in one transaction. With a non-empty idempotency_key, a
  // request repeating it (even concurrently) gets the first outcome (first = false, and the
  // first's type, which may differ) and credits nothing.
  Result<CreditOutcome> Credit(const NewCredit& credit);
  // Credit() inside the caller's transaction on conn, so that the credit commits with the
  // caller's other writes (a payment provider's event row) or not at all.
  static Result<CreditOutcome> CreditIn(pg::Conn& conn, const NewCredit& credit);
  // Credit() of a top-up.
  Result<TopUpOutcome> TopUp(const std::string& org_id, int64_t amount_micro_usd,
                             const std::string& idempotency_key);
  // The outcome of an earlier credit (of any type) with this key, if any.
  Result<std::optional<CreditOutcome>> FindCredit(const std::string& org_id,
                                                  const std::string& idempotency_key);
  Result<std::optional<TopUpOutcome>> FindTopUp(const std::string& org_id,
                                                const std::string& idempotency_key) {
    return FindCredit(org_id, idempotency_key);
  }

  // Newest first; before_id: only entries older than this one.
  Result<Page<LedgerItem>> Entries(const std::string& org_id, int limit,
                                   std::optional<int64_t> before_id);
  // The organization's executions (as the caller), newest first, optionally of one function;
  // without their logs.
  Result<Page<ExecutionItem>> Executions(const std::string& org_id, const std::string& function_id,
                                         int limit, std::optional<int64_t> before_seq);
  // One execution with its logs; nullopt when no such execution was made by org_id.
  Result<std::optional<ExecutionItem>> Execution(const std::string& org_id,
                                                 const std::string& execution_id);

  // What the ledger charged to budget (a grant's: its charged executions): the spent a budget is
  // loaded with and reconciled to.
  Result<int64_t> BudgetSpent(const Budget& budget);
  // Every grant with executions and what they were charged, ordered by grant id (for
  // reconcile).
  Result<std::vector<std::pair<std::string, int64_t>>> GrantSpends();
  // org_id's executions created in [from_ms, to_ms), grouped, ordered by group (at most
  // limit groups).
  Result<std::vector<UsageRow>> Usage(const std::string& org_id, UsageGroup group, int64_t from_ms,
                                      int64_t to_ms, int limit);
  // The usage of each of grant_ids (lower-case UUIDs) that has executions made by org_id,
  // ordered by grant id; a grant without any is left out.
  Result<std::vector<GrantUsageRow>> GrantUsage(const std::string& org_id,
                                                const std::vector<std::string>& grant_ids);

 private:
  pg::Pool& pool_;
};

// A PostgreSQL array literal ("{"a","b",NULL}") of values, for unnest($n::text[]): one parameter
// carries a whole column of a batch.
std::string PgArrayLiteral(const std::vector<std::optional<std::string>>& values);

}  // namespace toolgate::billing
