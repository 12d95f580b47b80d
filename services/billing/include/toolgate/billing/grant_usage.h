// Grant usage: what each OAuth grant of an organization has cost, for auth's list of connected
// apps (GET /oauth/grants). Served on tg.billing.grant_usage (queue "billing") from the ledger,
// on the service's worker pool since it reads PostgreSQL:
//   GrantUsageRequest{org_id, grant_ids} -> GrantUsageReply{usage}: one GrantUsage per asked
//   grant that has executions made by org_id (calls, what their charges spent, the latest one's
//   time); a grant never used is left out.
// Refusals are GrantUsageReply{problem}: bad_request for a request that does not parse, names no
// organization, asks about more than kMaxGrantUsageIds grants or names one that is not a UUID;
// service_unavailable when PostgreSQL cannot be read. Thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "toolgate/billing/ledger_store.h"
#include "toolgate/bus/service.h"
#include "toolgate/v1/toolgate.pb.h"

namespace toolgate::billing {

// The most grants one request may ask about: one organization's list of connected apps.
inline constexpr size_t kMaxGrantUsageIds = 500;

struct GrantUsageQuery {
  std::string org_id;
  std::vector<std::string> grant_ids;  // lower case, each once
};

// The request in data, checked as above; the problem to answer otherwise.
std::variant<GrantUsageQuery, v1::Problem> ParseGrantUsageRequest(std::string_view data);

// The answer to the request in data.
v1::GrantUsageReply AnswerGrantUsage(LedgerStore& ledger, std::string_view data);

// Subscribes to tg.billing.grant_usage; service and ledger must outlive the subscription.
Status ServeGrantUsage(bus::Service& service, LedgerStore& ledger);

}  // namespace toolgate::billing
