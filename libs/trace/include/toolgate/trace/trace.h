// W3C Trace Context (traceparent) and span records.
//
// Each hop continues the trace it received: it takes a new span id whose parent is the incoming
// span, passes `traceparent` on in NATS headers, and logs one "span" line with its duration when
// done. A trace is then reassembled from the services' logs by trace_id (`toolgate trace ID`).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace toolgate::trace {

struct TraceContext {
  std::string trace_id;        // 32 lower-case hex digits, not all zero
  std::string span_id;         // 16 lower-case hex digits, not all zero
  std::string parent_span_id;  // empty for a root span
  uint8_t flags = 1;           // sampled

  // "00-<trace_id>-<span_id>-<flags>"
  std::string ToTraceparent() const;
};

// Parses a version-00 traceparent. Returns nullopt for anything malformed, as the W3C spec
// requires (the caller then starts a new trace).
std::optional<TraceContext> ParseTraceparent(std::string_view header);

// A new root trace.
TraceContext NewTrace();
// The next hop: same trace, new span id, parent = parent.span_id.
TraceContext ChildOf(const TraceContext& parent);
// Continues header when it parses, else starts a new trace.
TraceContext ContinueOrStart(std::string_view header);

// Logs a "span" line on destruction: trace_id, span_id, parent_span_id, name, duration_us.
class Span {
 public:
  Span(TraceContext context, std::string name);
  ~Span();
  Span(const Span&) = delete;
  Span& operator=(const Span&) = delete;
  const TraceContext& context() const { return context_; }
  std::string traceparent() const { return context_.ToTraceparent(); }

 private:
  TraceContext context_;
  std::string name_;
  int64_t start_us_;
};

}  // namespace toolgate::trace
