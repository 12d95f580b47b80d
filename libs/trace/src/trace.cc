#include "toolgate/trace/trace.h"

#include <atomic>
#include <chrono>

#include "toolgate/base/crypto.h"
#include "toolgate/base/log.h"
#include "toolgate/base/time.h"
#include "toolgate/metrics/metrics.h"

namespace toolgate::trace {
namespace {

bool IsLowerHex(std::string_view s) {
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

bool AllZero(std::string_view s) {
  return s.find_first_not_of('0') == std::string_view::npos;
}

std::string RandomHex(size_t bytes) {
  for (;;) {
    std::string hex = HexEncode(RandomBytes(bytes));
    if (!AllZero(hex)) return hex;
  }
}

}  // namespace

std::string TraceContext::ToTraceparent() const {
  static const char kHex[] = "0123456789abcdef";
  std::string out = "00-" + trace_id + "-" + span_id + "-";
  out.push_back(kHex[flags >> 4]);
  out.push_back(kHex[flags & 0xf]);
  return out;
}

std::optional<TraceContext> ParseTraceparent(std::string_view h) {
  // 00-<32 hex>-<16 hex>-<2 hex>; future versions may append fields after the flags.
  if (h.size() < 55 || h[2] != '-' || h[35] != '-' || h[52] != '-') return std::nullopt;
  std::string_view version = h.substr(0, 2), trace_id = h.substr(3, 32), span_id = h.substr(36, 16),
                   flags = h.substr(53, 2);
  if (!IsLowerHex(version) || version == "ff" || !IsLowerHex(trace_id) || !IsLowerHex(span_id) ||
      !IsLowerHex(flags) || AllZero(trace_id) || AllZero(span_id)) {
    return std::nullopt;
  }
  if (version == "00" && h.size() != 55) return std::nullopt;
  if (version != "00" && h.size() > 55 && h[55] != '-') return std::nullopt;
  TraceContext ctx;
  ctx.trace_id = std::string(trace_id);
  ctx.span_id = std::string(span_id);
  ctx.flags = static_cast<uint8_t>(std::stoi(std::string(flags), nullptr, 16));
  return ctx;
}

TraceContext NewTrace() {
  TraceContext ctx;
  ctx.trace_id = RandomHex(16);
  ctx.span_id = RandomHex(8);
  return ctx;
}

TraceContext ChildOf(const TraceContext& parent) {
  TraceContext ctx;
  ctx.trace_id = parent.trace_id;
  ctx.parent_span_id = parent.span_id;
  ctx.span_id = RandomHex(8);
  ctx.flags = parent.flags;
  return ctx;
}

TraceContext ContinueOrStart(std::string_view header) {
  if (auto parsed = ParseTraceparent(header)) return ChildOf(*parsed);
  return NewTrace();
}

namespace {

std::atomic<SpanSink*> g_sink{nullptr};

int64_t UnixNanos() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

void SetSpanSink(SpanSink* sink) {
  g_sink.store(sink, std::memory_order_release);
}

Span::Span(TraceContext context, std::string name, SpanKind kind)
    : context_(std::move(context)),
      name_(std::move(name)),
      kind_(kind),
      start_us_(MonotonicUs()),
      start_unix_ns_(UnixNanos()) {}

int64_t Span::elapsed_us() const {
  return MonotonicUs() - start_us_;
}

Span& Span::Set(std::string_view key, std::variant<std::string, int64_t, bool> value) {
  for (Attribute& a : attributes_) {
    if (a.key == key) {
      a.value = std::move(value);
      return *this;
    }
  }
  attributes_.push_back({std::string(key), std::move(value)});
  return *this;
}

Span& Span::SetAttribute(std::string_view key, std::string value) {
  return Set(key, std::move(value));
}
Span& Span::SetAttribute(std::string_view key, int64_t value) {
  return Set(key, value);
}
Span& Span::SetAttribute(std::string_view key, bool value) {
  return Set(key, value);
}

Span::~Span() {
  const int64_t duration_us = MonotonicUs() - start_us_;
  log::Info("span")
      .Str("trace_id", context_.trace_id)
      .Str("span_id", context_.span_id)
      .Str("parent_span_id", context_.parent_span_id)
      .Str("name", name_)
      .Int("duration_us", duration_us);
  static metrics::HistogramFamily& durations = metrics::Registry::Global().Histogram(
      "toolgate_span_duration_seconds",
      "Time spent in each hop of a request, by span name (edge.invoke, auth, registry, ...).",
      {"name"}, metrics::DefaultLatencyBuckets(), 64);
  durations.With({name_}).Observe(static_cast<double>(duration_us) / 1e6);
  SpanSink* sink = g_sink.load(std::memory_order_acquire);
  if (sink == nullptr) return;
  FinishedSpan done;
  done.context = std::move(context_);
  done.name = std::move(name_);
  done.kind = kind_;
  done.start_unix_ns = start_unix_ns_;
  done.end_unix_ns = start_unix_ns_ + duration_us * 1000;
  done.attributes = std::move(attributes_);
  done.error = error_;
  sink->Export(std::move(done));
}

}  // namespace toolgate::trace
