#include "toolgate/billing/credit_grant.h"

#include <cctype>

#include "toolgate/base/crypto.h"
#include "toolgate/base/json.h"
#include "toolgate/billing/top_up.h"
#include "toolgate/core/problem.h"

namespace toolgate::billing {
namespace {

std::string Trim(std::string_view s) {
  size_t begin = 0;
  size_t end = s.size();
  while (begin < end && std::isspace(static_cast<unsigned char>(s[begin]))) ++begin;
  while (end > begin && std::isspace(static_cast<unsigned char>(s[end - 1]))) --end;
  return std::string(s.substr(begin, end - begin));
}

bool HasControlCharacter(std::string_view s) {
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7F) return true;
  }
  return false;
}

}  // namespace

std::optional<v1::Problem> GrantRefusal(const v1::Principal& principal) {
  if (principal.is_operator() && !principal.user_id().empty() && principal.key_id().empty() &&
      principal.grant_id().empty()) {
    return std::nullopt;
  }
  return core::MakeProblem("forbidden",
                           "Only a platform operator, signed in, may grant credit "
                           "(see docs/operations.md, \"Operators\").");
}

std::variant<CreditGrantRequest, v1::Problem> ParseCreditGrant(const v1::HttpRequest& request,
                                                               const std::string& org_id) {
  if (!IsUuid(org_id)) {
    return core::MakeProblem("not_found", "No organization has this id.");
  }
  auto doc = ParseJson(request.body());
  simdjson::dom::object body;
  if (!doc.ok() || doc->root.get_object().get(body)) {
    return core::MakeProblem(
        "invalid_json",
        "Send a JSON object such as {\"amount_micro_usd\": 5000000, \"reason\": \"pilot\"}.");
  }
  CreditGrantRequest out;
  out.org_id = org_id;
  for (char& c : out.org_id) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  v1::Problem problem;
  auto fail = [&](std::string_view field, std::string_view message) {
    if (problem.code().empty()) {
      problem = core::ValidationProblem(field, message);
    } else {
      core::AddFieldError(&problem, field, message);
    }
  };
  constexpr const char* kAmountRule = "must be an integer from 1 to 1000000000000";
  switch (GetInt(body, "amount_micro_usd", &out.amount_micro_usd)) {
    case Field::kAbsent:
      fail("amount_micro_usd", "is required");
      break;
    case Field::kWrongType:
      fail("amount_micro_usd", kAmountRule);
      break;
    case Field::kOk:
      if (out.amount_micro_usd < 1 || out.amount_micro_usd > kMaxTopUpMicroUsd) {
        fail("amount_micro_usd", kAmountRule);
      }
      break;
  }
  std::string reason;
  switch (GetString(body, "reason", &reason)) {
    case Field::kAbsent:
      fail("reason", "is required: say why the organization is given this credit");
      break;
    case Field::kWrongType:
      fail("reason", "must be a string");
      break;
    case Field::kOk:
      out.reason = Trim(reason);
      if (out.reason.empty()) {
        fail("reason", "must not be blank: say why the organization is given this credit");
      } else if (out.reason.size() > kMaxGrantReasonLength) {
        fail("reason", "must be at most 500 bytes");
      } else if (HasControlCharacter(out.reason)) {
        fail("reason", "must not contain control characters");
      }
      break;
  }
  auto header = request.headers().find("idempotency-key");
  if (header != request.headers().end()) {
    if (auto error = IdempotencyKeyError(header->second)) {
      fail("Idempotency-Key", *error);
    } else {
      out.idempotency_key = header->second;
    }
  }
  if (!problem.code().empty()) return problem;
  return out;
}

}  // namespace toolgate::billing
