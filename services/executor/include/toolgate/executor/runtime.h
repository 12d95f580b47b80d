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
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "toolgate/core/bundle_paths.h"
#include "toolgate/core/egress_policy.h"
#include "toolgate/executor/cancellation.h"
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

// What a running handler reported: context.progress (Python, JavaScript), progress (Lua); or
// context.log, log. Strings as the handler gave them (the executor makes them valid UTF-8 on the
// way to the edge).
struct Notice {
  enum class Kind { kProgress, kLog };
  Kind kind = Kind::kProgress;
  // kProgress.
  double progress = 0;
  double total = 0;  // meaningful only with has_total
  bool has_total = false;
  std::string message;  // "" when none
  // kLog.
  std::string level;      // one of the kNoticeLevels
  std::string data_json;  // the logged value as JSON
  std::string logger;     // "" when none
};

// The levels a handler may log at (RFC 5424's names, as MCP uses them).
inline constexpr std::string_view kNoticeLevels[] = {"debug", "info",     "notice", "warning",
                                                     "error", "critical", "alert",  "emergency"};
bool IsNoticeLevel(std::string_view level);

// Where a running handler's notices go. Offer is called on the thread that runs the call (for a
// worker process, the thread waiting for its answer), in the order the handler made them, and
// must return at once: a handler never waits for its notices. Implementations need not be
// thread-safe.
class NoticeSink {
 public:
  virtual ~NoticeSink() = default;
  // Takes one notice: passes it on, or drops it.
  virtual void Offer(Notice&& notice) = 0;
  // False once nothing more will be passed on (the call's bounds are spent), so that a caller
  // holding an undecoded notice can Drop it instead of decoding it.
  virtual bool accepting() const { return true; }
  // n notices the caller dropped without decoding them (past the bounds, malformed, oversized,
  // or dropped by a worker, which says how many).
  virtual void Drop(size_t n = 1) { (void)n; }
};

// The bounds of one call's notices.
struct NoticeLimits {
  size_t max_notices = 100;
  size_t max_total_bytes = 256 << 10;  // data_json, message and logger of every notice passed on
  size_t max_notice_bytes = 16 << 10;  // the same of one notice: a larger one is dropped
};

// The executor's sink for one call: passes each notice within limits to deliver and drops the
// rest (a log at an unknown level, one over max_notice_bytes, any past max_notices or past
// max_total_bytes), counting every drop in toolgate_executor_notices_dropped_total. A drop costs
// a few comparisons and nothing is kept, so a handler that reports a million times costs no
// memory. Not thread-safe: one per call, used on the thread running it.
class BoundedNoticeSink final : public NoticeSink {
 public:
  using Deliver = std::function<void(const Notice& notice)>;
  explicit BoundedNoticeSink(Deliver deliver, NoticeLimits limits = {})
      : deliver_(std::move(deliver)), limits_(limits) {}

  void Offer(Notice&& notice) override;
  bool accepting() const override { return delivered_ < limits_.max_notices; }
  void Drop(size_t n = 1) override;

  size_t delivered() const { return delivered_; }
  size_t dropped() const { return dropped_; }

 private:
  Deliver deliver_;
  NoticeLimits limits_;
  size_t delivered_ = 0;
  size_t bytes_ = 0;
  size_t dropped_ = 0;
};

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
  // Where the handler's notices go; null: the caller wants none (no stream_notices), and
  // context.progress and context.log check their arguments and send nothing. Owned by the
  // caller, valid during Run.
  NoticeSink* notices = nullptr;
  // Fires when the call is cancelled (cancellation.h): a runtime that runs the handler in a
  // worker kills it at once. Null: the call cannot be cancelled. Owned by the caller.
  const CancelSignal* cancel = nullptr;
};

struct ExecutionOutcome {
  enum class Kind {
    kCompleted,        // the handler ran: status_code and body are the response (500 included)
    kTimeout,          // the handler ran past timeout_ms and was stopped: 408, nothing charged
    kPlatformFailure,  // the runtime failed through no fault of the handler: 502, nothing charged
    kCancelled,        // cancelled while the handler ran: stopped, charged for the time it ran
    kCancelledBeforeStart,  // cancelled before the handler started: nothing charged
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
