// EarningsStore: a publishing organization's earnings and payouts in PostgreSQL (schema
// `billing`): its revenue rows per UTC day and function, its payouts (billing.payouts, each with
// a ledger row of type payout) and what it may still be paid out. Every statement is
// parameterised. Thread-safe (pg::Pool is); every method returns Unavailable when PostgreSQL
// cannot be reached.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "toolgate/base/status.h"
#include "toolgate/billing/balance_store.h"
#include "toolgate/billing/earnings.h"
#include "toolgate/billing/ledger_store.h"
#include "toolgate/pg/pg.h"

namespace toolgate::billing {

// A payout to record.
struct NewPayout {
  std::string org_id;
  int64_t amount_micro_usd = 0;  // positive
  std::string reference;
  std::string idempotency_key;  // empty: none
  std::string recorded_by_user_id;
  std::string recorded_by_email;
};

struct PayoutOutcome {
  enum class Kind {
    kRecorded,
    kRepeated,          // an earlier request with the same key and body recorded it
    kKeyReused,         // the key names another entry (key_use says which): nothing recorded
    kExceedsPayable,    // more than payable: nothing recorded
    kExceedsAvailable,  // more than calls in flight leave of the balance: nothing recorded
  };
  Kind kind = Kind::kRecorded;
  PayoutItem payout;                // kRecorded, kRepeated
  Payable payable;                  // kExceedsPayable: what it was
  int64_t available_micro_usd = 0;  // kExceedsAvailable
  std::string key_use;              // kKeyReused: "a payout of 5000 micro-USD", "a grant", ...
};

// The payout's step in the cached balance, run while its ledger row is written but not yet
// committed (and the organization's payouts are locked): anything but kTaken or kTakenBefore
// rolls the row back. give_back undoes a taken step whose row then did not commit.
struct PayoutBalanceSteps {
  std::function<Result<PayoutTake>(int64_t ledger_id)> take;
  std::function<void(int64_t ledger_id)> give_back;
};

class EarningsStore {
 public:
  // pool must outlive the store.
  explicit EarningsStore(pg::Pool& pool) : pool_(pool) {}

  // org_id's revenue rows created in period, summed per UTC day and function, ordered by day and
  // function id; at most limit rows (the caller asks for one more to tell a cut list). Names
  // are left unset: the registry has them.
  Result<std::vector<EarningsRow>> Rows(const std::string& org_id, const EarningsPeriod& period,
                                        int limit);
  // org_id's payouts recorded in period, oldest first, at most limit.
  Result<std::vector<PayoutItem>> PayoutsIn(const std::string& org_id, const EarningsPeriod& period,
                                            int limit);
  // org_id's payouts newest first; before_id: only those older than this one.
  Result<Page<PayoutItem>> Payouts(const std::string& org_id, int limit,
                                   std::optional<int64_t> before_id);
  // What org_id earned, was paid out and holds, all time.
  Result<Payable> PayableOf(const std::string& org_id);

  // Records a payout in one transaction, under a lock on the organization's payouts (a
  // PostgreSQL advisory lock, so concurrent payouts of one organization, on any replica, take
  // their turns): a repeated idempotency key answers the first payout; otherwise the amount must
  // be payable (PayoutRefusal), and steps.take must take it from the cached balance before the
  // row commits. A non-OK status when PostgreSQL or Redis failed; then nothing was recorded,
  // unless the commit's own answer was lost (the row is then looked for, and the balance step
  // is given back only when the row is certainly absent; reconcile repairs the rest).
  Result<PayoutOutcome> RecordPayout(const NewPayout& payout, const PayoutBalanceSteps& steps);

 private:
  pg::Pool& pool_;
};

}  // namespace toolgate::billing
