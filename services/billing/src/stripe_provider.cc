#include "toolgate/billing/stripe_provider.h"

#include <utility>

#include "toolgate/base/json.h"
#include "toolgate/billing/stripe_event.h"
#include "toolgate/billing/stripe_signature.h"
#include "toolgate/http_client/http_client.h"

namespace toolgate::billing {
namespace {

void AddField(std::string& form, std::string_view key, std::string_view value) {
  if (!form.empty()) form += '&';
  form += http::UrlEncode(key);
  form += '=';
  form += http::UrlEncode(value);
}

// What Stripe's error answer says of itself ({"error": {"type", "code"}}): safe to log, unlike
// its message, which may quote the request.
std::string ErrorSummary(const http::HttpResponse& response) {
  std::string summary = "Stripe answered " + std::to_string(response.status);
  auto doc = ParseJson(response.body);
  simdjson::dom::object error;
  if (doc.ok() && doc->root["error"].get_object().get(error) == simdjson::SUCCESS) {
    std::string type, code;
    if (GetString(error, "type", &type) == Field::kOk) summary += " " + type;
    if (GetString(error, "code", &code) == Field::kOk) summary += " (" + code + ")";
  }
  return summary;
}

}  // namespace

std::string CheckoutSessionForm(const CheckoutSessionRequest& request) {
  std::string form;
  AddField(form, "mode", "payment");
  AddField(form, "line_items[0][price_data][currency]", request.currency);
  AddField(form, "line_items[0][price_data][unit_amount]", std::to_string(request.amount_cents));
  AddField(form, "line_items[0][price_data][product_data][name]", request.product_name);
  AddField(form, "line_items[0][quantity]", "1");
  AddField(form, "client_reference_id", request.org_id);
  AddField(form, "metadata[toolgate_org_id]", request.org_id);
  // On the payment too, so that the organization shows beside a refund or a dispute in Stripe's
  // dashboard.
  AddField(form, "payment_intent_data[metadata][toolgate_org_id]", request.org_id);
  AddField(form, "success_url", request.success_url);
  AddField(form, "cancel_url", request.cancel_url);
  return form;
}

StripeProvider::StripeProvider(StripeOptions options) : options_(std::move(options)) {}

Result<CheckoutSession> StripeProvider::CreateCheckoutSession(
    const CheckoutSessionRequest& request) {
  http::HttpClient client(options_.api_base);
  client.SetTimeout(options_.timeout);
  auto response = client.Post("/v1/checkout/sessions", CheckoutSessionForm(request),
                              {{"Authorization", "Bearer " + options_.secret_key},
                               {"Content-Type", "application/x-www-form-urlencoded"},
                               {"Idempotency-Key", request.idempotency_key}});
  // HttpClient's errors name the method and URL, never the headers.
  if (!response.ok()) {
    return Status::Unavailable("Stripe unreachable: " + response.status().message());
  }
  if (response->status != 200) return Status::Unavailable(ErrorSummary(*response));
  auto doc = ParseJson(response->body);
  simdjson::dom::object session;
  CheckoutSession out;
  if (!doc.ok() || doc->root.get_object().get(session) != simdjson::SUCCESS ||
      GetString(session, "id", &out.id) != Field::kOk || out.id.empty() ||
      GetString(session, "url", &out.url) != Field::kOk || out.url.empty()) {
    return Status::Unavailable("Stripe answered a session without an id and url");
  }
  return out;
}

Result<PaymentEvent> StripeProvider::VerifyWebhook(const v1::HttpRequest& request, int64_t now_s) {
  auto header = request.headers().find("stripe-signature");
  const std::string_view signature =
      header == request.headers().end() ? std::string_view() : std::string_view(header->second);
  SignatureCheck check =
      VerifyStripeSignature(signature, request.body(), options_.webhook_secret, now_s);
  if (check != SignatureCheck::kValid) {
    return Status::InvalidArgument(SignatureCheckMessage(check));
  }
  return ParseStripeEvent(request.body());
}

}  // namespace toolgate::billing
