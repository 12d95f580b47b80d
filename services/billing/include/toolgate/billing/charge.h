// The pure rules of charging one invocation (contract section 4): what is held before the run,
// what a result costs, which ledger entries and which executions row it produces, and what the
// edge is told. No I/O; every function is thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "toolgate/billing/execution_states.h"
#include "toolgate/core/cost.h"
#include "toolgate/core/subjects.h"
#include "toolgate/v1/toolgate.pb.h"

namespace toolgate::billing {

// What one execution costs the caller, and what its function's owner earns from it.
struct Charge {
  int64_t compute_micro_usd = 0;
  int64_t function_micro_usd = 0;  // the fee the caller pays: 0 for its own functions
  int64_t total_micro_usd = 0;
  int64_t owner_revenue_micro_usd = 0;  // the fee less the platform's commission
};

bool CallerOwnsFunction(const v1::InvokeJob& job);
bool RunsOnGpu(const v1::FunctionVersion& function);
// The function fee this caller pays.
int64_t FeeFor(const v1::InvokeJob& job);
// Held before the run: the fee plus compute at the version's full timeout_ms.
int64_t HoldAmountFor(const core::Rates& rates, const v1::InvokeJob& job);
// The charge of a run that took runtime_ms of wall time and cpu_ms of CPU time in its whole
// sandbox: billed time is the larger of the two, capped at the version's timeout, so a charge
// never exceeds its hold.
Charge ChargeFor(const core::Rates& rates, const v1::InvokeJob& job, int64_t runtime_ms,
                 int64_t cpu_ms = 0);
// The sandbox time of a result that ran past its timeout (408, not charged), counted as a charge
// would bill it: the larger of wall and CPU time, at least 1 ms, capped at the version's
// timeout. 0 for any other result (it ran and is charged, or it failed on the platform).
int64_t UnchargedTimeoutMs(const v1::ExecutionResult& result);

enum class EntryType {
  kTopUp,
  kCharge,
  kRevenue,
  kGrant,
  kPayment,
  kRefund,
  kDispute,
  kPayout,
};
// "top_up", "charge", "revenue" or "grant": the ledger's type column and the API's type field.
// Checkout funding adds "payment" (a credit bought through a payment provider) and its debits,
// "refund" and "dispute" (negative amounts).
// "payout" is an operator's record of money sent to the organization for its earnings
// (negative; billing.payouts holds its reference and who recorded it).
std::string_view EntryTypeName(EntryType type);
// The entry type named exactly so; nullopt for anything else.
std::optional<EntryType> ParseEntryType(std::string_view name);

// Where a payment, refund or dispute came from: the provider's own ids, which its dashboard and
// support answer for. Empty for every other entry type.
struct PaymentSource {
  std::string provider;             // "stripe"
  std::string event_id;             // the event that made the entry
  std::string checkout_session_id;  // the session paid (refunds and disputes: the one refunded)
  std::string payment_intent_id;    // empty when the provider reported none
  std::string dispute_id;           // disputes only
};

// One row of billing.ledger. amount_micro_usd is signed: a charge is negative.
struct LedgerEntry {
  std::string org_id;
  EntryType type = EntryType::kCharge;
  std::string execution_id;  // empty for a top-up
  std::string function_id;   // empty for a top-up
  std::string version;       // empty for a top-up
  int64_t compute_micro_usd = 0;
  int64_t function_micro_usd = 0;
  int64_t amount_micro_usd = 0;
  // A grant's source: why, and the operator who granted it (empty for every other type).
  std::string reason;
  std::string granted_by_user_id;
  std::string granted_by_email;
  // A payment's, refund's or dispute's source (empty for every other type).
  PaymentSource payment;
};

// One row of billing.executions.
struct ExecutionRecord {
  std::string execution_id;
  std::string org_id;  // the caller
  std::string owner_org_id;
  std::string function_id;
  std::string version;
  int32_t status_code = 0;
  int64_t runtime_ms = 0;
  int64_t memory_used_mb = 0;
  std::string compute_type;
  Charge charge;  // zero when the handler did not run
  std::string trace_id;
  std::string logs;  // valid UTF-8 without NUL (see SanitizeText)
  // The handler's outbound requests as a JSON array of {method, host, port, address, status,
  // bytes_sent, bytes_received, ms, refused} (never a path, query, header or body), and their
  // bytes. "[]" and 0 when it made none.
  std::string egress_json = "[]";
  int64_t egress_bytes = 0;
  // The chain's hops as a JSON array [{name, start_unix_us, duration_us}] (HopsJson); read only
  // with one execution, empty in lists.
  std::string hops_json;
  // The OAuth grant the call was made with (GrantIdOf) and its client's name; both empty for a
  // call made with an API key or a session.
  std::string grant_id;
  std::string client_name;
  // The API key the call was made with; empty for a session or an OAuth grant. A key's spending
  // limits are rebuilt from its executions.
  std::string key_id;
};

// The JSON array ExecutionRecord::egress_json holds for result's egress requests.
std::string EgressJson(const v1::ExecutionResult& result);

// Everything one ExecutionResult writes to the ledger database, in one transaction.
struct Settlement {
  ExecutionRecord execution;
  // A charge to the caller and, when a fee was paid, the owner's revenue. Empty when the handler
  // did not run: nothing is charged.
  std::vector<LedgerEntry> entries;
  // The final state of an asynchronous call or of a call made with an Idempotency-Key
  // (execution_states.h), written with the execution's row; nullopt for other calls.
  std::optional<StateUpdate> state;
};

// The ledger entries of a run that cost `charge` (a charge, and revenue when the fee is not 0).
std::vector<LedgerEntry> LedgerEntriesFor(const v1::InvokeJob& job, const Charge& charge);
Settlement SettlementFor(const core::Rates& rates, const v1::ExecutionResult& result);
// job.hops as the JSON array an execution record keeps.
std::string HopsJson(const v1::InvokeJob& job);

// The OAuth grant of a principal as billing keys it (its budget, its executions): the grant id
// in lower case; empty when the call was not made with a grant, or when the id is not a UUID
// (the hold refuses such a call, so it never runs).
std::string GrantIdOf(const v1::Principal& principal);

// The edge's answer to a settled result: the handler's result with its summary and cost, or
// the executor's problem (408, 502) when the handler did not run.
v1::InvokeReply ReplyFor(const v1::ExecutionResult& result, const Charge& charge);

// The subjects of a settlement live with every other subject in core/subjects.h.
using core::ExecutionIdOfUnservedSubject;
using core::IsValidExecutionId;
using core::SettleSubject;
using core::UnservedSubject;

// text as PostgreSQL accepts it: NUL bytes dropped and invalid UTF-8 replaced by U+FFFD.
std::string SanitizeText(std::string_view text);

}  // namespace toolgate::billing
