// Runtime: one language's way of running a handler. The executor hands every runtime the same
// Invocation and turns the ExecutionOutcome into a v1::ExecutionResult for billing.
//
// LuaRuntime runs Lua in-process; ProcessRuntime runs Python, JavaScript and (hosting
// LuaRuntime in a worker) Lua in sandboxed worker processes, behind the same interface. The helpers
// below hold what every runtime shares: the response rules of contract section 3 ("When the handler
// ran"), bounded logs and UTF-8 hygiene (every string that leaves a runtime must be valid UTF-8,
// since proto3 string fields refuse anything else).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "toolgate/core/bundle_paths.h"
#include "toolgate/core/egress_policy.h"
#include "toolgate/executor/egress_gateway.h"

namespace toolgate::executor {

// One secret mapped to a declared key. Views into memory the caller owns and wipes after Run.
struct EnvVar {
  std::string_view name;
  std::string_view value;
};

// A bundle unpacked on the host's disk (bundle_cache.h). The files stay there while a
// reference lives: a worker that shows them in its sandbox holds one for its whole life.
struct BundleFiles {
  std::string digest;
  std::string dir;  // host path of the bundle's root
};
using BundleRef = std::shared_ptr<const BundleFiles>;

// The entry file of a bundle whose version names none (core/bundle_paths.h).
using core::DefaultBundleHandler;

// Everything a runtime needs to run one call. Views into the caller's memory, valid during Run.
struct Invocation {
  std::string_view code;  // the version's source text; empty for a bundle version
  // A bundle version: its files, and its entry file relative to their root. Null for a
  // single-file version.
  BundleRef bundle;
  std::string_view handler;
  // Where the runtime reads the bundle's files: the host directory for an in-process runtime,
  // the sandbox's view of it inside a worker. Empty for a single-file version.
  std::string_view bundle_root;
  std::string_view event_json;  // the raw JSON text of "event" (an object or a string)
  std::string_view execution_id;
  std::string_view function_id;
  std::string_view version;
  std::string_view caller_org_id;
  int64_t timeout_ms = 30000;
  int64_t memory_mb = 128;
  std::vector<EnvVar> env;
  // Where the handler may connect through the egress gateway; null or empty: nowhere. Owned by
  // the caller, valid during Run.
  const core::EgressList* egress = nullptr;
};

struct ExecutionOutcome {
  enum class Kind {
    kCompleted,        // the handler ran: status_code and body are the response (500 included)
    kTimeout,          // the handler ran past timeout_ms and was stopped: 408, nothing charged
    kPlatformFailure,  // the runtime failed through no fault of the handler: 502, nothing charged
  };
  Kind kind = Kind::kCompleted;
  int status_code = 0;
  std::string body;
  int64_t runtime_ms = 0;      // from the handler's start to its return
  int64_t cpu_ms = 0;          // CPU time of the handler's whole sandbox (0: not measured)
  int64_t memory_used_mb = 1;  // peak, rounded up to whole MiB, at least 1
  std::string logs;            // the handler's output and tracebacks, bounded, valid UTF-8
  std::string failure;         // kPlatformFailure only: what went wrong, for the operator's log
  CallEgress egress;           // the handler's requests through the egress gateway
};

struct RuntimeLimits {
  size_t max_response_bytes = 6 << 20;  // a larger body gives 500 ResponseTooLarge
  size_t max_log_bytes = 64 << 10;      // output past this is dropped after "[truncated]"
};

class Runtime {
 public:
  virtual ~Runtime() = default;
  // "lua", "python" or "javascript": the last part of the tg.exec.<pool>.<runtime> subject.
  virtual std::string_view name() const = 0;
  // Runs one invocation to its end. Thread-safe: workers call it concurrently. Never throws;
  // every failure is an outcome.
  virtual ExecutionOutcome Run(const Invocation& invocation) = 0;
};

// Completes *out from the JSON encoding of the handler's return value: normalised by
// core::NormalizeHandlerResult, then 500 ResponseTooLarge when the body is over the limit.
void CompleteWithReturnValue(std::string_view returned_json, const RuntimeLimits& limits,
                             ExecutionOutcome* out);
// Completes *out as a 500 whose body is {"errorType": type, "errorMessage": message}; a message
// over 8 KiB is cut (the full text belongs in the log).
void CompleteWithError(std::string_view type, std::string_view message, ExecutionOutcome* out);
// Peak bytes as whole MiB, rounded up, at least 1.
int64_t MemoryUsedMb(size_t peak_bytes);

// text with every byte that is not part of well-formed UTF-8 replaced by U+FFFD.
std::string ToValidUtf8(std::string_view text);

// The output an execution collected, up to a byte limit; past it, one "[truncated]" line marks
// the cut and the rest is dropped. Not thread-safe; one per execution.
class LogBuffer {
 public:
  explicit LogBuffer(size_t limit) : limit_(limit) {}
  void Append(std::string_view text);
  bool truncated() const { return truncated_; }
  // The collected text as valid UTF-8 (a character cut at the limit becomes U+FFFD).
  std::string Take() { return ToValidUtf8(text_); }

 private:
  size_t limit_;
  std::string text_;
  bool truncated_ = false;
};

}  // namespace toolgate::executor
