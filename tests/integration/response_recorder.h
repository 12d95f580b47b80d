// Records what the integration tests receive from the edge, so that a later test
// (tests/openapi/check_responses.mjs, ctest openapi_responses) can check every answer against
// the published API description, services/edge/openapi.json.
//
// When TOOLGATE_RECORD_RESPONSES names a directory, the harness installs a process-wide
// http::ExchangeObserver that appends one JSON line per exchange to
// <dir>/<test binary name>.jsonl:
//   {"edge":true,"method":"POST","path":"/api/v1/secrets","query":"","status":201,
//    "content_type":"application/json","body":"...","request_content_type":"application/json",
//    "request_body":"..."}
// "edge" says whether the request went to the public port of an edge the harness started; the
// admin ports (metrics, health) and other servers are recorded as false and not checked.
// Without the variable nothing is recorded. The records hold what the tests sent and received,
// the throwaway systems' keys and passwords included: they belong in the build tree only.
#pragma once

#include <string>

namespace toolgate::testing {

// Starts recording (once per process, on the first call) when TOOLGATE_RECORD_RESPONSES is set,
// and marks base_url ("http://127.0.0.1:PORT") as an edge's public address. Call it before any
// client sends to that edge. Thread-safe. A directory or file that cannot be written aborts the
// test binary with a message: a run that records nothing must not pass the check unnoticed.
void RecordEdgeResponses(const std::string& base_url);

}  // namespace toolgate::testing
