// OtlpExporter: sends finished spans to an OpenTelemetry collector with OTLP/HTTP JSON
// (POST <endpoint>/v1/traces, Content-Type: application/json).
//
//   trace::OtlpOptions options;
//   options.endpoint = "http://collector:4318";
//   options.service_name = "toolgate-edge";
//   static trace::OtlpExporter exporter(options, trace::HttpSpanTransport(options));
//   trace::SetSpanSink(&exporter);
//
// An invocation never waits for the collector: Export only appends to a bounded queue, and one
// exporter thread takes batches from it (when max_batch spans have queued, or flush_interval
// after the first one did) and posts them. A full queue drops the span; a batch the collector
// did not accept (refused, absent, too slow) is dropped too, not retried, so that a collector
// that is down costs memory bounded by the queue and nothing else. Both are counted in
// toolgate_trace_spans_dropped_total{reason="queue_full"|"export_failed"};
// toolgate_trace_spans_exported_total counts the spans a collector accepted.
//
// Thread-safe: Export may be called from any thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "toolgate/base/status.h"
#include "toolgate/trace/trace.h"

namespace toolgate::trace {

struct OtlpOptions {
  // The collector's base URL ("http://127.0.0.1:4318"); "/v1/traces" is appended unless the URL
  // already ends with it.
  std::string endpoint;
  // Resource attributes: service.name ("toolgate-edge") and service.version.
  std::string service_name;
  std::string service_version;
  size_t max_queue = 2048;  // spans waiting for the exporter thread; more are dropped
  size_t max_batch = 512;   // spans per export request
  std::chrono::milliseconds flush_interval{1000};  // the longest a span waits for its batch
  std::chrono::milliseconds timeout{5000};         // one export request, connecting included
};

// Ok when url can be a collector's endpoint: http:// or https://, a host, no user or password
// (the URL is logged, and a collector's credentials belong in headers), no query or fragment.
// InvalidArgument saying which rule it breaks, without repeating the URL.
Status CheckOtlpEndpoint(std::string_view url);

// Posts one encoded export request. Ok only when the collector accepted it (HTTP 2xx).
using SpanTransport = std::function<Status(const std::string& json)>;

// A transport posting to options.endpoint with libcurl. Its connection lives in the returned
// function, which the exporter calls from its one thread.
SpanTransport HttpSpanTransport(const OtlpOptions& options);

// The OTLP/JSON ExportTraceServiceRequest for spans of one service: ids as lower-case hex,
// times as decimal strings of Unix nanoseconds, int attributes as decimal strings (proto3 JSON).
std::string EncodeOtlpJson(std::string_view service_name, std::string_view service_version,
                           const std::vector<FinishedSpan>& spans);

// Registers the exporter's counters at 0, so that a dashboard finds them on a process that
// exports nothing (no endpoint) as on one that does. Idempotent, thread-safe.
void RegisterExportMetrics();

class OtlpExporter final : public SpanSink {
 public:
  // Starts the exporter thread. transport is called only from that thread.
  OtlpExporter(OtlpOptions options, SpanTransport transport);
  // Shutdown().
  ~OtlpExporter() override;
  OtlpExporter(const OtlpExporter&) = delete;
  OtlpExporter& operator=(const OtlpExporter&) = delete;

  // Queues span, or drops and counts it when the queue is full. Never blocks on the network.
  // After Shutdown, spans are discarded.
  void Export(FinishedSpan span) override;
  // Sends what has queued (one attempt per batch, each bounded by the timeout; after a batch
  // fails, the rest is dropped) and stops the thread; later spans are discarded. For a process
  // that exits: the object stays valid. Idempotent.
  void Shutdown();

 private:
  void Loop();
  // Posts one batch; false (the spans counted as dropped) when the collector did not take it.
  bool Send(std::vector<FinishedSpan> batch);

  const OtlpOptions options_;
  const SpanTransport transport_;
  std::mutex mu_;
  std::condition_variable cv_;      // a span was queued, or stopping_
  std::deque<FinishedSpan> queue_;  // guarded by mu_
  bool stopping_ = false;           // guarded by mu_
  std::thread thread_;              // last: starts once the members above exist
};

}  // namespace toolgate::trace
