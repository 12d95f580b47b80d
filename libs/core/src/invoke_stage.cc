#include "toolgate/core/invoke_stage.h"

#include "toolgate/base/log.h"

namespace toolgate::core {

std::optional<StageInput> OpenInvokeJob(const bus::Message& m) {
  StageInput in;
  if (!in.job.ParseFromString(m.data)) {
    log::Error("malformed InvokeJob").Str("subject", m.subject);
    return std::nullopt;
  }
  in.reply = in.job.edge_reply().empty() ? m.reply : in.job.edge_reply();
  if (in.reply.empty()) {
    log::Error("InvokeJob without a reply subject").Str("request_id", in.job.request_id());
    return std::nullopt;
  }
  return in;
}

trace::TraceContext StageTrace(const bus::Message& m, const v1::InvokeJob& job) {
  return trace::ContinueOrStart(m.traceparent.empty() ? job.traceparent() : m.traceparent);
}

void AnnotateStageSpan(trace::Span& span, const v1::InvokeJob& job) {
  span.SetAttribute("faas.invocation_id", job.execution_id());
  span.SetAttribute("messaging.system", std::string("nats"));
}

void RecordHop(v1::InvokeJob& job, const trace::Span& span) {
  v1::Hop* hop = job.add_hops();
  hop->set_name(span.name());
  hop->set_start_unix_us(span.start_unix_us());
  hop->set_duration_us(span.elapsed_us());
}

}  // namespace toolgate::core
