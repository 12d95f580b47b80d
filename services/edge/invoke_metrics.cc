#include "invoke_metrics.h"

#include "toolgate/core/runtime_names.h"

namespace toolgate::edge {
namespace {

std::vector<std::string> InvocationLabels(bool function_labels) {
  if (function_labels) return {"function_id", "version", "status_class", "runtime"};
  return {"status_class", "runtime"};
}

}  // namespace

std::string StatusClass(int status) {
  if (status < 100 || status > 599) return "other";
  return std::to_string(status / 100) + "xx";
}

InvokeMetrics::InvokeMetrics(InvokeMetricsOptions options, metrics::Registry& registry)
    : options_(options),
      invocations_(registry.Counter(
          "toolgate_invocations_total",
          "Invocations answered by this edge, by HTTP status class and runtime (\"none\" when "
          "no handler ran), and by function and version when --metrics-function-labels is on.",
          InvocationLabels(options.function_labels),
          options.function_labels ? options.max_functions : metrics::kDefaultMaxSeries)),
      duration_(registry.Histogram("toolgate_invoke_duration_seconds",
                                   "Time from an invocation's request to its answer at the edge.",
                                   {"status_class"})),
      function_duration_(
          options.function_labels
              ? &registry.Histogram("toolgate_function_duration_seconds",
                                    "Time from an invocation's request to its answer at the edge, "
                                    "by function (with --metrics-function-labels).",
                                    {"function_id"}, metrics::DefaultLatencyBuckets(),
                                    options.max_functions)
              : nullptr),
      platform_errors_(registry.Counter(
          "toolgate_platform_errors_total",
          "Invocations the platform answered with a problem (not the handler's response), by "
          "problem code.",
          {"code"}, 200)) {}

void InvokeMetrics::Record(const std::string& function_id, const std::string& requested_version,
                           const v1::InvokeReply& reply, int http_status, double seconds) {
  const std::string status_class = StatusClass(http_status);
  std::string runtime = "none";
  std::string version = requested_version.empty() ? "latest" : requested_version;
  if (reply.has_result()) {
    const v1::Summary& s = reply.result().summary();
    if (s.runtime() != v1::RUNTIME_UNSPECIFIED) runtime = core::RuntimeName(s.runtime());
    if (!s.version().empty()) version = s.version();
  }
  if (options_.function_labels) {
    invocations_.With({function_id, version, status_class, runtime}).Inc();
  } else {
    invocations_.With({status_class, runtime}).Inc();
  }
  duration_.With({status_class}).Observe(seconds);
  if (function_duration_ != nullptr) function_duration_->With({function_id}).Observe(seconds);
  if (reply.has_problem()) {
    platform_errors_.With({reply.problem().code().empty() ? "unknown" : reply.problem().code()})
        .Inc();
  }
}

}  // namespace toolgate::edge
