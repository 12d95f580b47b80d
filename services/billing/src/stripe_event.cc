#include "toolgate/billing/stripe_event.h"

#include "toolgate/base/json.h"

namespace toolgate::billing {
namespace {

PaymentEventKind KindOf(std::string_view type) {
  if (type == "checkout.session.completed" || type == "checkout.session.async_payment_succeeded") {
    return PaymentEventKind::kCheckoutCompleted;
  }
  if (type == "charge.refunded") return PaymentEventKind::kRefund;
  if (type == "charge.dispute.created" || type == "charge.dispute.funds_withdrawn") {
    return PaymentEventKind::kDispute;
  }
  return PaymentEventKind::kOther;
}

Status Missing(std::string_view field) {
  return Status::InvalidArgument("the event has no valid " + std::string(field));
}

// An id field that Stripe sends as a string, or as the object itself when it was expanded.
Field GetId(simdjson::dom::object obj, std::string_view key, std::string* out) {
  Field f = GetString(obj, key, out);
  if (f != Field::kWrongType) return f;
  simdjson::dom::object expanded;
  if (obj[key].get_object().get(expanded) != simdjson::SUCCESS) return Field::kWrongType;
  return GetString(expanded, "id", out);
}

// A non-negative amount in the minor unit.
bool GetAmount(simdjson::dom::object obj, std::string_view key, int64_t* out) {
  return GetInt(obj, key, out) == Field::kOk && *out >= 0;
}

}  // namespace

Result<PaymentEvent> ParseStripeEvent(std::string_view payload) {
  auto doc = ParseJson(payload);
  simdjson::dom::object event;
  if (!doc.ok() || doc->root.get_object().get(event) != simdjson::SUCCESS) {
    return Status::InvalidArgument("the body is not a JSON event object");
  }
  PaymentEvent out;
  out.provider = "stripe";
  if (GetString(event, "id", &out.event_id) != Field::kOk || out.event_id.empty()) {
    return Missing("id");
  }
  if (GetString(event, "type", &out.type) != Field::kOk || out.type.empty()) {
    return Missing("type");
  }
  out.kind = KindOf(out.type);
  if (out.kind == PaymentEventKind::kOther) return out;

  simdjson::dom::object object;
  if (event["data"]["object"].get_object().get(object) != simdjson::SUCCESS) {
    return Missing("data.object");
  }
  // Absent or null when the provider has none (a session paid by other means); every handled
  // kind matches its payment by it, so an empty one matches nothing.
  if (GetId(object, "payment_intent", &out.payment_intent_id) == Field::kWrongType) {
    return Missing("data.object.payment_intent");
  }
  if (GetString(object, "currency", &out.currency) != Field::kOk) {
    return Missing("data.object.currency");
  }
  switch (out.kind) {
    case PaymentEventKind::kCheckoutCompleted: {
      if (GetString(object, "id", &out.checkout_session_id) != Field::kOk ||
          out.checkout_session_id.empty()) {
        return Missing("data.object.id");
      }
      if (GetString(object, "client_reference_id", &out.org_id) == Field::kWrongType) {
        return Missing("data.object.client_reference_id");
      }
      std::string payment_status;
      if (GetString(object, "payment_status", &payment_status) != Field::kOk) {
        return Missing("data.object.payment_status");
      }
      out.paid = payment_status == "paid";
      if (!GetAmount(object, "amount_total", &out.amount_cents)) {
        return Missing("data.object.amount_total");
      }
      break;
    }
    case PaymentEventKind::kRefund:
      if (!GetAmount(object, "amount", &out.amount_cents)) return Missing("data.object.amount");
      if (!GetAmount(object, "amount_refunded", &out.refunded_cents)) {
        return Missing("data.object.amount_refunded");
      }
      break;
    case PaymentEventKind::kDispute:
      if (GetString(object, "id", &out.dispute_id) != Field::kOk || out.dispute_id.empty()) {
        return Missing("data.object.id");
      }
      if (!GetAmount(object, "amount", &out.amount_cents)) return Missing("data.object.amount");
      break;
    case PaymentEventKind::kOther:
      break;
  }
  return out;
}

}  // namespace toolgate::billing
