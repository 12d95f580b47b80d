#include "toolgate/registry/requests.h"

#include <set>

#include "request_fields.h"
#include "toolgate/base/crypto.h"
#include "toolgate/base/json_writer.h"
#include "toolgate/base/log.h"
#include "toolgate/core/egress_policy.h"
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

// The optional output_schema: an object schema (MCP's outputSchema describes structuredContent,
// an object), "" when absent.
std::optional<std::string> ReadOutputSchema(FieldReader& in) {
  auto e = in.Element("output_schema");
  if (!e) return std::string();
  std::string type;
  simdjson::dom::object obj;
  if (e->get_object().get(obj) != simdjson::SUCCESS ||
      (GetString(obj, "type", &type) != Field::kAbsent && type != "object")) {
    in.AddError("output_schema",
                "must be a JSON Schema of an object ({\"type\": \"object\", ...})");
    return std::nullopt;
  }
  std::string text = ToJson(*e);
  auto compiled = core::JsonSchema::Compile(text);
  if (!compiled.ok()) {
    in.AddError("output_schema",
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

// Checks text as a handler's source: not blank, no NUL characters (which no runtime's parser
// takes). field names where an error goes.
bool CheckSource(FieldReader& in, std::string_view field, std::string_view text) {
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    in.AddError(field, "must define service_handler");
    return false;
  }
  if (text.find('\0') != std::string_view::npos) {
    in.AddError(field, "must not contain NUL characters");
    return false;
  }
  return true;
}

std::optional<std::string> ReadCode(FieldReader& in) {
  auto e = in.Element("code");
  std::string_view code;
  if (e->get_string().get(code) != simdjson::SUCCESS) {
    in.AddError("code", "must be a string");
    return std::nullopt;
  }
  if (code.size() > kMaxCodeBytes) {
    in.AddError("code", "must be at most 1 MiB");
    return std::nullopt;
  }
  if (!CheckSource(in, "code", code)) return std::nullopt;
  return std::string(code);
}

// "egress": an array of at most kMaxEgressEntries strings, each one core::EgressList accepts.
// Every bad entry gets its own error ("egress[1]").
std::optional<std::vector<std::string>> ReadEgress(FieldReader& in) {
  auto e = in.Element("egress");
  if (!e) return std::vector<std::string>{};
  simdjson::dom::array items;
  if (e->get_array().get(items) != simdjson::SUCCESS) {
    in.AddError("egress",
                "must be an array of hosts (\"api.example.com\", \"*.example.com:8443\", "
                "\"*\")");
    return std::nullopt;
  }
  if (items.size() > kMaxEgressEntries) {
    in.AddError("egress", "must have at most " + std::to_string(kMaxEgressEntries) + " entries");
    return std::nullopt;
  }
  std::vector<std::string> entries;
  bool ok = true;
  for (simdjson::dom::element item : items) {
    const std::string field = "egress[" + std::to_string(entries.size()) + "]";
    std::string_view text;
    if (item.get_string().get(text) != simdjson::SUCCESS) {
      in.AddError(field, "must be a string");
      ok = false;
    } else if (auto rule = core::EgressList::Parse({std::string(text)}); !rule.ok()) {
      // The parser names the entry "egress[0]: ..." (a list of one); the field says which.
      std::string message = rule.status().message();
      if (size_t colon = message.find("]: ");
          message.rfind("egress[", 0) == 0 && colon != std::string::npos) {
        message.erase(0, colon + 3);
      }
      in.AddError(field, message);
      ok = false;
    }
    entries.emplace_back(text);
  }
  if (!ok) return std::nullopt;
  return entries;
}

// "handler": the bundle's entry file, a relative path inside it; the runtime's default when
// absent. Only a bundle has one.
std::optional<std::string> ReadHandler(FieldReader& in, bool bundle,
                                       const std::optional<std::string>& runtime) {
  if (!in.Has("handler")) {
    if (!runtime) return std::nullopt;
    return bundle ? DefaultBundleHandler(*runtime) : std::string();
  }
  auto text = in.String("handler", false, 1, kMaxHandlerPathChars);
  if (!text) return std::nullopt;
  if (!bundle) {
    in.AddError("handler", "names a bundle's entry file; single-file code has none");
    return std::nullopt;
  }
  auto path = CheckBundlePath(*text);
  if (!path.ok()) {
    in.AddError("handler", path.status().message());
    return std::nullopt;
  }
  return *path;
}

// The bundle's bytes: uploaded, or the base64 "bundle" field; nullopt with an error when the
// field is not base64 or is too large for the limit before decoding.
std::optional<std::string> ReadBundleBytes(FieldReader& in, const BundleCheck& bundles,
                                           std::optional<std::string_view> uploaded) {
  if (uploaded) return std::string(*uploaded);
  std::string_view text;
  if (in.Element("bundle")->get_string().get(text) != simdjson::SUCCESS) {
    in.AddError("bundle", "must be a string: a .tar.gz archive in base64");
    return std::nullopt;
  }
  // Refused before decoding: base64 takes 4 characters for 3 bytes.
  if (text.size() / 4 * 3 > bundles.limits().max_compressed_bytes + 3) {
    in.AddError("bundle", "is over " + std::to_string(bundles.limits().max_compressed_bytes >> 20) +
                              " MiB compressed");
    return std::nullopt;
  }
  std::string bytes;
  if (!Base64Decode(text, &bytes)) {
    in.AddError("bundle", "must be a .tar.gz archive in base64");
    return std::nullopt;
  }
  return bytes;
}

}  // namespace

constexpr size_t kMaxIconUrlChars = 2048;

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
  f.icon_url = in.String("icon_url", false, 0, kMaxIconUrlChars);
  if (f.icon_url && !f.icon_url->empty() &&
      (!f.icon_url->starts_with("https://") || f.icon_url->size() <= 8 ||
       f.icon_url->find_first_of(" \t\r\n\"<>") != std::string::npos)) {
    in.AddError("icon_url", "must be an https:// URL of an image, or \"\" for none");
  }
  if (!in.ok()) return in.problem();
  if (creating) {
    if (!f.icon_url) f.icon_url = "";
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

std::variant<v1::Problem, VersionDraft> ParseVersionRequest(
    std::string_view body, const SyntaxChecker& check, const BundleCheck& bundles,
    std::optional<std::string_view> uploaded_bundle) {
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
  const bool is_bundle = uploaded_bundle || in.Has("bundle");
  std::optional<std::string> code;
  std::optional<std::string> bundle;
  if (uploaded_bundle && in.Has("bundle")) {
    in.AddError("bundle", "is uploaded as the \"bundle\" part; the metadata may not hold one too");
  } else if (is_bundle && in.Has("code")) {
    in.AddError("code", "give either code or a bundle, not both");
  } else if (is_bundle) {
    bundle = ReadBundleBytes(in, bundles, uploaded_bundle);
  } else if (in.Has("code")) {
    code = ReadCode(in);
  } else {
    in.AddError("code", "is required (or a bundle)");
  }
  auto handler = ReadHandler(in, is_bundle, runtime);
  auto egress = ReadEgress(in);
  auto schema = ReadInputSchema(in);
  auto output_schema = ReadOutputSchema(in);
  auto keys = ReadDeclaredKeys(in);
  auto timeout = in.Int("timeout_ms", false, 1, kMaxTimeoutMs);
  auto memory = in.Int("memory_mb", false, 1, kMaxMemoryMb);
  auto examples = ReadExamples(in);
  auto price = in.Int("price_micro_usd", false, 0, kMaxPriceMicroUsd);
  if (!in.ok()) return in.problem();

  // The source compiled, and the field its errors go on.
  std::string_view source;
  std::string_view source_field = "code";
  if (bundle) {
    auto checked = bundles.Check(*bundle, *handler);
    if (!checked.ok()) {
      in.AddError("bundle", checked.status().message());
      return in.problem();
    }
    d.bundle_info = std::move(*checked);
    source_field = "handler";
    // A larger entry file is not read, nor checked: the check's cost grows with it, and its
    // mistakes still surface on the first call.
    if (d.bundle_info.handler_bytes <= kMaxHandlerReadBytes) {
      if (!CheckSource(in, source_field, d.bundle_info.handler_code)) return in.problem();
      source = d.bundle_info.handler_code;
    }
  } else {
    source = *code;
  }

  Status compiled = source.empty() ? Status::Ok() : check(*runtime, source);
  if (compiled.code() == Status::Code::kInvalidArgument) {
    in.AddError(source_field, bundle ? *handler + ": " + compiled.message() : compiled.message());
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
  if (code) d.code = std::move(*code);
  if (bundle) {
    d.bundle = std::move(*bundle);
    d.bundle_info.handler_code.clear();
    d.handler = std::move(*handler);
  }
  d.egress = std::move(*egress);
  d.input_schema_json = std::move(*schema);
  d.output_schema_json = std::move(*output_schema);
  d.declared_keys = std::move(*keys);
  d.timeout_ms = static_cast<int32_t>(timeout.value_or(kDefaultTimeoutMs));
  d.memory_mb = static_cast<int32_t>(memory.value_or(DefaultMemoryMb(d.runtime)));
  d.examples_json = std::move(*examples);
  d.price_micro_usd = price;
  return d;
}

}  // namespace toolgate::registry
