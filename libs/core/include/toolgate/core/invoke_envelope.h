// The invoke envelope, {statusCode, body, summary}: what a call's handler answered, as the
// synchronous invoke returns it and an asynchronous execution's status shows it. One writer for
// the edge and billing. Pure: no I/O, thread-safe.
#pragma once

#include <string>

#include "toolgate/v1/toolgate.pb.h"

namespace toolgate::core {

// {"statusCode", "body", "summary": {runtime_ms, memory_used_mb, compute_type, execution_id,
// egress_bytes, cost: {compute_micro_usd, function_micro_usd, total_micro_usd}}}
std::string InvokeEnvelopeJson(const v1::InvokeSuccess& result);

}  // namespace toolgate::core
