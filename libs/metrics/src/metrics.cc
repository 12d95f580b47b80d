#include "toolgate/metrics/metrics.h"

#include <algorithm>
#include <cassert>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace toolgate::metrics {

const std::vector<double>& DefaultLatencyBuckets() {
  static const std::vector<double> kBuckets = {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005,
                                               0.01,   0.025,   0.05,   0.1,   0.25,   0.5,
                                               1,      2.5,     5,      10,    30,     60};
  return kBuckets;
}

std::string EscapeLabelValue(std::string_view v) {
  std::string out;
  out.reserve(v.size());
  for (char c : v) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string EscapeHelp(std::string_view v) {
  std::string out;
  for (char c : v) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string FormatValue(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  assert(ec == std::errc());
  return std::string(buf, end);
}

Histogram::Histogram(const std::vector<double>& bounds)
    : bounds_(bounds), buckets_(new std::atomic<uint64_t>[bounds.size() + 1]) {
  assert(std::is_sorted(bounds_.begin(), bounds_.end()));
  for (size_t i = 0; i <= bounds_.size(); ++i) buckets_[i].store(0, std::memory_order_relaxed);
}

void Histogram::Observe(double v) {
  // Buckets are inclusive upper bounds (le): the first bound >= v.
  size_t i =
      static_cast<size_t>(std::lower_bound(bounds_.begin(), bounds_.end(), v) - bounds_.begin());
  buckets_[i].fetch_add(1, std::memory_order_relaxed);
  sum_.fetch_add(v, std::memory_order_relaxed);
}

Histogram::Snapshot Histogram::Take() const {
  Snapshot s;
  uint64_t running = 0;
  for (size_t i = 0; i <= bounds_.size(); ++i) {
    running += buckets_[i].load(std::memory_order_relaxed);
    s.cumulative.push_back(running);
  }
  s.sum = sum_.load(std::memory_order_relaxed);
  return s;
}

FamilyBase::FamilyBase(std::string name, std::string help, std::vector<std::string> label_names,
                       size_t max_series, std::string type)
    : name_(std::move(name)),
      help_(std::move(help)),
      label_names_(std::move(label_names)),
      max_series_(std::max<size_t>(1, max_series)),
      type_(std::move(type)) {}

void* FamilyBase::Find(const LabelValues& values) {
  if (values.size() != label_names_.size()) {
    std::fprintf(stderr, "metric %s: %zu label values for %zu labels\n", name_.c_str(),
                 values.size(), label_names_.size());
    std::abort();
  }
  {
    std::shared_lock lock(mu_);
    auto it = series_.find(values);
    if (it != series_.end()) return it->second.get();
  }
  std::unique_lock lock(mu_);
  auto it = series_.find(values);
  if (it != series_.end()) return it->second.get();
  // One slot is kept for the overflow series, so a family never holds more than its cap.
  if (series_.size() + 1 >= max_series_ && !label_names_.empty()) {
    LabelValues overflow(label_names_.size(), std::string(kOverflow));
    auto& slot = series_[overflow];
    if (!slot) slot = Make();
    return slot.get();
  }
  auto& slot = series_[values];
  slot = Make();
  return slot.get();
}

size_t FamilyBase::series() const {
  std::shared_lock lock(mu_);
  return series_.size();
}

void FamilyBase::Write(std::string& out) const {
  out += "# HELP " + name_ + " " + EscapeHelp(help_) + "\n";
  out += "# TYPE " + name_ + " " + type_ + "\n";
  std::shared_lock lock(mu_);
  for (const auto& [values, series] : series_) {
    std::string labels;
    for (size_t i = 0; i < values.size(); ++i) {
      if (!labels.empty()) labels += ",";
      labels += label_names_[i] + "=\"" + EscapeLabelValue(values[i]) + "\"";
    }
    WriteSeries(out, labels, series.get());
  }
}

namespace {

std::string Braced(const std::string& labels) {
  return labels.empty() ? "" : "{" + labels + "}";
}

}  // namespace

void CounterFamily::WriteSeries(std::string& out, const std::string& labels, const void* s) const {
  out +=
      name_ + Braced(labels) + " " + std::to_string(static_cast<const Counter*>(s)->value()) + "\n";
}

void GaugeFamily::WriteSeries(std::string& out, const std::string& labels, const void* s) const {
  out += name_ + Braced(labels) + " " + FormatValue(static_cast<const Gauge*>(s)->value()) + "\n";
}

HistogramFamily::HistogramFamily(std::string name, std::string help,
                                 std::vector<std::string> label_names, size_t max_series,
                                 std::vector<double> bounds)
    : Family(std::move(name), std::move(help), std::move(label_names), max_series, "histogram"),
      bounds_(std::move(bounds)) {}

void HistogramFamily::WriteSeries(std::string& out, const std::string& labels,
                                  const void* s) const {
  Histogram::Snapshot snap = static_cast<const Histogram*>(s)->Take();
  const std::string sep = labels.empty() ? "" : ",";
  for (size_t i = 0; i <= bounds_.size(); ++i) {
    std::string le = i < bounds_.size() ? FormatValue(bounds_[i]) : "+Inf";
    out += name_ + "_bucket{" + labels + sep + "le=\"" + le + "\"} " +
           std::to_string(snap.cumulative[i]) + "\n";
  }
  out += name_ + "_sum" + Braced(labels) + " " + FormatValue(snap.sum) + "\n";
  out += name_ + "_count" + Braced(labels) + " " + std::to_string(snap.cumulative.back()) + "\n";
}

Registry& Registry::Global() {
  static Registry* registry = new Registry();  // never destroyed: series outlive static dtors
  return *registry;
}

template <typename F, typename... Args>
F& Registry::Get(const std::string& name, const char* type, Args&&... args) {
  std::lock_guard lock(mu_);
  auto& slot = families_[name];
  if (!slot) slot = std::make_unique<F>(name, std::forward<Args>(args)...);
  auto* family = dynamic_cast<F*>(slot.get());
  if (!family) {
    std::fprintf(stderr, "metric %s registered as %s and as %s\n", name.c_str(),
                 slot->type().c_str(), type);
    std::abort();
  }
  return *family;
}

CounterFamily& Registry::Counter(const std::string& name, const std::string& help,
                                 const std::vector<std::string>& label_names, size_t max_series) {
  return Get<CounterFamily>(name, "counter", help, label_names, max_series, std::string("counter"));
}

GaugeFamily& Registry::Gauge(const std::string& name, const std::string& help,
                             const std::vector<std::string>& label_names, size_t max_series) {
  return Get<GaugeFamily>(name, "gauge", help, label_names, max_series, std::string("gauge"));
}

HistogramFamily& Registry::Histogram(const std::string& name, const std::string& help,
                                     const std::vector<std::string>& label_names,
                                     const std::vector<double>& bounds, size_t max_series) {
  return Get<HistogramFamily>(name, "histogram", help, label_names, max_series, bounds);
}

Collector::~Collector() {
  std::lock_guard lock(registry_.collect_mu_);
  registry_.collectors_.erase(id_);
}

std::unique_ptr<Collector> Registry::AddCollector(std::function<void()> collect) {
  std::lock_guard lock(collect_mu_);
  uint64_t id = next_collector_++;
  collectors_.emplace(id, std::move(collect));
  return std::unique_ptr<Collector>(new Collector(*this, id));
}

std::string Registry::Expose() const {
  {
    std::lock_guard collecting(collect_mu_);
    for (const auto& [id, collect] : collectors_) collect();
  }
  std::string out;
  std::lock_guard lock(mu_);
  for (const auto& [name, family] : families_) family->Write(out);
  return out;
}

}  // namespace toolgate::metrics
