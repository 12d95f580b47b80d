// PaymentStore: checkout funding's records in PostgreSQL (migration 009): the checkout sessions
// billing created and the provider events it acted on, and the ledger entries those events
// make. Every statement is parameterised. Thread-safe (pg::Pool is); every method returns
// Unavailable when PostgreSQL cannot be reached, and then has changed nothing.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "toolgate/base/status.h"
#include "toolgate/billing/payment_provider.h"
#include "toolgate/pg/pg.h"

namespace toolgate::billing {

inline constexpr int64_t kMicroUsdPerCent = 10'000;

// One checkout session billing created.
struct CheckoutRecord {
  std::string provider;
  std::string session_id;
  std::string org_id;
  int64_t amount_micro_usd = 0;
  std::string currency;
  std::string url;
  std::string status = "open";  // open, paid or refused
  std::string idempotency_key;  // empty: none
  int64_t created_ms = 0;
};

// What one event did.
enum class EventOutcome {
  kCredited,   // a payment's credit
  kDebited,    // a refund's or dispute's debit
  kRefused,    // recorded and not credited (another currency, another organization)
  kIgnored,    // recorded or not, nothing to do (unknown payment, nothing new refunded)
  kDuplicate,  // this event was acted on before: nothing changed now
};
std::string_view EventOutcomeName(EventOutcome outcome);

struct EventResult {
  EventOutcome outcome = EventOutcome::kIgnored;
  std::string org_id;            // the organization credited or debited
  int64_t ledger_id = 0;         // kCredited, kDebited
  int64_t amount_micro_usd = 0;  // signed: negative for a debit
  std::string detail;            // why, for the log and the event's row
};

class PaymentStore {
 public:
  // pool must outlive the store.
  explicit PaymentStore(pg::Pool& pool) : pool_(pool) {}

  // The session an organization created with this Idempotency-Key, if any.
  Result<std::optional<CheckoutRecord>> FindSession(const std::string& org_id,
                                                    const std::string& idempotency_key);
  // Records a session the provider created, and returns the stored row: the existing one when
  // the same session (or the same organization and key) was recorded before.
  Result<CheckoutRecord> RecordSession(const CheckoutRecord& session);

  // The organization event concerns, by the session it completes or the payment it refunds or
  // disputes; nullopt when billing does not know it (the event is then ignored).
  Result<std::optional<std::string>> OrganizationOf(const PaymentEvent& event);

  // Acts on a verified event in one transaction: its event row, the ledger entry and the
  // session's totals commit together or not at all, and a redelivery (even concurrent) finds
  // the row and changes nothing (kDuplicate). A completed, paid session in USD credits its
  // organization amount_total once; a refund debits what was refunded since the last one, a
  // dispute what is disputed, never together more than was paid.
  Result<EventResult> Apply(const PaymentEvent& event);

 private:
  pg::Pool& pool_;
};

}  // namespace toolgate::billing
