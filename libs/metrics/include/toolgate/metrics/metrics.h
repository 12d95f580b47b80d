// Metrics: counters, gauges and histograms with labels, and their Prometheus text exposition
// (format 0.0.4).
//
// Debian 12 packages no Prometheus client library, so this is our own, kept small: one
// process-wide Registry, families of series keyed by label values, and one atomic operation per
// event once a caller holds a series. Typical use caches the series it updates:
//
//   static metrics::Counter& published =
//       metrics::Registry::Global().Counter("toolgate_nats_published_total", "...").With({});
//   published.Inc();
//
// A family's label sets are bounded: past its cap, new label values share one series whose
// every label reads "_overflow", so an unbounded input (a function id) cannot grow memory or
// the scrape without limit.
//
// Thread safety: every method of every class here may be called from any thread. Series and
// families live as long as the registry (for Global(), the process): references stay valid.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <vector>

namespace toolgate::metrics {

// Label values, in the order of the family's label names.
using LabelValues = std::vector<std::string>;

// The value every label of the overflow series carries.
inline constexpr std::string_view kOverflow = "_overflow";
// Label sets a family holds unless told otherwise.
inline constexpr size_t kDefaultMaxSeries = 1000;

// Upper bounds, in seconds, from 0.1 ms to 60 s: fits a loopback round trip and a long call.
const std::vector<double>& DefaultLatencyBuckets();

class Counter {
 public:
  void Inc(uint64_t n = 1) { value_.fetch_add(n, std::memory_order_relaxed); }
  uint64_t value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> value_{0};
};

class Gauge {
 public:
  void Set(double v) { value_.store(v, std::memory_order_relaxed); }
  void Add(double v) { value_.fetch_add(v, std::memory_order_relaxed); }
  double value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0};
};

class Histogram {
 public:
  // bounds: strictly increasing finite upper bounds; +Inf is implicit.
  explicit Histogram(const std::vector<double>& bounds);
  // Two relaxed atomic additions: the value's bucket (not cumulative; exposition sums) and sum.
  void Observe(double v);

  struct Snapshot {
    std::vector<uint64_t> cumulative;  // one per bound, then +Inf (== count)
    double sum = 0;
  };
  Snapshot Take() const;
  const std::vector<double>& bounds() const { return bounds_; }

 private:
  std::vector<double> bounds_;
  std::unique_ptr<std::atomic<uint64_t>[]> buckets_;  // bounds_.size() + 1
  std::atomic<double> sum_{0};
};

// One metric name: its help, label names and series.
class FamilyBase {
 public:
  FamilyBase(std::string name, std::string help, std::vector<std::string> label_names,
             size_t max_series, std::string type);
  virtual ~FamilyBase() = default;
  // Appends HELP, TYPE and every series, in label order.
  void Write(std::string& out) const;
  const std::string& name() const { return name_; }
  const std::string& type() const { return type_; }
  // Label sets held, the overflow series included.
  size_t series() const;

 protected:
  // Finds or creates the series of values (cap applied); the pointer stays valid.
  void* Find(const LabelValues& values);
  virtual std::shared_ptr<void> Make() const = 0;
  virtual void WriteSeries(std::string& out, const std::string& labels,
                           const void* series) const = 0;

  std::string name_;

 private:
  std::string help_;
  std::vector<std::string> label_names_;
  size_t max_series_;
  std::string type_;
  mutable std::shared_mutex mu_;
  std::map<LabelValues, std::shared_ptr<void>> series_;  // guarded by mu_
};

template <typename T>
class Family : public FamilyBase {
 public:
  using FamilyBase::FamilyBase;
  // The series of these label values (as many as label names; asserted), created on first use.
  // Takes a shared lock: hot paths with fixed labels should keep the reference.
  T& With(const LabelValues& values) { return *static_cast<T*>(Find(values)); }
};

class CounterFamily final : public Family<Counter> {
 public:
  using Family::Family;

 private:
  std::shared_ptr<void> Make() const override { return std::make_shared<Counter>(); }
  void WriteSeries(std::string& out, const std::string& labels, const void* s) const override;
};

class GaugeFamily final : public Family<Gauge> {
 public:
  using Family::Family;

 private:
  std::shared_ptr<void> Make() const override { return std::make_shared<Gauge>(); }
  void WriteSeries(std::string& out, const std::string& labels, const void* s) const override;
};

class HistogramFamily final : public Family<Histogram> {
 public:
  HistogramFamily(std::string name, std::string help, std::vector<std::string> label_names,
                  size_t max_series, std::vector<double> bounds);

 private:
  std::shared_ptr<void> Make() const override { return std::make_shared<Histogram>(bounds_); }
  void WriteSeries(std::string& out, const std::string& labels, const void* s) const override;
  std::vector<double> bounds_;
};

class Registry;

// A collector's registration; destroying it removes the collector, waiting for a run of it in
// progress, so a collector never runs after what it reads is gone.
class Collector {
 public:
  ~Collector();
  Collector(const Collector&) = delete;
  Collector& operator=(const Collector&) = delete;

 private:
  friend class Registry;
  Collector(Registry& registry, uint64_t id) : registry_(registry), id_(id) {}
  Registry& registry_;
  uint64_t id_;
};

class Registry {
 public:
  Registry() = default;
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  // The process's registry, which every admin port exposes.
  static Registry& Global();

  // Registers a family, or returns the one already registered under name (its help, labels and
  // cap are kept; asking for it as another type aborts: two meanings of one name is a bug).
  CounterFamily& Counter(const std::string& name, const std::string& help,
                         const std::vector<std::string>& label_names = {},
                         size_t max_series = kDefaultMaxSeries);
  GaugeFamily& Gauge(const std::string& name, const std::string& help,
                     const std::vector<std::string>& label_names = {},
                     size_t max_series = kDefaultMaxSeries);
  HistogramFamily& Histogram(const std::string& name, const std::string& help,
                             const std::vector<std::string>& label_names = {},
                             const std::vector<double>& bounds = DefaultLatencyBuckets(),
                             size_t max_series = kDefaultMaxSeries);

  // Adds a function run before each Expose, for values another object keeps (a pool's counts,
  // read under its own lock) rather than updates as they change. The registry must outlive the
  // returned handle.
  std::unique_ptr<Collector> AddCollector(std::function<void()> collect);

  // Runs the collectors, then writes every family in the text format 0.0.4 (Content-Type
  // "text/plain; version=0.0.4"), by name.
  std::string Expose() const;

 private:
  friend class Collector;
  template <typename F, typename... Args>
  F& Get(const std::string& name, const char* type, Args&&... args);

  mutable std::mutex mu_;
  std::map<std::string, std::unique_ptr<FamilyBase>> families_;  // guarded by mu_
  // Held while collectors run: a Collector's destructor waits for its run to end.
  mutable std::mutex collect_mu_;
  uint64_t next_collector_ = 1;                           // guarded by collect_mu_
  std::map<uint64_t, std::function<void()>> collectors_;  // guarded by collect_mu_
};

// Label value and HELP escaping of the text format (exposed for tests).
std::string EscapeLabelValue(std::string_view v);
std::string EscapeHelp(std::string_view v);
// A sample value as the text format writes it: shortest round trip, +Inf, -Inf, NaN.
std::string FormatValue(double v);

}  // namespace toolgate::metrics
