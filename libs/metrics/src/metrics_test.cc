#include "toolgate/metrics/metrics.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <thread>

namespace toolgate::metrics {
namespace {

TEST(MetricsTest, CounterExposition) {
  Registry r;
  auto& calls = r.Counter("calls_total", "Calls made.", {"status"});
  calls.With({"2xx"}).Inc();
  calls.With({"2xx"}).Inc(2);
  calls.With({"5xx"}).Inc();
  EXPECT_EQ(r.Expose(),
            "# HELP calls_total Calls made.\n"
            "# TYPE calls_total counter\n"
            "calls_total{status=\"2xx\"} 3\n"
            "calls_total{status=\"5xx\"} 1\n");
}

TEST(MetricsTest, GaugeWithoutLabels) {
  Registry r;
  auto& busy = r.Gauge("busy", "Busy slots.").With({});
  busy.Set(4);
  busy.Add(-1.5);
  EXPECT_EQ(r.Expose(), "# HELP busy Busy slots.\n# TYPE busy gauge\nbusy 2.5\n");
}

TEST(MetricsTest, FamiliesAreSortedByNameAndRegisteredOnce) {
  Registry r;
  r.Counter("b_total", "B.").With({}).Inc();
  r.Counter("a_total", "A.").With({}).Inc();
  // A second registration returns the same family and series.
  r.Counter("b_total", "ignored").With({}).Inc();
  EXPECT_EQ(r.Expose(),
            "# HELP a_total A.\n# TYPE a_total counter\na_total 1\n"
            "# HELP b_total B.\n# TYPE b_total counter\nb_total 2\n");
}

TEST(MetricsTest, EscapesLabelValuesAndHelp) {
  Registry r;
  r.Counter("x_total", "Back\\slash\nnewline", {"v"}).With({"a\"b\\c\nd"}).Inc();
  EXPECT_EQ(r.Expose(),
            "# HELP x_total Back\\\\slash\\nnewline\n"
            "# TYPE x_total counter\n"
            "x_total{v=\"a\\\"b\\\\c\\nd\"} 1\n");
}

TEST(MetricsTest, HistogramBucketsAreCumulativeWithInf) {
  Registry r;
  auto& h = r.Histogram("d_seconds", "Durations.", {"op"}, {0.125, 1}).With({"get"});
  h.Observe(0.0625);
  h.Observe(0.125);  // le is inclusive
  h.Observe(0.5);
  h.Observe(7);
  EXPECT_EQ(r.Expose(),
            "# HELP d_seconds Durations.\n"
            "# TYPE d_seconds histogram\n"
            "d_seconds_bucket{op=\"get\",le=\"0.125\"} 2\n"
            "d_seconds_bucket{op=\"get\",le=\"1\"} 3\n"
            "d_seconds_bucket{op=\"get\",le=\"+Inf\"} 4\n"
            "d_seconds_sum{op=\"get\"} 7.6875\n"
            "d_seconds_count{op=\"get\"} 4\n");
}

TEST(MetricsTest, HistogramWithoutLabels) {
  Registry r;
  r.Histogram("h", "H.", {}, {1}).With({}).Observe(2);
  EXPECT_EQ(r.Expose(),
            "# HELP h H.\n# TYPE h histogram\nh_bucket{le=\"1\"} 0\nh_bucket{le=\"+Inf\"} 1\n"
            "h_sum 2\nh_count 1\n");
}

TEST(MetricsTest, DefaultLatencyBucketsSpanTenthOfMillisecondToMinute) {
  const auto& b = DefaultLatencyBuckets();
  ASSERT_FALSE(b.empty());
  EXPECT_DOUBLE_EQ(b.front(), 0.0001);
  EXPECT_DOUBLE_EQ(b.back(), 60);
  EXPECT_TRUE(std::is_sorted(b.begin(), b.end()));
}

TEST(MetricsTest, CardinalityCapSendsNewLabelSetsToOverflow) {
  Registry r;
  auto& f = r.Counter("by_fn_total", "By function.", {"function_id", "version"}, 3);
  for (int i = 0; i < 10; ++i) f.With({"fn" + std::to_string(i), "1"}).Inc();
  // Label sets seen before the cap keep their own series.
  f.With({"fn0", "1"}).Inc();
  EXPECT_EQ(f.series(), 3u);
  EXPECT_EQ(r.Expose(),
            "# HELP by_fn_total By function.\n"
            "# TYPE by_fn_total counter\n"
            "by_fn_total{function_id=\"_overflow\",version=\"_overflow\"} 8\n"
            "by_fn_total{function_id=\"fn0\",version=\"1\"} 2\n"
            "by_fn_total{function_id=\"fn1\",version=\"1\"} 1\n");
}

TEST(MetricsTest, ConcurrentIncrementsAreNotLost) {
  Registry r;
  auto& f = r.Counter("c_total", "C.", {"t"});
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&f] {
      for (int i = 0; i < 10000; ++i) f.With({std::to_string(i % 2)}).Inc();
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(f.With({"0"}).value() + f.With({"1"}).value(), 40000u);
}

TEST(MetricsTest, CollectorsRunBeforeExpositionUntilTheirHandleGoes) {
  Registry r;
  auto& g = r.Gauge("queue_length", "Queued.").With({});
  int queued = 7;
  auto collector = r.AddCollector([&] { g.Set(queued); });
  EXPECT_NE(r.Expose().find("\nqueue_length 7\n"), std::string::npos);
  collector.reset();
  queued = 9;
  EXPECT_NE(r.Expose().find("\nqueue_length 7\n"), std::string::npos);
}

TEST(MetricsTest, FormatValue) {
  EXPECT_EQ(FormatValue(0.00025), "0.00025");
  EXPECT_EQ(FormatValue(60), "60");
  EXPECT_EQ(FormatValue(std::numeric_limits<double>::infinity()), "+Inf");
}

}  // namespace
}  // namespace toolgate::metrics
