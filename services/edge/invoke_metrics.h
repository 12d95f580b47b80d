// InvokeMetrics: what the edge counts of each invocation it answers.
//
//   toolgate_invocations_total{[function_id, version,] status_class, runtime}
//   toolgate_invoke_duration_seconds{status_class}       (histogram, request to answer)
//   toolgate_function_duration_seconds{function_id}      (histogram, the same by function; only
//                                                         with function labels)
//   toolgate_platform_errors_total{code}                 (answers that are a problem, not the
//                                                         handler's own response)
//
// Function ids and versions are labels only when the operator allows it: they are the tenants'
// names, and unbounded; even then a cap (max_functions label sets) bounds the series, past which
// calls count under "_overflow". Thread-safe: Record is called from any reply thread.
#pragma once

#include <cstddef>
#include <string>

#include "toolgate/metrics/metrics.h"
#include "toolgate/v1/toolgate.pb.h"

namespace toolgate::edge {

struct InvokeMetricsOptions {
  bool function_labels = false;
  size_t max_functions = 1000;
};

// "2xx", "4xx", ... for an HTTP status; "other" outside 100..599.
std::string StatusClass(int status);

class InvokeMetrics {
 public:
  // Registers the families in registry, which must outlive this object.
  explicit InvokeMetrics(InvokeMetricsOptions options,
                         metrics::Registry& registry = metrics::Registry::Global());

  // Counts one answered invocation of function_id (requested_version may be empty) that took
  // seconds and was answered with http_status; reply is what the chain answered.
  void Record(const std::string& function_id, const std::string& requested_version,
              const v1::InvokeReply& reply, int http_status, double seconds);

 private:
  InvokeMetricsOptions options_;
  metrics::CounterFamily& invocations_;
  metrics::HistogramFamily& duration_;
  metrics::HistogramFamily* function_duration_;  // only with function labels
  metrics::CounterFamily& platform_errors_;
};

}  // namespace toolgate::edge
