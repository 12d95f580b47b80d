// Turning bus answers into HTTP answers. Pure functions: no I/O, thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "toolgate/v1/toolgate.pb.h"

namespace toolgate::edge {

struct HttpAnswer {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // besides Content-Type
};

// problem+json, with Retry-After when the problem carries one.
HttpAnswer RenderProblem(const v1::Problem& problem, std::string_view request_id);
// The invoke envelope {statusCode, body, summary} with the handler's status, or the problem.
// Adds X-Toolgate-Cost (micro-USD charged: the total, 0 for a refusal, absent for a 504 whose
// outcome is unknown) and X-Api-Key-Expires-At when the key expires within 14 days of now_ms.
// An accepted reply (an asynchronous call queued) is 202 {execution_id, status, status_url} with
// Location; a replayed one (a repeated Idempotency-Key) adds Idempotent-Replayed: true.
HttpAnswer RenderInvokeReply(const v1::InvokeReply& reply, std::string_view request_id,
                             int64_t now_ms);
// The answer to POST .../estimate: 200 with what the call would hold, or the problem the call
// would get; X-Api-Key-Expires-At as above, no cost header (nothing ran).
HttpAnswer RenderEstimateReply(const v1::InvokeReply& reply, std::string_view request_id,
                               int64_t now_ms);
// A management answer from the owning service (Set-Cookie and other headers included; a
// Content-Type header replaces the JSON default).
HttpAnswer RenderHttpResponse(const v1::HttpResponse& response, std::string_view request_id);

}  // namespace toolgate::edge
