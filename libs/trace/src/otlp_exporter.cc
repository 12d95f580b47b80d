#include "toolgate/trace/otlp_exporter.h"

#include <memory>
#include <utility>

#include "toolgate/base/json_writer.h"
#include "toolgate/base/log.h"
#include "toolgate/http_client/http_client.h"
#include "toolgate/metrics/metrics.h"

namespace toolgate::trace {
namespace {

constexpr std::string_view kTracesPath = "/v1/traces";

metrics::Counter& Dropped(const std::string& reason) {
  return metrics::Registry::Global()
      .Counter("toolgate_trace_spans_dropped_total",
               "Spans not exported: the queue was full, or the collector did not accept them.",
               {"reason"})
      .With({reason});
}

metrics::Counter& Exported() {
  static metrics::Counter& exported =
      metrics::Registry::Global()
          .Counter("toolgate_trace_spans_exported_total", "Spans a collector accepted.")
          .With({});
  return exported;
}

void WriteAttribute(JsonWriter& w, const Attribute& a) {
  w.BeginObject().Field("key", a.key).Key("value").BeginObject();
  if (const auto* s = std::get_if<std::string>(&a.value)) {
    w.Field("stringValue", *s);
  } else if (const auto* i = std::get_if<int64_t>(&a.value)) {
    w.Field("intValue", std::to_string(*i));  // proto3 JSON: 64-bit integers as strings
  } else {
    w.Field("boolValue", std::get<bool>(a.value));
  }
  w.EndObject().EndObject();
}

}  // namespace

std::string EncodeOtlpJson(std::string_view service_name, std::string_view service_version,
                           const std::vector<FinishedSpan>& spans) {
  JsonWriter w;
  w.BeginObject().Key("resourceSpans").BeginArray().BeginObject();
  w.Key("resource").BeginObject().Key("attributes").BeginArray();
  WriteAttribute(w, {"service.name", std::string(service_name)});
  WriteAttribute(w, {"service.namespace", std::string("toolgate")});
  if (!service_version.empty()) {
    WriteAttribute(w, {"service.version", std::string(service_version)});
  }
  w.EndArray().EndObject();
  w.Key("scopeSpans").BeginArray().BeginObject();
  w.Key("scope").BeginObject().Field("name", "toolgate").EndObject();
  w.Key("spans").BeginArray();
  for (const FinishedSpan& s : spans) {
    w.BeginObject().Field("traceId", s.context.trace_id).Field("spanId", s.context.span_id);
    if (!s.context.parent_span_id.empty()) w.Field("parentSpanId", s.context.parent_span_id);
    w.Field("name", s.name)
        .Field("kind", static_cast<int>(s.kind))
        .Field("startTimeUnixNano", std::to_string(s.start_unix_ns))
        .Field("endTimeUnixNano", std::to_string(s.end_unix_ns));
    w.Key("attributes").BeginArray();
    for (const Attribute& a : s.attributes) WriteAttribute(w, a);
    w.EndArray();
    // 2: STATUS_CODE_ERROR; 0 (UNSET) otherwise, as the conventions ask of instrumentation.
    w.Key("status").BeginObject();
    if (s.error) w.Field("code", 2);
    w.EndObject();
    w.EndObject();
  }
  w.EndArray().EndObject().EndArray().EndObject().EndArray().EndObject();
  return w.Take();
}

Status CheckOtlpEndpoint(std::string_view url) {
  size_t scheme = url.find("://");
  if (scheme == std::string_view::npos ||
      (url.substr(0, scheme) != "http" && url.substr(0, scheme) != "https")) {
    return Status::InvalidArgument("the OTLP endpoint must be an http:// or https:// URL");
  }
  std::string_view rest = url.substr(scheme + 3);
  std::string_view authority = rest.substr(0, rest.find('/'));
  if (authority.find('@') != std::string_view::npos) {
    return Status::InvalidArgument(
        "the OTLP endpoint must not carry a user or password (it is logged)");
  }
  if (authority.empty() || authority.front() == ':') {
    return Status::InvalidArgument("the OTLP endpoint has no host");
  }
  if (url.find_first_of("?#") != std::string_view::npos) {
    return Status::InvalidArgument("the OTLP endpoint must not have a query or fragment");
  }
  return Status::Ok();
}

SpanTransport HttpSpanTransport(const OtlpOptions& options) {
  std::string base = options.endpoint;
  while (!base.empty() && base.back() == '/') base.pop_back();
  if (base.size() >= kTracesPath.size() &&
      base.compare(base.size() - kTracesPath.size(), kTracesPath.size(), kTracesPath) == 0) {
    base.resize(base.size() - kTracesPath.size());
  }
  auto client = std::make_shared<http::HttpClient>(base);
  client->SetTimeout(options.timeout);
  return [client](const std::string& json) -> Status {
    auto r = client->Post(kTracesPath, json, {{"Content-Type", "application/json"}});
    if (!r.ok()) return r.status();
    if (r->status < 200 || r->status > 299) {
      return Status::Unavailable("the collector answered HTTP " + std::to_string(r->status));
    }
    return Status::Ok();
  };
}

void RegisterExportMetrics() {
  Dropped("queue_full");
  Dropped("export_failed");
  Exported();
  // Span lines share the log's bounded queue (log.h): what it dropped, at each scrape.
  static const std::unique_ptr<metrics::Collector> log_drops = [] {
    metrics::Counter& dropped =
        metrics::Registry::Global()
            .Counter("toolgate_log_lines_dropped_total",
                     "Debug and info log lines, span lines included, dropped because the log "
                     "writer had fallen behind.")
            .With({});
    return metrics::Registry::Global().AddCollector([&dropped, last = uint64_t{0}]() mutable {
      uint64_t now = log::DroppedLines();
      if (now > last) dropped.Inc(now - last);
      last = now;
    });
  }();
}

OtlpExporter::OtlpExporter(OtlpOptions options, SpanTransport transport)
    : options_(std::move(options)), transport_(std::move(transport)), thread_([this] { Loop(); }) {
  // Registered now, so that a scrape shows 0 rather than nothing before the first drop.
  RegisterExportMetrics();
}

OtlpExporter::~OtlpExporter() {
  Shutdown();
}

void OtlpExporter::Shutdown() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_one();
  if (thread_.joinable()) thread_.join();
}

