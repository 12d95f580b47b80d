// Validation of the registry's management requests (contract section 6). Pure functions of the
// request body: each returns the validated value, or the problem that answers the request (400
// for a body that is not a JSON object, 422 with one field error per bad field).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "toolgate/core/version.h"
#include "toolgate/registry/bundle_check.h"
#include "toolgate/registry/syntax_check.h"
#include "toolgate/v1/toolgate.pb.h"

namespace toolgate::registry {

// Limits of a function's fields, in characters.
inline constexpr size_t kMaxNameChars = 100;
inline constexpr size_t kMaxDescriptionChars = 2'000;
inline constexpr size_t kMaxOverviewChars = 100'000;
inline constexpr size_t kMaxCategoryChars = 64;
inline constexpr size_t kMaxTags = 20;
inline constexpr size_t kMaxTagChars = 32;
inline constexpr int64_t kMaxPriceMicroUsd = 1'000'000'000'000;  // 1,000,000 USD

// The fields of POST /functions (all set) or PATCH /functions/{id} (those present).
struct FunctionFields {
  std::optional<std::string> name;
  std::optional<std::string> description;
  std::optional<std::string> overview;
  std::optional<std::string> category;
  std::optional<std::string> sector;
  std::optional<std::vector<std::string>> tags;
  std::optional<std::string> visibility;  // "public" | "private"
  std::optional<int64_t> price_micro_usd;
  std::optional<bool> mcp;
  std::optional<std::string> icon_url;  // an https:// URL, or "" for none
};

// creating: name, description, category, visibility and price_micro_usd are required, and the
// optional fields get their defaults ("", [], false). Unknown members are ignored.
std::variant<v1::Problem, FunctionFields> ParseFunctionFields(std::string_view body, bool creating);

// Limits of a version.
inline constexpr size_t kMaxCodeBytes = 1 << 20;  // 1 MiB
inline constexpr int64_t kDefaultTimeoutMs = 30'000;
inline constexpr int64_t kMaxTimeoutMs = 900'000;
inline constexpr int64_t kMaxMemoryMb = 4'096;
inline constexpr size_t kMaxDeclaredKeys = 32;
inline constexpr size_t kMaxExamples = 20;
inline constexpr size_t kMaxEgressEntries = 100;
inline constexpr size_t kMaxHandlerPathChars = 256;

// A validated POST /functions/{id}/versions.
struct VersionDraft {
  std::string version;  // as sent
  core::Version parsed;
  std::string runtime;       // "python" | "javascript" | "lua"
  std::string compute_type;  // "CPU" | "GPU"
  std::string code;          // "" for a bundle
  // Set for a bundle: the archive's bytes as uploaded, what BundleCheck found in it (its
  // handler_code cleared) and the entry file, normalised ("src/main.py"; the runtime's default
  // when the request named none).
  std::string bundle;
  BundleInfo bundle_info;
  std::string handler;
  // Where the handler may connect, exactly as published (checked by core::EgressList::Parse).
  std::vector<std::string> egress;
  std::string input_schema_json;  // a JSON object; {"type":"object"} by default
  // The JSON Schema of the result's body (an object schema); "" when the version declares none.
  std::string output_schema_json;
  std::vector<std::string> declared_keys;
  int32_t timeout_ms = 0;
  int32_t memory_mb = 0;
  std::string examples_json;  // [{"title": ..., "event": ...}]; [] by default
  // The version's price per call, fixed for good; nullopt: the function's price at publishing.
  std::optional<int64_t> price_micro_usd;
};

// The default memory limit of a runtime: 256 MB for python, 128 MB otherwise.
int32_t DefaultMemoryMb(std::string_view runtime);

// Retry-After of a publish that found every syntax check turn busy.
inline constexpr int kSyntaxCheckRetryAfterS = 1;

// Validates every field, then, when all are valid, compiles the code with check (never runs
// it): a compile error, or a check past its memory or time limit, is a 422 on "code" with the
// check's message; a runtime whose toolchain is missing a 422 on "runtime"; no turn for the
// check (Timeout) a 503 with Retry-After; a check that could not run a 503.
//
// The code is either "code" (one file) or a bundle: "bundle" (base64 of a .tar.gz) in body, or
// uploaded_bundle (the raw archive of a multipart/form-data upload, body being its "metadata"
// part), with an optional "handler". A bundle refused by bundles is a 422 on "bundle" naming the
// entry and the reason; its handler is compiled like "code" when it is at most kMaxCodeBytes
// (larger entry files are not checked), its errors reported on "handler". "egress" must be at
// most kMaxEgressEntries entries that core::EgressList::Parse accepts; each bad one is a 422 on
// "egress[i]".
std::variant<v1::Problem, VersionDraft> ParseVersionRequest(
    std::string_view body, const SyntaxChecker& check, const BundleCheck& bundles = BundleCheck(),
    std::optional<std::string_view> uploaded_bundle = std::nullopt);

}  // namespace toolgate::registry
