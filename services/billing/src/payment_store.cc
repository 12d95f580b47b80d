#include "toolgate/billing/payment_store.h"

#include <algorithm>

#include "toolgate/billing/ledger_store.h"

namespace toolgate::billing {
namespace {

using pg::Param;

constexpr const char* kSessionColumns =
    "provider, session_id, org_id, amount_micro_usd, currency, url, status, "
    "coalesce(idempotency_key, ''), (extract(epoch FROM created_at) * 1000)::bigint";

CheckoutRecord SessionAt(const pg::Rows& rows, int i) {
  CheckoutRecord r;
  r.provider = rows.Str(i, 0);
  r.session_id = rows.Str(i, 1);
  r.org_id = rows.Str(i, 2);
  r.amount_micro_usd = rows.Int(i, 3);
  r.currency = rows.Str(i, 4);
  r.url = rows.Str(i, 5);
  r.status = rows.Str(i, 6);
  r.idempotency_key = rows.Str(i, 7);
  r.created_ms = rows.Int(i, 8);
  return r;
}

// The session a payment, refund or dispute is about, locked until the transaction ends so that
// two events of one payment (a partial refund and a full one) apply one after the other.
struct LockedSession {
  std::string session_id;
  std::string org_id;
  std::string currency;
  std::string status;
  int64_t paid = 0;
  int64_t refunded = 0;
  int64_t disputed = 0;
};

constexpr const char* kLockedColumns =
    "session_id, org_id, currency, status, paid_micro_usd, refunded_micro_usd, "
    "disputed_micro_usd FROM billing.checkout_sessions ";

Result<std::optional<LockedSession>> Lock(pg::Conn& conn, const std::string& where,
                                          const pg::Params& params) {
  auto rows = conn.Exec(std::string("SELECT ") + kLockedColumns + where + " FOR UPDATE", params);
  if (!rows.ok()) return rows.status();
  if (rows->empty()) return std::optional<LockedSession>();
  return std::optional<LockedSession>(
      LockedSession{rows->Str(0, 0), rows->Str(0, 1), rows->Str(0, 2), rows->Str(0, 3),
                    rows->Int(0, 4), rows->Int(0, 5), rows->Int(0, 6)});
}

EventResult Outcome(EventOutcome outcome, std::string detail) {
  EventResult r;
  r.outcome = outcome;
  r.detail = std::move(detail);
  return r;
}

// Amounts in cents from a provider, in micro-USD; an amount that large is no real payment.
int64_t MicroUsd(int64_t cents) {
  constexpr int64_t kMaxCents = INT64_MAX / kMicroUsdPerCent;
  return std::min(cents, kMaxCents) * kMicroUsdPerCent;
}

// Records the credit or debit of event in the ledger, inside the transaction.
Result<EventResult> Book(pg::Conn& conn, const PaymentEvent& event, const LockedSession& session,
                         EntryType type, int64_t amount_micro_usd, std::string detail) {
  NewCredit credit;
  credit.org_id = session.org_id;
  credit.type = type;
  credit.amount_micro_usd = amount_micro_usd;
  credit.payment = PaymentSource{.provider = event.provider,
                                 .event_id = event.event_id,
                                 .checkout_session_id = session.session_id,
                                 .payment_intent_id = event.payment_intent_id,
                                 .dispute_id = event.dispute_id};
  auto booked = LedgerStore::CreditIn(conn, credit);
  if (!booked.ok()) return booked.status();
  EventResult r = Outcome(amount_micro_usd > 0 ? EventOutcome::kCredited : EventOutcome::kDebited,
                          std::move(detail));
  r.org_id = session.org_id;
  r.ledger_id = booked->ledger_id;
  r.amount_micro_usd = amount_micro_usd;
  return r;
}

Result<EventResult> ApplyCompleted(pg::Conn& conn, const PaymentEvent& event) {
  auto session = Lock(conn, "WHERE provider = $1 AND session_id = $2",
                      {event.provider, event.checkout_session_id});
  if (!session.ok()) return session.status();
  if (!*session) {
    return Outcome(EventOutcome::kIgnored, "a checkout session billing did not create");
  }
  const LockedSession& s = **session;
  if (event.org_id != s.org_id) {
    return Outcome(EventOutcome::kRefused,
                   "client_reference_id is not the organization the session was created for");
  }
  if (s.status != "open") return Outcome(EventOutcome::kIgnored, "the session was settled before");
  if (!event.paid) return Outcome(EventOutcome::kIgnored, "the session is not paid (yet)");
  if (event.currency != s.currency || event.currency != "usd") {
    auto refused = conn.Exec(
        "UPDATE billing.checkout_sessions SET status = 'refused', completed_at = now() "
        "WHERE provider = $1 AND session_id = $2",
        {event.provider, s.session_id});
    if (!refused.ok()) return refused.status();
    return Outcome(EventOutcome::kRefused, "paid in " + event.currency + ", not usd: not credited");
  }
  if (event.amount_cents <= 0) return Outcome(EventOutcome::kIgnored, "nothing was paid");
  const int64_t amount = MicroUsd(event.amount_cents);
  auto r = Book(conn, event, s, EntryType::kPayment, amount, "paid");
  if (!r.ok()) return r;
  auto paid = conn.Exec(
      "UPDATE billing.checkout_sessions SET status = 'paid', payment_intent_id = $3, "
      "paid_micro_usd = $4, completed_at = now() WHERE provider = $1 AND session_id = $2",
      {event.provider, s.session_id,
       event.payment_intent_id.empty() ? Param() : Param(event.payment_intent_id),
       std::to_string(amount)});
  if (!paid.ok()) return paid.status();
  return r;
}

Result<EventResult> ApplyDebit(pg::Conn& conn, const PaymentEvent& event) {
  if (event.payment_intent_id.empty()) {
    return Outcome(EventOutcome::kIgnored, "the event names no payment intent");
  }
  auto session = Lock(conn, "WHERE provider = $1 AND payment_intent_id = $2",
                      {event.provider, event.payment_intent_id});
  if (!session.ok()) return session.status();
  if (!*session) return Outcome(EventOutcome::kIgnored, "a payment billing did not credit");
  const LockedSession& s = **session;
  if (event.currency != s.currency) {
    return Outcome(EventOutcome::kRefused, "in " + event.currency + ", not " + s.currency);
  }
  if (event.kind == PaymentEventKind::kRefund) {
    // amount_refunded is the charge's running total: what is new is the part beyond what was
    // debited before (an earlier event delivered late debits nothing), and refunds with disputes
    // never take back more than was paid.
    const int64_t refunded = std::min(MicroUsd(event.refunded_cents), s.paid - s.disputed);
    const int64_t debit = refunded - s.refunded;
    if (debit <= 0) return Outcome(EventOutcome::kIgnored, "nothing refunded since the last one");
    auto r = Book(conn, event, s, EntryType::kRefund, -debit, "refunded");
    if (!r.ok()) return r;
    auto updated = conn.Exec(
        "UPDATE billing.checkout_sessions SET refunded_micro_usd = $3 "
        "WHERE provider = $1 AND session_id = $2",
        {event.provider, s.session_id, std::to_string(refunded)});
    if (!updated.ok()) return updated.status();
    return r;
  }
  // A dispute: debited once, whichever of its events comes first.
  auto earlier = conn.Exec(
      "SELECT 1 FROM billing.ledger WHERE provider = $1 AND dispute_id = $2 AND type = 'dispute'",
      {event.provider, event.dispute_id});
  if (!earlier.ok()) return earlier.status();
  if (!earlier->empty()) return Outcome(EventOutcome::kIgnored, "the dispute was debited before");
  const int64_t debit = std::min(MicroUsd(event.amount_cents), s.paid - s.refunded - s.disputed);
  if (debit <= 0) return Outcome(EventOutcome::kIgnored, "nothing left to debit");
  auto r = Book(conn, event, s, EntryType::kDispute, -debit, "disputed");
  if (!r.ok()) return r;
  auto updated = conn.Exec(
      "UPDATE billing.checkout_sessions SET disputed_micro_usd = disputed_micro_usd + $3 "
      "WHERE provider = $1 AND session_id = $2",
      {event.provider, s.session_id, std::to_string(debit)});
  if (!updated.ok()) return updated.status();
  return r;
}

}  // namespace

std::string_view EventOutcomeName(EventOutcome outcome) {
  switch (outcome) {
    case EventOutcome::kCredited:
      return "credited";
    case EventOutcome::kDebited:
      return "debited";
    case EventOutcome::kRefused:
      return "refused";
    case EventOutcome::kIgnored:
      return "ignored";
    case EventOutcome::kDuplicate:
      return "duplicate";
  }
  return "ignored";
}

Result<std::optional<CheckoutRecord>> PaymentStore::FindSession(
    const std::string& org_id, const std::string& idempotency_key) {
  auto rows = pool_.Exec(std::string("SELECT ") + kSessionColumns +
                             " FROM billing.checkout_sessions WHERE org_id = $1 AND "
                             "idempotency_key = $2",
                         {org_id, idempotency_key});
  if (!rows.ok()) return rows.status();
  if (rows->empty()) return std::optional<CheckoutRecord>();
  return std::optional<CheckoutRecord>(SessionAt(*rows, 0));
}

Result<CheckoutRecord> PaymentStore::RecordSession(const CheckoutRecord& session) {
  const Param key = session.idempotency_key.empty() ? Param() : Param(session.idempotency_key);
  auto inserted = pool_.Exec(
      std::string("INSERT INTO billing.checkout_sessions (provider, session_id, org_id, "
                  "amount_micro_usd, currency, url, idempotency_key) "
                  "VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING RETURNING ") +
          kSessionColumns,
      {session.provider, session.session_id, session.org_id,
       std::to_string(session.amount_micro_usd), session.currency, session.url, key});
  if (!inserted.ok()) return inserted.status();
  if (!inserted->empty()) return SessionAt(*inserted, 0);
  // A concurrent request with the same key (the provider answered both with one session), or
  // the same session again.
  auto rows = pool_.Exec(std::string("SELECT ") + kSessionColumns +
                             " FROM billing.checkout_sessions WHERE (provider = $1 AND "
                             "session_id = $2) OR (org_id = $3 AND idempotency_key = $4)",
                         {session.provider, session.session_id, session.org_id, key});
  if (!rows.ok()) return rows.status();
  if (rows->empty()) return Status::Internal("checkout session conflict without a row");
  return SessionAt(*rows, 0);
}

Result<std::optional<std::string>> PaymentStore::OrganizationOf(const PaymentEvent& event) {
  Result<pg::Rows> rows = Status::Internal("unset");
  switch (event.kind) {
    case PaymentEventKind::kCheckoutCompleted:
      rows = pool_.Exec(
          "SELECT org_id FROM billing.checkout_sessions WHERE provider = $1 AND session_id = $2",
          {event.provider, event.checkout_session_id});
      break;
    case PaymentEventKind::kRefund:
    case PaymentEventKind::kDispute:
      if (event.payment_intent_id.empty()) return std::optional<std::string>();
      rows = pool_.Exec(
          "SELECT org_id FROM billing.checkout_sessions WHERE provider = $1 AND "
          "payment_intent_id = $2",
          {event.provider, event.payment_intent_id});
      break;
    case PaymentEventKind::kOther:
      return std::optional<std::string>();
  }
  if (!rows.ok()) return rows.status();
  if (rows->empty()) return std::optional<std::string>();
  return std::optional<std::string>(rows->Str(0, 0));
}

Result<EventResult> PaymentStore::Apply(const PaymentEvent& event) {
  EventResult out;
  Status s = pool_.Transaction([&](pg::Conn& conn) -> Status {
    // A concurrent delivery of the same event waits here on the primary key until the first
    // commits, then inserts nothing: it is a duplicate.
    auto claimed = conn.Exec(
        "INSERT INTO billing.payment_events (provider, event_id, type, outcome) "
        "VALUES ($1, $2, $3, 'ignored') ON CONFLICT DO NOTHING RETURNING event_id",
        {event.provider, event.event_id, event.type});
    if (!claimed.ok()) return claimed.status();
    if (claimed->empty()) {
      out = Outcome(EventOutcome::kDuplicate, "delivered before");
      return Status::Ok();
    }
    Result<EventResult> r = Outcome(EventOutcome::kIgnored, "not an event billing acts on");
    if (event.kind == PaymentEventKind::kCheckoutCompleted) {
      r = ApplyCompleted(conn, event);
    } else if (event.kind == PaymentEventKind::kRefund ||
               event.kind == PaymentEventKind::kDispute) {
      r = ApplyDebit(conn, event);
    }
    if (!r.ok()) return r.status();
    out = std::move(*r);
    auto recorded = conn.Exec(
        "UPDATE billing.payment_events SET outcome = $3, ledger_id = $4, detail = $5 "
        "WHERE provider = $1 AND event_id = $2",
        {event.provider, event.event_id, std::string(EventOutcomeName(out.outcome)),
         out.ledger_id > 0 ? Param(std::to_string(out.ledger_id)) : Param(), out.detail});
    return recorded.ok() ? Status::Ok() : recorded.status();
  });
  if (!s.ok()) return s;
  return out;
}

}  // namespace toolgate::billing
