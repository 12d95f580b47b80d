// Parsing of Stripe's event objects (the body of a webhook delivery, once its signature was
// verified: stripe_signature.h) into the PaymentEvent billing acts on. Reads, from the event,
// `id`, `type` and `data.object`, and of that object:
//   checkout.session.completed,           a Checkout Session: id, client_reference_id,
//   checkout.session.async_payment_succeeded   payment_status ("paid" takes money), amount_total,
//                                          currency, payment_intent
//   charge.refunded                       a Charge: amount, amount_refunded (everything refunded
//                                          so far, so a partial refund is followed by larger
//                                          ones), currency, payment_intent
//   charge.dispute.created,               a Dispute: id, amount, currency, payment_intent
//   charge.dispute.funds_withdrawn
// Every other type is kOther. Pure and thread-safe.
#pragma once

#include <string_view>

#include "toolgate/base/status.h"
#include "toolgate/billing/payment_provider.h"

namespace toolgate::billing {

// InvalidArgument (naming the field) when payload is not an event, or an event of a handled
// type lacks a field billing needs.
Result<PaymentEvent> ParseStripeEvent(std::string_view payload);

}  // namespace toolgate::billing
