#include "toolgate/registry/views.h"

#include <cstdio>

#include "toolgate/base/json_writer.h"
#include "toolgate/base/time.h"
#include "toolgate/registry/rating.h"

namespace toolgate::registry {
namespace {

void StringArray(JsonWriter& w, const std::vector<std::string>& values) {
  w.BeginArray();
  for (const auto& v : values) w.String(v);
  w.EndArray();
}

void Organization(JsonWriter& w, const std::string& id, const std::string& name) {
  w.Key("organization").BeginObject().Field("id", id).Field("name", name).EndObject();
}

// egress as published, and handler and bundle {digest, size_bytes, files} for a bundle (null
// for single-file code).
void CodeFields(JsonWriter& w, const VersionRecord& v) {
  w.Key("egress");
  StringArray(w, v.egress);
  if (v.bundle_digest.empty()) {
    w.Key("handler").Null().Key("bundle").Null();
    return;
  }
  w.Field("handler", v.handler)
      .Key("bundle")
      .BeginObject()
      .Field("digest", v.bundle_digest)
      .Field("size_bytes", v.bundle_size_bytes)
      .Field("files", v.bundle_files)
      .EndObject();
}

// The fields a version contributes to a function detail, or nulls.
void LatestFields(JsonWriter& w, const VersionRecord* v) {
  if (v == nullptr) {
    for (const char* key :
         {"latest_version", "runtime", "compute_type", "input_schema", "declared_keys", "examples",
          "timeout_ms", "memory_mb", "egress", "handler", "bundle"}) {
      w.Key(key).Null();
    }
    return;
  }
  w.Field("latest_version", v->version)
      .Field("runtime", v->runtime)
      .Field("compute_type", v->compute_type)
      .Key("input_schema")
      .Raw(v->input_schema_json)
      .Key("declared_keys");
  StringArray(w, v->declared_keys);
  w.Key("examples")
      .Raw(v->examples_json)
      .Field("timeout_ms", v->timeout_ms)
      .Field("memory_mb", v->memory_mb);
  CodeFields(w, *v);
}

void Summary(JsonWriter& w, const FunctionSummary& s) {
  w.BeginObject()
      .Field("function_id", s.function_id)
      .Field("name", s.name)
      .Field("description", s.description);
  Organization(w, s.org_id, s.org_name);
  if (s.latest_version) {
    w.Field("latest_version", *s.latest_version)
        .Field("runtime", s.runtime)
        .Field("compute_type", s.compute_type);
  } else {
    w.Key("latest_version").Null().Key("runtime").Null().Key("compute_type").Null();
  }
  w.Field("price_micro_usd", s.price_micro_usd)
      .Field("visibility", s.visibility)
      .Field("mcp", s.mcp)
      .EndObject();
}

}  // namespace

void WriteLastSevenDays(JsonWriter& w, int64_t executions, int64_t succeeded, int64_t p50_ms) {
  w.Key("last_7_days").BeginObject().Field("executions", executions);
  if (executions > 0) {
    // Three decimals, rounded down so that a failure never shows as 1.000: 0.987.
    const int64_t permille = succeeded * 1000 / executions;
    char rate[48];
    std::snprintf(rate, sizeof rate, "%lld.%03lld", static_cast<long long>(permille / 1000),
                  static_cast<long long>(permille % 1000));
    w.Key("success_rate").Raw(rate);
  } else {
    w.Key("success_rate").Null();
  }
  if (p50_ms >= 0) {
    w.Field("p50_ms", p50_ms);
  } else {
    w.Key("p50_ms").Null();
  }
  w.EndObject();
}

std::string FunctionDetailJson(const FunctionRecord& f, const std::vector<VersionRecord>& versions,
                               const VersionRecord* latest, const WeekStats* stats) {
  JsonWriter w;
  w.BeginObject()
      .Field("function_id", f.id)
      .Field("name", f.name)
      .Field("description", f.description)
      .Field("overview", f.overview)
      .Field("category", f.category)
      .Field("sector", f.sector)
      .Key("tags");
  StringArray(w, f.tags);
  // price_micro_usd is what a call on "latest" costs; the function's own price is only the
  // default of the next version published.
  w.Field("visibility", f.visibility)
      .Field("price_micro_usd", latest ? latest->price_micro_usd : f.price_micro_usd)
      .Field("default_price_micro_usd", f.price_micro_usd)
      .Field("mcp", f.mcp)
      .Field("icon_url", f.icon_url);
  Organization(w, f.org_id, f.org_name);
  w.Key("versions").BeginArray();
  for (const auto& v : versions) {
    w.BeginObject()
        .Field("version", v.version)
        .Field("deprecated", v.deprecated)
        .Field("runtime", v.runtime)
        .Field("compute_type", v.compute_type)
        .Field("published_at", FormatRfc3339(v.published_at_ms))
        .Field("price_micro_usd", v.price_micro_usd)
        .Key("egress");
    StringArray(w, v.egress);
    w.EndObject();
  }
  w.EndArray();
  LatestFields(w, latest);
  w.Key("rating")
      .BeginObject()
      .Key("average")
      .Raw(FormatAverage(f.rating_sum, f.rating_count))
      .Field("count", f.rating_count)
      .EndObject();
  w.Field("executions", f.executions);
  if (stats != nullptr) {
    WriteLastSevenDays(w, stats->executions, stats->succeeded, MedianUpperBoundMs(stats->latency));
  }
  w.Field("created_at", FormatRfc3339(f.created_at_ms))
      .Field("updated_at", FormatRfc3339(f.updated_at_ms))
      .EndObject();
  return w.Take();
}

std::string VersionDetailJson(const VersionRecord& v, bool mcp) {
  JsonWriter w;
  w.BeginObject()
      .Field("function_id", v.function_id)
      .Field("version", v.version)
      .Field("mcp", mcp)
      .Field("runtime", v.runtime)
      .Field("compute_type", v.compute_type)
      .Key("input_schema")
      .Raw(v.input_schema_json)
      .Key("output_schema")
      .Raw(v.output_schema_json.empty() ? "null" : v.output_schema_json)
      .Key("declared_keys");
  StringArray(w, v.declared_keys);
  w.Key("examples")
      .Raw(v.examples_json)
      .Field("timeout_ms", v.timeout_ms)
      .Field("memory_mb", v.memory_mb)
      .Field("price_micro_usd", v.price_micro_usd);
  CodeFields(w, v);
  w.Field("published_at", FormatRfc3339(v.published_at_ms)).EndObject();
  return w.Take();
}

std::string WorkspaceJson(const std::vector<FunctionSummary>& owned,
                          const std::vector<FunctionSummary>& added) {
  JsonWriter w;
  w.BeginObject().Key("owned").BeginArray();
  for (const auto& s : owned) Summary(w, s);
  w.EndArray().Key("added").BeginArray();
  for (const auto& s : added) Summary(w, s);
  w.EndArray().EndObject();
  return w.Take();
}

}  // namespace toolgate::registry
