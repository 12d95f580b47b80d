#include "toolgate/billing/checkout_request.h"

#include <gtest/gtest.h>

#include "toolgate/billing/stripe_provider.h"

namespace toolgate::billing {
namespace {

constexpr CheckoutLimits kLimits = StripeProvider::kUsdLimits;

v1::HttpRequest Request(const std::string& body, const std::string* key = nullptr) {
  v1::HttpRequest r;
  r.set_method("POST");
  r.set_path("/billing/checkout-sessions");
  r.set_body(body);
  if (key) (*r.mutable_headers())["idempotency-key"] = *key;
  return r;
}

v1::Problem ProblemOf(const std::variant<CheckoutRequest, v1::Problem>& parsed) {
  EXPECT_TRUE(std::holds_alternative<v1::Problem>(parsed));
  return std::holds_alternative<v1::Problem>(parsed) ? std::get<v1::Problem>(parsed)
                                                     : v1::Problem();
}

TEST(CheckoutRequestTest, AcceptsWholeCentsWithinStripesLimits) {
  EXPECT_EQ(CheckoutAmountError(500'000, kLimits), std::nullopt);          // $0.50
  EXPECT_EQ(CheckoutAmountError(10'000'000, kLimits), std::nullopt);       // $10.00
  EXPECT_EQ(CheckoutAmountError(12'340'000, kLimits), std::nullopt);       // $12.34
  EXPECT_EQ(CheckoutAmountError(999'999'990'000, kLimits), std::nullopt);  // $999,999.99
}

TEST(CheckoutRequestTest, RefusesFractionsOfACentAndAmountsOutsideTheLimits) {
  EXPECT_NE(CheckoutAmountError(10'000'001, kLimits), std::nullopt);  // a micro-USD over
  EXPECT_NE(CheckoutAmountError(5'000, kLimits), std::nullopt);       // half a cent
  EXPECT_NE(CheckoutAmountError(490'000, kLimits), std::nullopt);     // $0.49
  EXPECT_NE(CheckoutAmountError(0, kLimits), std::nullopt);
  EXPECT_NE(CheckoutAmountError(-10'000'000, kLimits), std::nullopt);
  EXPECT_NE(CheckoutAmountError(1'000'000'000'000, kLimits), std::nullopt);  // $1,000,000.00
  auto error = CheckoutAmountError(490'000, kLimits);
  ASSERT_TRUE(error);
  EXPECT_NE(error->find("500000 ($0.50)"), std::string::npos) << *error;
  EXPECT_NE(error->find("999999990000 ($999999.99)"), std::string::npos) << *error;
}

TEST(CheckoutRequestTest, ReadsTheAmountAndTheKey) {
  std::string key = "buy-2026-12-02";
  auto parsed = ParseCheckoutRequest(Request(R"({"amount_micro_usd": 25000000})", &key), kLimits);
  ASSERT_TRUE(std::holds_alternative<CheckoutRequest>(parsed));
  EXPECT_EQ(std::get<CheckoutRequest>(parsed).amount_micro_usd, 25'000'000);
  EXPECT_EQ(std::get<CheckoutRequest>(parsed).idempotency_key, key);
}

TEST(CheckoutRequestTest, NamesEachBadField) {
  std::string key(300, 'k');
  v1::Problem p =
      ProblemOf(ParseCheckoutRequest(Request(R"({"amount_micro_usd": 1})", &key), kLimits));
  EXPECT_EQ(p.code(), "validation_failed");
  ASSERT_EQ(p.errors_size(), 2);
  EXPECT_EQ(p.errors(0).field(), "amount_micro_usd");
  EXPECT_EQ(p.errors(1).field(), "Idempotency-Key");

  p = ProblemOf(ParseCheckoutRequest(Request(R"({"amount_micro_usd": "10"})"), kLimits));
  EXPECT_EQ(p.code(), "validation_failed");
  p = ProblemOf(ParseCheckoutRequest(Request(R"({})"), kLimits));
  ASSERT_EQ(p.errors_size(), 1);
  EXPECT_EQ(p.errors(0).message(), "is required");
  p = ProblemOf(ParseCheckoutRequest(Request(R"({"amount_micro_usd": 10.5})"), kLimits));
  EXPECT_EQ(p.code(), "validation_failed");
  EXPECT_EQ(ProblemOf(ParseCheckoutRequest(Request("[1]"), kLimits)).code(), "invalid_json");
  EXPECT_EQ(ProblemOf(ParseCheckoutRequest(Request("not json"), kLimits)).code(), "invalid_json");
}

TEST(CheckoutRequestTest, TheSessionFormIsWhatStripeDocuments) {
  CheckoutSessionRequest request;
  request.org_id = "0b5f6a9e-3c1d-4e2f-8a7b-9c0d1e2f3a4b";
  request.amount_cents = 1234;
  request.currency = "usd";
  request.product_name = "Toolgate credit";
  request.success_url = "https://tg.example.com/settings/billing?checkout=success";
  request.cancel_url = "https://tg.example.com/settings/billing?checkout=cancelled";
  request.idempotency_key = "k";
  const std::string form = CheckoutSessionForm(request);
  for (const char* field :
       {"mode=payment", "line_items%5B0%5D%5Bprice_data%5D%5Bcurrency%5D=usd",
        "line_items%5B0%5D%5Bprice_data%5D%5Bunit_amount%5D=1234",
        "line_items%5B0%5D%5Bprice_data%5D%5Bproduct_data%5D%5Bname%5D=Toolgate%20credit",
        "line_items%5B0%5D%5Bquantity%5D=1",
        "client_reference_id=0b5f6a9e-3c1d-4e2f-8a7b-9c0d1e2f3a4b",
        "metadata%5Btoolgate_org_id%5D=0b5f6a9e-3c1d-4e2f-8a7b-9c0d1e2f3a4b",
        "success_url=https%3A%2F%2Ftg.example.com%2Fsettings%2Fbilling%3Fcheckout%3Dsuccess"}) {
    EXPECT_NE(form.find(field), std::string::npos) << field << " in " << form;
  }
}

}  // namespace
}  // namespace toolgate::billing
