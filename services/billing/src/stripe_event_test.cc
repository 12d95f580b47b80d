#include "toolgate/billing/stripe_event.h"

#include <gtest/gtest.h>

namespace toolgate::billing {
namespace {

// Trimmed from the shapes Stripe documents for each event's data.object.
constexpr const char* kCompleted = R"({
  "id": "evt_1", "object": "event", "type": "checkout.session.completed", "livemode": false,
  "data": {"object": {
    "id": "cs_test_a1", "object": "checkout.session", "mode": "payment",
    "client_reference_id": "org-1", "metadata": {"toolgate_org_id": "org-1"},
    "amount_subtotal": 2500, "amount_total": 2500, "currency": "usd",
    "payment_status": "paid", "status": "complete", "payment_intent": "pi_1"}}})";

TEST(StripeEventTest, ReadsACompletedCheckoutSession) {
  auto event = ParseStripeEvent(kCompleted);
  ASSERT_TRUE(event.ok()) << event.status().ToString();
  EXPECT_EQ(event->provider, "stripe");
  EXPECT_EQ(event->event_id, "evt_1");
  EXPECT_EQ(event->type, "checkout.session.completed");
  EXPECT_EQ(event->kind, PaymentEventKind::kCheckoutCompleted);
  EXPECT_EQ(event->checkout_session_id, "cs_test_a1");
  EXPECT_EQ(event->org_id, "org-1");
  EXPECT_TRUE(event->paid);
  EXPECT_EQ(event->amount_cents, 2500);
  EXPECT_EQ(event->currency, "usd");
  EXPECT_EQ(event->payment_intent_id, "pi_1");
}

TEST(StripeEventTest, AnUnpaidSessionIsNotPaid) {
  auto event = ParseStripeEvent(R"({"id":"evt_2","type":"checkout.session.completed",
    "data":{"object":{"id":"cs_2","client_reference_id":"org-1","amount_total":2500,
    "currency":"usd","payment_status":"unpaid","payment_intent":null}}})");
  ASSERT_TRUE(event.ok()) << event.status().ToString();
  EXPECT_FALSE(event->paid);
  EXPECT_EQ(event->payment_intent_id, "");
}

TEST(StripeEventTest, ReadsARefundedChargeWithItsRunningTotal) {
  auto event = ParseStripeEvent(R"({"id":"evt_3","type":"charge.refunded",
    "data":{"object":{"id":"ch_1","object":"charge","amount":2500,"amount_refunded":1000,
    "currency":"usd","refunded":false,"payment_intent":"pi_1"}}})");
  ASSERT_TRUE(event.ok()) << event.status().ToString();
  EXPECT_EQ(event->kind, PaymentEventKind::kRefund);
  EXPECT_EQ(event->amount_cents, 2500);
  EXPECT_EQ(event->refunded_cents, 1000);
  EXPECT_EQ(event->payment_intent_id, "pi_1");
}

TEST(StripeEventTest, ReadsADisputeOfEitherType) {
  for (const char* type : {"charge.dispute.created", "charge.dispute.funds_withdrawn"}) {
    auto event = ParseStripeEvent(std::string(R"({"id":"evt_4","type":")") + type +
                                  R"(","data":{"object":{"id":"dp_1","object":"dispute",
      "amount":2500,"charge":"ch_1","currency":"usd","payment_intent":"pi_1",
      "status":"needs_response"}}})");
    ASSERT_TRUE(event.ok()) << event.status().ToString();
    EXPECT_EQ(event->kind, PaymentEventKind::kDispute);
    EXPECT_EQ(event->dispute_id, "dp_1");
    EXPECT_EQ(event->amount_cents, 2500);
    EXPECT_EQ(event->payment_intent_id, "pi_1");
  }
}

TEST(StripeEventTest, AnExpandedPaymentIntentIsReadByItsId) {
  auto event = ParseStripeEvent(R"({"id":"evt_5","type":"charge.refunded",
    "data":{"object":{"amount":100,"amount_refunded":100,"currency":"usd",
    "payment_intent":{"id":"pi_9","object":"payment_intent"}}}})");
  ASSERT_TRUE(event.ok()) << event.status().ToString();
  EXPECT_EQ(event->payment_intent_id, "pi_9");
}

TEST(StripeEventTest, OtherTypesNeedNoObject) {
  auto event = ParseStripeEvent(R"({"id":"evt_6","type":"customer.created","data":{}})");
  ASSERT_TRUE(event.ok()) << event.status().ToString();
  EXPECT_EQ(event->kind, PaymentEventKind::kOther);
}

TEST(StripeEventTest, RefusesEventsWithoutWhatBillingNeeds) {
  for (const char* body : {
           "not json",
           "[]",
           R"({"type":"charge.refunded"})",
           R"({"id":"evt_7"})",
           R"({"id":"evt_7","type":"charge.refunded"})",
           R"({"id":"evt_7","type":"charge.refunded","data":{"object":{"amount":1,
              "currency":"usd","payment_intent":"pi_1"}}})",
           R"({"id":"evt_7","type":"charge.refunded","data":{"object":{"amount":1,
              "amount_refunded":-1,"currency":"usd","payment_intent":"pi_1"}}})",
           R"({"id":"evt_7","type":"checkout.session.completed","data":{"object":{
              "id":"cs_1","client_reference_id":"org","currency":"usd",
              "payment_status":"paid"}}})",
           R"({"id":"evt_7","type":"checkout.session.completed","data":{"object":{
              "id":"cs_1","client_reference_id":"org","amount_total":"2500","currency":"usd",
              "payment_status":"paid"}}})",
           R"({"id":"evt_7","type":"charge.dispute.created","data":{"object":{
              "amount":1,"currency":"usd","payment_intent":"pi_1"}}})",
           R"({"id":"evt_7","type":"charge.refunded","data":{"object":{"amount":1,
              "amount_refunded":1,"payment_intent":"pi_1"}}})",
       }) {
    EXPECT_FALSE(ParseStripeEvent(body).ok()) << body;
  }
}

}  // namespace
}  // namespace toolgate::billing
