#include "toolgate/registry/requests.h"

#include <set>

#include "request_fields.h"
#include "toolgate/base/json_writer.h"
#include "toolgate/base/log.h"
#include "toolgate/core/env_keys.h"
#include "toolgate/core/json_schema.h"
#include "toolgate/core/problem.h"

namespace toolgate::registry {
namespace {

constexpr size_t kMaxKeyNameChars = 128;
constexpr size_t kMaxExampleTitleChars = 200;

std::optional<std::string> ReadVersion(FieldReader& in, core::Version* parsed) {
  auto e = in.Element("version");
  std::string_view text;
  if (!e) {
    in.AddError("version", "is required");
    return std::nullopt;
  }
  auto v = e->get_string().get(text) == simdjson::SUCCESS ? core::ParseVersion(text) : std::nullopt;
  if (!v) {
    in.AddError("version",
                "must be a string of 1 to 4 dot-separated numbers of up to 9 digits, like 1.0.0");
    return std::nullopt;
  }
  *parsed = *v;
  return std::string(text);
}

std::optional<std::vector<std::string>> ReadDeclaredKeys(FieldReader& in) {
  if (!in.Has("declared_keys")) return std::vector<std::string>{};
  auto keys = in.StringArray("declared_keys", kMaxDeclaredKeys, kMaxKeyNameChars);
  if (!keys) return std::nullopt;
  for (const auto& k : *keys) {
    if (!core::IsValidEnvKeyName(k)) {
      in.AddError("declared_keys", "\"" + k + "\" must match [A-Za-z_][A-Za-z0-9_]*");
      return std::nullopt;
    }
  }
  return keys;
}

std::optional<std::string> ReadInputSchema(FieldReader& in) {
  auto e = in.Element("input_schema");
  if (!e) return std::string(R"({"type":"object"})");
  if (!e->is_object()) {
    in.AddError("input_schema", "must be a JSON object (a JSON Schema)");
    return std::nullopt;
  }
  std::string text = ToJson(*e);
  auto compiled = core::JsonSchema::Compile(text);
  if (!compiled.ok()) {
    in.AddError("input_schema",
                "is not a schema Toolgate can check: " + compiled.status().message());
    return std::nullopt;
  }
  return text;
}

std::optional<std::string> ReadExamples(FieldReader& in) {
  auto e = in.Element("examples");
  if (!e) return std::string("[]");
  simdjson::dom::array items;
  if (e->get_array().get(items) != simdjson::SUCCESS) {
    in.AddError("examples", "must be an array of {\"title\": string, \"event\": object|string}");
    return std::nullopt;
  }
  if (items.size() > kMaxExamples) {
    in.AddError("examples", "must have at most " + std::to_string(kMaxExamples) + " items");
    return std::nullopt;
  }
  JsonWriter w;
  w.BeginArray();
  size_t index = 0;
  for (simdjson::dom::element item : items) {
    const std::string field = "examples[" + std::to_string(index++) + "]";
    simdjson::dom::object obj;
    std::string_view title;
    simdjson::dom::element event;
    if (item.get_object().get(obj) != simdjson::SUCCESS) {
      in.AddError(field, "must be an object {\"title\": string, \"event\": object|string}");
      return std::nullopt;
    }
    if (obj["title"].get_string().get(title) != simdjson::SUCCESS || title.empty() ||
        CharCount(title) > kMaxExampleTitleChars) {
      in.AddError(field + ".title", "must be a string of 1 to " +
                                        std::to_string(kMaxExampleTitleChars) + " characters");
      return std::nullopt;
    }
    if (obj["event"].get(event) != simdjson::SUCCESS || !(event.is_object() || event.is_string())) {
      in.AddError(field + ".event", "must be a JSON object or a string, as in an invocation");
      return std::nullopt;
    }
    w.BeginObject().Field("title", title).Key("event").Raw(ToJson(event)).EndObject();
  }
  w.EndArray();
  return w.Take();
}

std::optional<std::string> ReadCode(FieldReader& in) {
  auto e = in.Element("code");
  std::string_view code;
  if (!e) {
    in.AddError("code", "is required");
    return std::nullopt;
  }
  if (e->get_string().get(code) != simdjson::SUCCESS) {
    in.AddError("code", "must be a string");
    return std::nullopt;
  }
  if (code.size() > kMaxCodeBytes) {
    in.AddError("code", "must be at most 1 MiB");
    return std::nullopt;
  }
  if (code.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    in.AddError("code", "must define service_handler");
    return std::nullopt;
  }
  if (code.find('\0') != std::string_view::npos) {
    in.AddError("code", "must not contain NUL characters");
    return std::nullopt;
  }
  return std::string(code);
}

}  // namespace

std::variant<v1::Problem, FunctionFields> ParseFunctionFields(std::string_view body,
                                                              bool creating) {
  simdjson::dom::object object;
  v1::Problem problem;
  auto doc = ParseObjectBody(body, &object, &problem);
  if (!doc) return problem;
  FieldReader in(object);
  FunctionFields f;
  f.name = in.String("name", creating, 1, kMaxNameChars);
  f.description = in.String("description", creating, 1, kMaxDescriptionChars);
  f.overview = in.String("overview", false, 0, kMaxOverviewChars);
  f.category = in.String("category", creating, 1, kMaxCategoryChars);
  f.sector = in.String("sector", false, 0, kMaxCategoryChars);
  f.tags = in.StringArray("tags", kMaxTags, kMaxTagChars);
  f.visibility = in.OneOf("visibility", creating, {"public", "private"});
  f.price_micro_usd = in.Int("price_micro_usd", creating, 0, kMaxPriceMicroUsd);
  f.mcp = in.Bool("mcp");
  if (!in.ok()) return in.problem();
  if (creating) {
    if (!f.overview) f.overview = "";
    if (!f.sector) f.sector = "";
    if (!f.tags) f.tags.emplace();
    if (!f.mcp) f.mcp = false;
  }
  return f;
}

int32_t DefaultMemoryMb(std::string_view runtime) {
  return runtime == "python" ? 256 : 128;
}

std::variant<v1::Problem, VersionDraft> ParseVersionRequest(std::string_view body,
                                                            const SyntaxChecker& check) {
  simdjson::dom::object object;
  v1::Problem problem;
  auto doc = ParseObjectBody(body, &object, &problem);
  if (!doc) return problem;
  FieldReader in(object);
  VersionDraft d;
  auto version = ReadVersion(in, &d.parsed);
  auto runtime = in.OneOf("runtime", true, {"python", "javascript", "lua"});
  auto compute = in.OneOf("compute_type", true, {"CPU", "GPU"});
  if (compute == "GPU" && runtime && runtime != "python") {
    in.AddError("compute_type", "GPU is available for the python runtime only");
  }
  auto code = ReadCode(in);
  auto schema = ReadInputSchema(in);
  auto keys = ReadDeclaredKeys(in);
  auto timeout = in.Int("timeout_ms", false, 1, kMaxTimeoutMs);
  auto memory = in.Int("memory_mb", false, 1, kMaxMemoryMb);
  auto examples = ReadExamples(in);
  auto price = in.Int("price_micro_usd", false, 0, kMaxPriceMicroUsd);
  if (!in.ok()) return in.problem();

  Status compiled = check(*runtime, *code);
  if (compiled.code() == Status::Code::kInvalidArgument) {
    in.AddError("code", compiled.message());
  } else if (compiled.code() == Status::Code::kNotFound) {
    in.AddError("runtime", *runtime + " is not available on this server");
  } else if (compiled.code() == Status::Code::kTimeout) {
    // Every turn stayed busy for a check's time limit; a turn frees as soon as any check ends.
    v1::Problem busy = core::MakeProblem(
        "service_unavailable", "Every syntax check is busy with other publishes; retry shortly.");
    busy.set_retry_after_s(kSyntaxCheckRetryAfterS);
    return busy;
  } else if (!compiled.ok()) {
    log::Error("syntax check could not run").Str("error", compiled.ToString());
    return core::MakeProblem("service_unavailable", "The code could not be checked; retry.");
  }
  if (!in.ok()) return in.problem();

  d.version = std::move(*version);
  d.runtime = std::move(*runtime);
  d.compute_type = std::move(*compute);
  d.code = std::move(*code);
  d.input_schema_json = std::move(*schema);
  d.declared_keys = std::move(*keys);
  d.timeout_ms = static_cast<int32_t>(timeout.value_or(kDefaultTimeoutMs));
  d.memory_mb = static_cast<int32_t>(memory.value_or(DefaultMemoryMb(d.runtime)));
  d.examples_json = std::move(*examples);
  d.price_micro_usd = price;
  return d;
}

}  // namespace toolgate::registry
