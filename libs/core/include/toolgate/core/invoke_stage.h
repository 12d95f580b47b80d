// What every invoke stage does first with a message of the chain: open the InvokeJob, find where
// its answer goes, and continue its trace.
#pragma once

#include <optional>
#include <string>

#include "toolgate/bus/bus.h"
#include "toolgate/trace/trace.h"
#include "toolgate/v1/toolgate.pb.h"

namespace toolgate::core {

struct StageInput {
  v1::InvokeJob job;
  std::string reply;  // the edge's reply subject (the job's, else the message's)
};

// The job of m, or nullopt (logged) when m is not an InvokeJob or has no reply subject: such a
// message cannot be answered, so the stage drops it.
std::optional<StageInput> OpenInvokeJob(const bus::Message& m);

// The stage's trace context: a child of the message's traceparent header, else of the job's.
trace::TraceContext StageTrace(const bus::Message& m, const v1::InvokeJob& job);

// Sets the attributes every hop of the invoke chain carries on its span: faas.invocation_id
// (the execution id) and messaging.system ("nats").
void AnnotateStageSpan(trace::Span& span, const v1::InvokeJob& job);

// Appends span's hop (its name, start and time so far) to job.hops: called just before a stage
// passes the job on, so that the execution record carries each stage's time.
void RecordHop(v1::InvokeJob& job, const trace::Span& span);

}  // namespace toolgate::core
