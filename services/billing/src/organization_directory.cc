#include "toolgate/billing/organization_directory.h"

#include "toolgate/core/subjects.h"
#include "toolgate/v1/toolgate.pb.h"

namespace toolgate::billing {

Result<OrganizationInfo> BusOrganizationDirectory::Lookup(const std::string& org_id,
                                                          const std::string& user_id) {
  v1::OrganizationLookupRequest request;
  request.set_org_id(org_id);
  request.set_user_id(user_id);
  auto answer =
      bus_.Request(core::kOrganizationLookupSubject, request.SerializeAsString(), timeout_ms_);
  if (!answer.ok()) return answer.status();
  v1::OrganizationLookupReply reply;
  if (!reply.ParseFromString(answer->data)) {
    return Status::Internal("malformed OrganizationLookupReply");
  }
  if (reply.has_problem()) {
    return Status::Unavailable("auth could not look up the organization: " +
                               reply.problem().detail());
  }
  return OrganizationInfo{reply.found(), reply.org_name(), reply.user_email()};
}

}  // namespace toolgate::billing
