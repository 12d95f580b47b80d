#include "toolgate/billing/grant_usage.h"

#include <algorithm>
#include <cctype>

#include "toolgate/base/crypto.h"
#include "toolgate/base/log.h"
#include "toolgate/core/problem.h"
#include "toolgate/core/subjects.h"

namespace toolgate::billing {
namespace {

constexpr const char* kQueueGroup = "billing";

v1::Problem BadRequest(const std::string& detail) {
  return core::MakeProblem("bad_request", detail);
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

std::variant<GrantUsageQuery, v1::Problem> ParseGrantUsageRequest(std::string_view data) {
  v1::GrantUsageRequest request;
  if (!request.ParseFromArray(data.data(), static_cast<int>(data.size()))) {
    return BadRequest("Malformed GrantUsageRequest.");
  }
  if (request.org_id().empty()) return BadRequest("org_id is required.");
  if (static_cast<size_t>(request.grant_ids_size()) > kMaxGrantUsageIds) {
    return BadRequest("At most " + std::to_string(kMaxGrantUsageIds) +
                      " grant ids may be asked about at once.");
  }
  GrantUsageQuery query;
  query.org_id = request.org_id();
  for (const std::string& id : request.grant_ids()) {
    if (!IsUuid(id)) return BadRequest("Grant id " + id.substr(0, 64) + " is not a UUID.");
    query.grant_ids.push_back(Lower(id));
  }
  std::sort(query.grant_ids.begin(), query.grant_ids.end());
  query.grant_ids.erase(std::unique(query.grant_ids.begin(), query.grant_ids.end()),
                        query.grant_ids.end());
  return query;
}

v1::GrantUsageReply AnswerGrantUsage(LedgerStore& ledger, std::string_view data) {
  v1::GrantUsageReply reply;
  auto parsed = ParseGrantUsageRequest(data);
  if (auto* problem = std::get_if<v1::Problem>(&parsed)) {
    *reply.mutable_problem() = std::move(*problem);
    return reply;
  }
  const GrantUsageQuery& query = std::get<GrantUsageQuery>(parsed);
  auto rows = ledger.GrantUsage(query.org_id, query.grant_ids);
  if (!rows.ok()) {
    log::Warn("grant usage not read").Str("error", rows.status().ToString());
    *reply.mutable_problem() = core::MakeProblem(
        "service_unavailable", "Billing cannot read the ledger right now; retry shortly.");
    return reply;
  }
  for (const GrantUsageRow& row : *rows) {
    v1::GrantUsage* usage = reply.add_usage();
    usage->set_grant_id(row.grant_id);
    usage->set_calls(row.calls);
    usage->set_spent_micro_usd(row.spent_micro_usd);
    usage->set_last_used_ms(row.last_used_ms);
  }
  return reply;
}

Status ServeGrantUsage(bus::Service& service, LedgerStore& ledger) {
  return service.Handle(core::kGrantUsageSubject, kQueueGroup,
                        [&service, &ledger](bus::Message&& m) {
                          if (m.reply.empty()) return;  // nobody to tell
                          v1::GrantUsageReply reply = AnswerGrantUsage(ledger, m.data);
                          Status s = service.bus().Publish(m.reply, reply.SerializeAsString());
                          if (!s.ok()) {
                            log::Warn("grant usage reply not sent").Str("error", s.ToString());
                          }
                        });
}

}  // namespace toolgate::billing
