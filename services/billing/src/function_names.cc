#include "toolgate/billing/function_names.h"

#include "toolgate/base/time.h"
#include "toolgate/core/subjects.h"
#include "toolgate/v1/toolgate.pb.h"

namespace toolgate::billing {

std::map<std::string, std::string> BusFunctionNames::Names(
    const std::string& owner_org_id, const std::vector<std::string>& function_ids) {
  std::map<std::string, std::string> names;
  const int64_t deadline_us = MonotonicUs() + int64_t{timeout_ms_} * 1000;
  size_t asked = 0;
  for (const std::string& id : function_ids) {
    const int64_t left_ms = (deadline_us - MonotonicUs()) / 1000;
    if (left_ms <= 0 || ++asked > kMaxNamedFunctions) break;
    v1::FunctionViewRequest request;
    request.set_function_id(id);
    request.set_caller_org_id(owner_org_id);
    auto answer = bus_.Request(core::kFunctionViewSubject, request.SerializeAsString(),
                               static_cast<int>(left_ms));
    if (!answer.ok()) break;  // the registry is away: the rest would wait as long
    v1::FunctionViewReply reply;
    if (!reply.ParseFromString(answer->data) || reply.has_problem() || !reply.found()) continue;
    // Only the owner's own functions: revenue rows name functions their organization published.
    if (reply.function().org_id() != owner_org_id) continue;
    names[id] = reply.function().name();
  }
  return names;
}

}  // namespace toolgate::billing
