#include "toolgate/core/invoke_envelope.h"

#include "toolgate/base/json_writer.h"
#include "toolgate/core/runtime_names.h"

namespace toolgate::core {

std::string InvokeEnvelopeJson(const v1::InvokeSuccess& result) {
  const v1::Summary& s = result.summary();
  JsonWriter w;
  w.BeginObject().Field("statusCode", result.status_code()).Field("body", result.body());
  w.Key("summary")
      .BeginObject()
      .Field("runtime_ms", s.runtime_ms())
      .Field("memory_used_mb", s.memory_used_mb())
      .Field("compute_type", ComputeTypeName(s.compute_type()))
      .Field("execution_id", s.execution_id())
      .Field("egress_bytes", s.egress_bytes());
  w.Key("cost")
      .BeginObject()
      .Field("compute_micro_usd", s.cost().compute_micro_usd())
      .Field("function_micro_usd", s.cost().function_micro_usd())
      .Field("total_micro_usd", s.cost().total_micro_usd())
      .EndObject();
  w.EndObject().EndObject();
  return w.Take();
}

}  // namespace toolgate::core
