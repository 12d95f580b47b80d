// W3C Trace Context (traceparent) and span records.
//
// Each hop continues the trace it received: it takes a new span id whose parent is the incoming
// span, passes `traceparent` on in NATS headers, and logs one "span" line with its duration when
// done. A trace is then reassembled from the services' logs by trace_id (`toolgate trace ID`).
// When a SpanSink is installed (an OTLP exporter, otlp_exporter.h), each finished span is also
// handed to it, with its attributes, for a collector that sees the whole cluster.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

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

// OpenTelemetry's span kinds, numbered as OTLP numbers them.
enum class SpanKind { kInternal = 1, kServer = 2, kClient = 3, kProducer = 4, kConsumer = 5 };

// One attribute; keys follow OpenTelemetry's semantic conventions where one exists
// ("http.request.method", "faas.invocation_id"). Never a secret: attributes leave the process.
struct Attribute {
  std::string key;
  std::variant<std::string, int64_t, bool> value;
};

// A span once it has ended: what a SpanSink receives.
struct FinishedSpan {
  TraceContext context;
  std::string name;
  SpanKind kind = SpanKind::kInternal;
  int64_t start_unix_ns = 0;  // wall clock
  int64_t end_unix_ns = 0;    // start + the monotonic duration: never before the start
  std::vector<Attribute> attributes;
  bool error = false;  // OTLP status ERROR; otherwise UNSET
};

// Where finished spans go besides the log. Export is called on the thread that ends the span,
// often an event loop's: it must not block (queue and return).
class SpanSink {
 public:
  virtual ~SpanSink() = default;
  virtual void Export(FinishedSpan span) = 0;
};

// Installs sink for every span that ends from now on; nullptr removes it. The sink is not owned
// and must outlive every span that may end while it is installed (a service installs one for
// the life of the process). Thread-safe.
void SetSpanSink(SpanSink* sink);

// Logs a "span" line on destruction (trace_id, span_id, parent_span_id, name, duration_us),
// observes its duration in toolgate_span_duration_seconds{name} (span names are a fixed set:
// one latency histogram per hop), and hands the span to the installed SpanSink, if any. Not
// thread-safe: one thread at a time may set attributes (a span shared between callbacks is used by
// one of them at a time).
class Span {
 public:
  Span(TraceContext context, std::string name, SpanKind kind = SpanKind::kInternal);
  ~Span();
  Span(const Span&) = delete;
  Span& operator=(const Span&) = delete;
  const TraceContext& context() const { return context_; }
  std::string traceparent() const { return context_.ToTraceparent(); }
  const std::string& name() const { return name_; }
  // When the span began, Unix microseconds (wall clock).
  int64_t start_unix_us() const { return start_unix_ns_ / 1000; }
  // Microseconds since the span began (monotonic).
  int64_t elapsed_us() const;

  // Adds an attribute (a later one of the same key replaces it). Returns *this.
  Span& SetAttribute(std::string_view key, std::string value);
  Span& SetAttribute(std::string_view key, int64_t value);
  Span& SetAttribute(std::string_view key, bool value);
  // Marks the span as failed (OTLP status code ERROR).
  Span& SetError() {
    error_ = true;
    return *this;
  }

 private:
  Span& Set(std::string_view key, std::variant<std::string, int64_t, bool> value);

  TraceContext context_;
  std::string name_;
  SpanKind kind_;
  int64_t start_us_;
  int64_t start_unix_ns_;
  std::vector<Attribute> attributes_;
  bool error_ = false;
};

}  // namespace toolgate::trace
