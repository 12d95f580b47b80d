// Organization lookup: answers billing's tg.auth.organization_lookup (queue "auth"), which it
// asks before recording an operator's credit grant:
//   OrganizationLookupRequest{org_id, user_id} -> OrganizationLookupReply{found, org_name,
//   user_email}; {problem: service_unavailable} when PostgreSQL cannot be read, {problem:
//   bad_request} for a request that does not parse.
// Runs on the service's worker pool (it reads PostgreSQL). Thread-safe.
#pragma once

#include <string_view>

#include "toolgate/auth/account_store.h"
#include "toolgate/bus/service.h"
#include "toolgate/v1/toolgate.pb.h"

namespace toolgate::auth {

// The answer to the request in data.
v1::OrganizationLookupReply AnswerOrganizationLookup(AccountStore& accounts, std::string_view data);

// Subscribes; service and accounts must outlive the subscription.
Status ServeOrganizationLookup(bus::Service& service, AccountStore& accounts);

}  // namespace toolgate::auth
