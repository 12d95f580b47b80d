// The registry's verdict on one invocation (contract section 3, rows 3 to 6, in that order):
// which version runs, or the platform error that answers the caller.
#pragma once

#include <variant>

#include "toolgate/core/function_model.h"
#include "toolgate/v1/toolgate.pb.h"

namespace toolgate::core {

// Either the problem that answers the edge, or the resolved version for the later stages.
using InvokeDecision = std::variant<v1::Problem, v1::FunctionVersion>;

// Decides for job (its principal, function_id, version, body_check and X-Env-Keys fields).
// function is nullptr when no such function exists. added says whether the caller's organization
// has added the function to its workspace; it is consulted only for a public function of another
// organization. Pure: no I/O, thread-safe.
//
// Rows, first failing wins:
//   404 function_not_found  unknown, or private and owned by another organization
//   404 version_not_found   no version published, or job.version is not a published string
//   403 function_not_added  public, another organization's, not added
//   400 invalid_json / missing_event / invalid_event   from job.body_check (invalid_event
//       also for an event nested deeper than core::kMaxEventDepth)
//   400 invalid_env_keys / missing_env_key / undeclared_env_key   X-Env-Keys against the
//       version's declared keys (a present but blank header counts as absent)
InvokeDecision DecideInvoke(const v1::InvokeJob& job, const CachedFunction* function, bool added);

}  // namespace toolgate::core
