#include "toolgate/trace/otlp_exporter.h"

#include <gtest/gtest.h>

#include <future>
#include <memory>

#include "toolgate/base/crypto.h"
#include "toolgate/base/json.h"
#include "toolgate/metrics/metrics.h"

namespace toolgate::trace {
namespace {

FinishedSpan MakeSpan(const std::string& name) {
  FinishedSpan s;
  s.context = ChildOf(NewTrace());
  s.name = name;
  s.start_unix_ns = 1'700'000'000'000'000'000;
  s.end_unix_ns = s.start_unix_ns + 1500;
  return s;
}

uint64_t DroppedCount(const std::string& reason) {
  return metrics::Registry::Global()
      .Counter("toolgate_trace_spans_dropped_total", "", {"reason"})
      .With({reason})
      .value();
}

// Collects what the exporter hands over, in one place the test can wait on.
struct RecordingSink : SpanSink {
  void Export(FinishedSpan span) override { spans.push_back(std::move(span)); }
  std::vector<FinishedSpan> spans;
};

class OtlpTest : public ::testing::Test {
 protected:
  void SetUp() override { InitCrypto(); }
};

TEST_F(OtlpTest, EncodesAnExportRequestAsOtlpJson) {
  FinishedSpan root = MakeSpan("edge.invoke");
  root.context.parent_span_id.clear();
  root.kind = SpanKind::kServer;
  root.attributes = {{"http.request.method", std::string("POST")},
                     {"http.response.status_code", int64_t{200}},
                     {"faas.coldstart", true}};
  FinishedSpan child = MakeSpan("auth");
  child.error = true;
  std::string json = EncodeOtlpJson("toolgate-edge", "1.2.3", {root, child});

  auto doc = ParseJson(json);
  ASSERT_TRUE(doc.ok()) << json;
  auto rs = doc->root["resourceSpans"].at(0);
  std::string_view v;
  ASSERT_EQ(rs["resource"]["attributes"].at(0)["key"].get_string().get(v), simdjson::SUCCESS);
  EXPECT_EQ(v, "service.name");
  ASSERT_EQ(rs["resource"]["attributes"].at(0)["value"]["stringValue"].get_string().get(v),
            simdjson::SUCCESS);
  EXPECT_EQ(v, "toolgate-edge");
  auto spans = rs["scopeSpans"].at(0)["spans"];
  ASSERT_EQ(spans.at(0)["traceId"].get_string().get(v), simdjson::SUCCESS);
  EXPECT_EQ(v, root.context.trace_id);
  EXPECT_EQ(spans.at(0)["spanId"].get_string().get(v), simdjson::SUCCESS);
  EXPECT_EQ(v, root.context.span_id);
  // A root span has no parent at all, not an empty one.
  EXPECT_EQ(spans.at(0)["parentSpanId"].error(), simdjson::NO_SUCH_FIELD);
  EXPECT_EQ(spans.at(0)["kind"].get_int64().value(), 2);
  EXPECT_EQ(spans.at(0)["startTimeUnixNano"].get_string().value(), "1700000000000000000");
  EXPECT_EQ(spans.at(0)["endTimeUnixNano"].get_string().value(), "1700000000000001500");
  auto attrs = spans.at(0)["attributes"];
  EXPECT_EQ(attrs.at(0)["value"]["stringValue"].get_string().value(), "POST");
  EXPECT_EQ(attrs.at(1)["key"].get_string().value(), "http.response.status_code");
  EXPECT_EQ(attrs.at(1)["value"]["intValue"].get_string().value(), "200");
  EXPECT_EQ(attrs.at(2)["value"]["boolValue"].get_bool().value(), true);
  EXPECT_EQ(spans.at(0)["status"]["code"].error(), simdjson::NO_SUCH_FIELD);
  EXPECT_EQ(spans.at(1)["parentSpanId"].get_string().value(), child.context.parent_span_id);
  EXPECT_EQ(spans.at(1)["status"]["code"].get_int64().value(), 2);
}

TEST_F(OtlpTest, AnEndingSpanReachesTheInstalledSinkWithItsAttributes) {
  RecordingSink sink;
  SetSpanSink(&sink);
  TraceContext parent = NewTrace();
  {
    Span span(ChildOf(parent), "registry", SpanKind::kConsumer);
    span.SetAttribute("faas.invocation_id", std::string("e-1"));
    span.SetAttribute("faas.invocation_id", std::string("e-2"));  // replaces
    span.SetAttribute("attempt", int64_t{3});
  }
  SetSpanSink(nullptr);
  { Span unseen(NewTrace(), "after"); }
  ASSERT_EQ(sink.spans.size(), 1u);
  const FinishedSpan& s = sink.spans[0];
  EXPECT_EQ(s.name, "registry");
  EXPECT_EQ(s.kind, SpanKind::kConsumer);
  EXPECT_EQ(s.context.trace_id, parent.trace_id);
  EXPECT_EQ(s.context.parent_span_id, parent.span_id);
  EXPECT_GE(s.end_unix_ns, s.start_unix_ns);
  EXPECT_GT(s.start_unix_ns, 0);
  ASSERT_EQ(s.attributes.size(), 2u);
  EXPECT_EQ(std::get<std::string>(s.attributes[0].value), "e-2");
  EXPECT_EQ(std::get<int64_t>(s.attributes[1].value), 3);
}

TEST_F(OtlpTest, AFullBatchIsSentWithoutWaitingForTheInterval) {
  std::promise<std::string> sent;
  OtlpOptions options;
  options.service_name = "toolgate-auth";
  options.max_batch = 3;
  options.flush_interval = std::chrono::hours(1);  // only the count can trigger the send
  OtlpExporter exporter(options, [&sent, calls = 0](const std::string& json) mutable {
    if (calls++ == 0) sent.set_value(json);
    return Status::Ok();
  });
  for (const char* name : {"a", "b", "c"}) exporter.Export(MakeSpan(name));
  std::string json = sent.get_future().get();
  auto doc = ParseJson(json);
  ASSERT_TRUE(doc.ok());
  simdjson::dom::array spans;
  ASSERT_EQ(doc->root["resourceSpans"].at(0)["scopeSpans"].at(0)["spans"].get_array().get(spans),
            simdjson::SUCCESS);
  EXPECT_EQ(spans.size(), 3u);
}

TEST_F(OtlpTest, AStuckCollectorFillsTheQueueAndFurtherSpansAreDroppedNotWaitedFor) {
  std::promise<void> entered, release;
  std::shared_future<void> released = release.get_future().share();
  OtlpOptions options;
  options.max_queue = 2;
  options.max_batch = 1;
  const uint64_t before = DroppedCount("queue_full");
  {
    OtlpExporter exporter(options, [&entered, released, calls = 0](const std::string&) mutable {
      if (calls++ == 0) {
        entered.set_value();
        released.wait();  // the collector hangs
      }
      return Status::Ok();
    });
    exporter.Export(MakeSpan("taken"));
    entered.get_future().wait();  // the thread holds the first span, stuck in the transport
    exporter.Export(MakeSpan("queued-1"));
    exporter.Export(MakeSpan("queued-2"));
    exporter.Export(MakeSpan("dropped-1"));
    exporter.Export(MakeSpan("dropped-2"));
    EXPECT_EQ(DroppedCount("queue_full") - before, 2u);
    release.set_value();
  }
}

TEST_F(OtlpTest, ABatchTheCollectorRefusesIsCountedAsDropped) {
  const uint64_t before = DroppedCount("export_failed");
  int calls = 0;
  {
    OtlpOptions options;
    options.max_batch = 10;
    options.flush_interval = std::chrono::hours(1);
    OtlpExporter exporter(options, [&calls](const std::string&) {
      ++calls;
      return Status::Unavailable("connection refused");
    });
    for (int i = 0; i < 4; ++i) exporter.Export(MakeSpan("s"));
  }  // the destructor sends what has queued, once
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(DroppedCount("export_failed") - before, 4u);
}

TEST_F(OtlpTest, ShutdownSendsWhatHasQueuedAndDiscardsLaterSpans) {
  int spans_sent = 0;
  OtlpOptions options;
  options.flush_interval = std::chrono::hours(1);
  OtlpExporter exporter(options, [&spans_sent](const std::string& json) {
    auto doc = ParseJson(json);
    simdjson::dom::array spans;
    if (doc.ok() && doc->root["resourceSpans"].at(0)["scopeSpans"].at(0)["spans"].get_array().get(
                        spans) == simdjson::SUCCESS) {
      spans_sent += static_cast<int>(spans.size());
    }
    return Status::Ok();
  });
  exporter.Export(MakeSpan("a"));
  exporter.Export(MakeSpan("b"));
  const uint64_t dropped = DroppedCount("queue_full");
  exporter.Shutdown();
  EXPECT_EQ(spans_sent, 2);
  exporter.Export(MakeSpan("late"));
  exporter.Shutdown();  // idempotent
  EXPECT_EQ(spans_sent, 2);
  EXPECT_EQ(DroppedCount("queue_full"), dropped);  // discarded at exit, not counted as a full queue
}

TEST_F(OtlpTest, AnEndpointIsAnHttpUrlWithoutCredentials) {
  EXPECT_TRUE(CheckOtlpEndpoint("http://collector:4318").ok());
  EXPECT_TRUE(CheckOtlpEndpoint("https://otel.example.com/v1/traces").ok());
  EXPECT_TRUE(CheckOtlpEndpoint("http://127.0.0.1:4318/").ok());
  for (const char* bad :
       {"collector:4318", "grpc://collector:4317", "http://", "http://:4318",
        "http://user:s3cret@collector:4318", "http://collector:4318/?k=v", "ftp://collector"}) {
    Status s = CheckOtlpEndpoint(bad);
    EXPECT_EQ(s.code(), Status::Code::kInvalidArgument) << bad;
    EXPECT_EQ(s.message().find("s3cret"), std::string::npos) << s.message();
  }
}

TEST_F(OtlpTest, TheHttpTransportReportsAnAbsentCollector) {
  OtlpOptions options;
  options.endpoint = "http://127.0.0.1:1/v1/traces";  // nothing listens on port 1
  options.timeout = std::chrono::milliseconds(2000);
  EXPECT_FALSE(HttpSpanTransport(options)(EncodeOtlpJson("x", "", {MakeSpan("s")})).ok());
}

}  // namespace
}  // namespace toolgate::trace
