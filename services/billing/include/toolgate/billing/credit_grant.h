// Validation of POST /admin/organizations/{organization_id}/credits: an operator's grant of
// credit to an organization (docs/api.md "Operators"). Pure and thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "toolgate/v1/toolgate.pb.h"

namespace toolgate::billing {

// A reason is what an operator answers "why does this organization have this money?" with: it
// must say something, and stay short enough for a ledger line.
inline constexpr size_t kMaxGrantReasonLength = 500;

struct CreditGrantRequest {
  std::string org_id;  // lower-case UUID, from the path
  int64_t amount_micro_usd = 0;
  std::string reason;           // trimmed, 1 to kMaxGrantReasonLength bytes, no control characters
  std::string idempotency_key;  // empty: the request carried none
};

// Why principal may not act as an operator (403 forbidden, the detail saying it may not do
// `action`, e.g. "grant credit"), or nullopt for an operator: a signed-in user whose account auth
// marks as an operator. A key or an OAuth token never may, even one of an operator's
// organization: money moved by an operator is a person's decision, answered for by name.
std::optional<v1::Problem> OperatorRefusal(const v1::Principal& principal, std::string_view action);
// OperatorRefusal for a grant of credit.
std::optional<v1::Problem> GrantRefusal(const v1::Principal& principal);

// What an operator's request that moves an organization's money says (a grant of credit, a
// payout): the path's organization, the body {"amount_micro_usd": int, <note>: string} and the
// optional Idempotency-Key header. The note is what the ledger line keeps beside the amount.
struct OperatorMoneyRequest {
  std::string org_id;  // lower-case UUID
  int64_t amount_micro_usd = 0;
  std::string note;             // trimmed, 1 to NoteRule::max_length bytes, no control characters
  std::string idempotency_key;  // empty: the request carried none
};

// How a route names and bounds its note.
struct NoteRule {
  std::string_view field;         // "reason", "reference"
  std::string_view purpose;       // ends "is required: ...", e.g. "say why ..."
  size_t max_length = 0;          // bytes
  std::string_view example_body;  // a whole JSON body, for the invalid_json detail
};

// Returns the request, or the problem to answer: 404 not_found for an organization id that is
// not a UUID (no organization can have it), 400 invalid_json when the body is not a JSON object,
// 422 validation_failed with one error per bad field (amount 1 to kMaxTopUpMicroUsd, like a
// top-up; the note as note_rule says; the Idempotency-Key).
std::variant<OperatorMoneyRequest, v1::Problem> ParseOperatorMoneyRequest(
    const v1::HttpRequest& request, const std::string& org_id, const NoteRule& note_rule);

// Reads the path's organization id (params[0]), the body {"amount_micro_usd": int, "reason":
// string} and the optional Idempotency-Key header. Returns the request, or the problem to answer:
// 404 not_found for an organization id that is not a UUID (no organization can have it), 400
// invalid_json when the body is not a JSON object, 422 validation_failed with one error per bad
// field (amount 1 to kMaxTopUpMicroUsd, like a top-up).
std::variant<CreditGrantRequest, v1::Problem> ParseCreditGrant(const v1::HttpRequest& request,
                                                               const std::string& org_id);

}  // namespace toolgate::billing
