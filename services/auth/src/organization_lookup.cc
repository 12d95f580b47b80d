#include "toolgate/auth/organization_lookup.h"

#include "toolgate/base/log.h"
#include "toolgate/core/problem.h"
#include "toolgate/core/subjects.h"

namespace toolgate::auth {

v1::OrganizationLookupReply AnswerOrganizationLookup(AccountStore& accounts,
                                                     std::string_view data) {
  v1::OrganizationLookupReply reply;
  v1::OrganizationLookupRequest request;
  if (!request.ParseFromArray(data.data(), static_cast<int>(data.size()))) {
    *reply.mutable_problem() = core::MakeProblem("bad_request", "Malformed lookup.");
    return reply;
  }
  auto found = accounts.LookupOrganization(request.org_id(), request.user_id());
  if (!found.ok()) {
    log::Warn("organization lookup failed").Str("error", found.status().ToString());
    *reply.mutable_problem() = core::MakeProblem(
        "service_unavailable", "Auth cannot read organizations right now; retry shortly.");
    return reply;
  }
  reply.set_found(found->found);
  reply.set_org_name(found->org_name);
  reply.set_user_email(found->user_email);
  return reply;
}

Status ServeOrganizationLookup(bus::Service& service, AccountStore& accounts) {
  return service.Handle(
      core::kOrganizationLookupSubject, "auth", [&service, &accounts](bus::Message&& m) {
        if (m.reply.empty()) return;  // nobody to tell
        v1::OrganizationLookupReply reply = AnswerOrganizationLookup(accounts, m.data);
        Status s = service.bus().Publish(m.reply, reply.SerializeAsString());
        if (!s.ok()) {
          log::Warn("organization lookup reply not sent").Str("error", s.ToString());
        }
      });
}

}  // namespace toolgate::auth
