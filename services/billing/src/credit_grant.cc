#include "toolgate/billing/credit_grant.h"

#include <cctype>

#include "toolgate/base/crypto.h"
#include "toolgate/base/json.h"
#include "toolgate/billing/top_up.h"
#include "toolgate/core/problem.h"

namespace toolgate::billing {

namespace {

std::string Trimmed(std::string_view s) {
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

std::optional<v1::Problem> OperatorRefusal(const v1::Principal& principal,
                                           std::string_view action) {
  if (principal.is_operator() && !principal.user_id().empty() && principal.key_id().empty() &&
      principal.grant_id().empty()) {
    return std::nullopt;
  }
  return core::MakeProblem("forbidden", "Only a platform operator, signed in, may " +
                                            std::string(action) +
                                            " (see docs/operations.md, \"Operators\").");
}

std::optional<v1::Problem> GrantRefusal(const v1::Principal& principal) {
  return OperatorRefusal(principal, "grant credit");
}

std::variant<OperatorMoneyRequest, v1::Problem> ParseOperatorMoneyRequest(
    const v1::HttpRequest& request, const std::string& org_id, const NoteRule& note_rule) {
  if (!IsUuid(org_id)) {
    return core::MakeProblem("not_found", "No organization has this id.");
  }
  auto doc = ParseJson(request.body());
  simdjson::dom::object body;
  if (!doc.ok() || doc->root.get_object().get(body)) {
    return core::MakeProblem(
        "invalid_json", "Send a JSON object such as " + std::string(note_rule.example_body) + ".");
  }
  OperatorMoneyRequest out;
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
  const std::string purpose(note_rule.purpose);
  std::string note;
  switch (GetString(body, note_rule.field, &note)) {
    case Field::kAbsent:
      fail(note_rule.field, "is required: " + purpose);
      break;
    case Field::kWrongType:
      fail(note_rule.field, "must be a string");
      break;
    case Field::kOk:
      out.note = Trimmed(note);
      if (out.note.empty()) {
        fail(note_rule.field, "must not be blank: " + purpose);
      } else if (out.note.size() > note_rule.max_length) {
        fail(note_rule.field, "must be at most " + std::to_string(note_rule.max_length) + " bytes");
      } else if (HasControlCharacter(out.note)) {
        fail(note_rule.field, "must not contain control characters");
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

std::variant<CreditGrantRequest, v1::Problem> ParseCreditGrant(const v1::HttpRequest& request,
                                                               const std::string& org_id) {
  static constexpr NoteRule kReason{"reason", "say why the organization is given this credit",
                                    kMaxGrantReasonLength,
                                    "{\"amount_micro_usd\": 5000000, \"reason\": \"pilot\"}"};
  auto parsed = ParseOperatorMoneyRequest(request, org_id, kReason);
  if (auto* problem = std::get_if<v1::Problem>(&parsed)) return std::move(*problem);
  auto& money = std::get<OperatorMoneyRequest>(parsed);
  return CreditGrantRequest{std::move(money.org_id), money.amount_micro_usd, std::move(money.note),
                            std::move(money.idempotency_key)};
}

}  // namespace toolgate::billing