void OtlpExporter::Export(FinishedSpan span) {
  static metrics::Counter& queue_full = Dropped("queue_full");
  bool wake = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return;  // the process is exiting
    if (queue_.size() >= options_.max_queue) {
      queue_full.Inc();
      return;
    }
    queue_.push_back(std::move(span));
    // The thread waits for the first span of a batch, then for a full batch or the interval.
    wake = queue_.size() == 1 || queue_.size() >= options_.max_batch;
  }
  if (wake) cv_.notify_one();
}

void OtlpExporter::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, and nothing left to send
    // A batch fills for at most flush_interval from its first span.
    const auto flush_at = std::chrono::steady_clock::now() + options_.flush_interval;
    cv_.wait_until(lock, flush_at,
                   [this] { return stopping_ || queue_.size() >= options_.max_batch; });
    std::vector<FinishedSpan> batch;
    while (!queue_.empty() && batch.size() < options_.max_batch) {
      batch.push_back(std::move(queue_.front()));
      queue_.pop_front();
    }
    lock.unlock();
    const bool sent = Send(std::move(batch));
    lock.lock();
    // Stopping with a collector that did not take the last batch: it will not take the rest
    // either, and the process should not wait a timeout per batch to exit.
    if (stopping_ && !sent) {
      Dropped("export_failed").Inc(queue_.size());
      queue_.clear();
    }
  }
}

bool OtlpExporter::Send(std::vector<FinishedSpan> batch) {
  static metrics::Counter& failed = Dropped("export_failed");
  Status s = transport_(EncodeOtlpJson(options_.service_name, options_.service_version, batch));
  if (s.ok()) {
    Exported().Inc(batch.size());
    return true;
  }
  failed.Inc(batch.size());
  // Debug: a collector that is down would otherwise write a line per batch for as long.
  log::Debug("span export failed")
      .Str("error", s.ToString())
      .Int("spans", static_cast<int64_t>(batch.size()));
  return false;
}

}  // namespace toolgate::trace
