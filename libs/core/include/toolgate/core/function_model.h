// What the invoke chain needs to know about a function: its metadata and its published versions
// (never the code). The registry builds it from PostgreSQL; the edge from the registry's
// FunctionView answer (function_view.h). Immutable once built; shared between threads through
// shared_ptr<const>.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "toolgate/core/json_schema.h"
#include "toolgate/core/version.h"

namespace toolgate::core {

struct PublishedVersion {
  std::string version;  // exactly as published, e.g. "1.0"
  Version parsed;
  std::string runtime;       // "lua" | "python" | "javascript"
  std::string compute_type;  // "CPU" | "GPU"
  int32_t timeout_ms = 0;
  int32_t memory_mb = 0;
  std::vector<std::string> declared_keys;
  int64_t price_micro_usd = 0;      // fixed when the version was published
  std::vector<std::string> egress;  // as published
  std::string bundle_digest;        // "" for single-file code
  std::string handler;              // a bundle's entry file; "" for single-file code
  // The compiled input_schema every event is checked against (row 5); null accepts any event.
  std::shared_ptr<const JsonSchema> input_schema;
  std::string input_schema_json;  // input_schema's text, "" when null (for the edge's copy)
};

struct CachedFunction {
  std::string function_id;  // lower-case UUID
  std::string org_id;       // the owner
  std::string name;         // as its owner named it
  bool is_public = false;
  int64_t price_micro_usd = 0;
  bool mcp = false;
  std::vector<PublishedVersion> versions;  // any order; may be empty
};

// function_id lower-cased: ids arrive in either case and are stored and cached in lower case.
std::string NormalizeFunctionId(std::string_view function_id);

// The latest published version: the highest by CompareVersions (1.10 over 1.9, 1.2.3 over
// 1.2). nullptr when versions is empty. The pointer points into versions.
// The event of the first example in a function's examples JSON ([{"title", "event"}, ...]), as
// compact JSON; "{}" when there is none or the text is not such an array. For the invocation
// snippets the marketplace and the CLI show.
std::string FirstExampleEvent(std::string_view examples_json);

const PublishedVersion* LatestVersion(const std::vector<PublishedVersion>& versions);

// The version whose string equals version exactly ("1.0" does not find "1.0.0"); nullptr if none.
const PublishedVersion* FindVersion(const std::vector<PublishedVersion>& versions,
                                    std::string_view version);

}  // namespace toolgate::core
