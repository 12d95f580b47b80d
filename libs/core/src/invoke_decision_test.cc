#include "toolgate/core/invoke_decision.h"

#include <gtest/gtest.h>

namespace toolgate::core {
namespace {

constexpr const char* kFn = "6f1c2b9e-3d4a-4b5c-8d7e-9f0a1b2c3d4e";
constexpr const char* kOwner = "org-owner";
constexpr const char* kCaller = "org-caller";

PublishedVersion Version(const char* name, std::vector<std::string> keys = {}) {
  PublishedVersion v;
  v.version = name;
  v.parsed = *core::ParseVersion(name);
  v.runtime = "python";
  v.compute_type = "GPU";
  v.timeout_ms = 5000;
  v.memory_mb = 512;
  v.declared_keys = std::move(keys);
  v.price_micro_usd = 2500;
  return v;
}

CachedFunction Function(bool is_public, std::vector<PublishedVersion> versions) {
  CachedFunction f;
  f.function_id = kFn;
  f.org_id = kOwner;
  f.is_public = is_public;
  f.price_micro_usd = 2500;
  f.mcp = true;
  f.versions = std::move(versions);
  return f;
}

v1::InvokeJob Job(const char* org, const char* version = "") {
  v1::InvokeJob job;
  job.set_function_id(kFn);
  job.set_version(version);
  job.mutable_principal()->set_org_id(org);
  return job;
}

void SetEnvKeys(v1::InvokeJob* job, const char* header) {
  job->set_env_keys_present(true);
  job->set_env_keys_header(header);
}

// The problem's code, or "ok:<version>" when the decision is to run.
std::string Outcome(const v1::InvokeJob& job, const CachedFunction* f, bool added) {
  InvokeDecision d = DecideInvoke(job, f, added);
  if (const auto* p = std::get_if<v1::Problem>(&d)) return p->code();
  return "ok:" + std::get<v1::FunctionVersion>(d).version();
}

std::string Detail(const v1::InvokeJob& job, const CachedFunction* f, bool added) {
  InvokeDecision d = DecideInvoke(job, f, added);
  const auto* p = std::get_if<v1::Problem>(&d);
  return p ? p->detail() : "";
}

TEST(DecideInvoke, Row3UnknownFunctionIs404) {
  EXPECT_EQ(Outcome(Job(kCaller), nullptr, false), "function_not_found");
  EXPECT_EQ(std::get<v1::Problem>(DecideInvoke(Job(kCaller), nullptr, false)).status(), 404);
}

TEST(DecideInvoke, Row3PrivateFunctionOfAnotherOrgIs404EvenWhenAdded) {
  auto f = Function(false, {Version("1.0")});
  EXPECT_EQ(Outcome(Job(kCaller), &f, true), "function_not_found");
  EXPECT_EQ(Outcome(Job(kCaller, "9.9"), &f, false), "function_not_found");  // before version
  EXPECT_EQ(Outcome(Job(kOwner), &f, false), "ok:1.0");
}

TEST(DecideInvoke, Row3NoPublishedVersionIs404VersionNotFound) {
  auto f = Function(true, {});
  EXPECT_EQ(Outcome(Job(kOwner), &f, false), "version_not_found");
  EXPECT_EQ(std::get<v1::Problem>(DecideInvoke(Job(kOwner), &f, false)).status(), 404);
}

TEST(DecideInvoke, Row3VersionMustBeAPublishedStringExactly) {
  auto f = Function(true, {Version("1.0"), Version("1.10")});
  EXPECT_EQ(Outcome(Job(kOwner, "1.0"), &f, false), "ok:1.0");
  EXPECT_EQ(Outcome(Job(kOwner, "1.0.0"), &f, false), "version_not_found");
  EXPECT_EQ(Outcome(Job(kOwner, "2.0"), &f, false), "version_not_found");
  EXPECT_EQ(Outcome(Job(kOwner, "latest"), &f, false), "version_not_found");
}

TEST(DecideInvoke, EmptyVersionMeansLatestPublished) {
  auto f = Function(true, {Version("1.9"), Version("1.10"), Version("1.2.3")});
  EXPECT_EQ(Outcome(Job(kOwner), &f, false), "ok:1.10");
}

TEST(DecideInvoke, Row3VersionCheckComesBeforeRow4) {
  auto f = Function(true, {Version("1.0")});
  EXPECT_EQ(Outcome(Job(kCaller, "2.0"), &f, false), "version_not_found");
}

TEST(DecideInvoke, Row4PublicFunctionOfAnotherOrgMustBeAdded) {
  auto f = Function(true, {Version("1.0")});
  EXPECT_EQ(Outcome(Job(kCaller), &f, false), "function_not_added");
  InvokeDecision d = DecideInvoke(Job(kCaller), &f, false);
  EXPECT_EQ(std::get<v1::Problem>(d).status(), 403);
  EXPECT_EQ(Detail(Job(kCaller), &f, false),
            std::string("POST /api/v1/workspace/tools {\"function_id\": \"") + kFn + "\"} adds it");
  EXPECT_EQ(Outcome(Job(kCaller), &f, true), "ok:1.0");
  EXPECT_EQ(Outcome(Job(kOwner), &f, false), "ok:1.0");  // the owner needs no add
}

TEST(DecideInvoke, Row4ComesBeforeRow5) {
  auto f = Function(true, {Version("1.0")});
  auto job = Job(kCaller);
  job.set_body_check(v1::BODY_INVALID_JSON);
  EXPECT_EQ(Outcome(job, &f, false), "function_not_added");
}

TEST(DecideInvoke, Row5BodyChecks) {
  auto f = Function(true, {Version("1.0")});
  auto job = Job(kOwner);
  job.set_body_check(v1::BODY_INVALID_JSON);
  EXPECT_EQ(Outcome(job, &f, false), "invalid_json");
  job.set_body_check(v1::BODY_MISSING_EVENT);
  EXPECT_EQ(Outcome(job, &f, false), "missing_event");
  job.set_body_check(v1::BODY_INVALID_EVENT);
  EXPECT_EQ(Outcome(job, &f, false), "invalid_event");
  EXPECT_EQ(std::get<v1::Problem>(DecideInvoke(job, &f, false)).status(), 400);
  job.set_body_check(v1::BODY_EVENT_TOO_DEEP);
  v1::Problem deep = std::get<v1::Problem>(DecideInvoke(job, &f, false));
  EXPECT_EQ(deep.status(), 400);
  EXPECT_EQ(deep.code(), "invalid_event");
  EXPECT_NE(deep.detail().find("deeper than 64 levels"), std::string::npos) << deep.detail();
}

TEST(DecideInvoke, Row5ComesBeforeRow6) {
  auto f = Function(true, {Version("1.0", {"API_KEY"})});
  auto job = Job(kOwner);
  job.set_body_check(v1::BODY_MISSING_EVENT);
  SetEnvKeys(&job, "not a header");
  EXPECT_EQ(Outcome(job, &f, false), "missing_event");
}

TEST(DecideInvoke, Row6MalformedHeader) {
  auto f = Function(true, {Version("1.0", {"API_KEY"})});
  auto job = Job(kOwner);
  SetEnvKeys(&job, "API_KEY");
  EXPECT_EQ(Outcome(job, &f, false), "invalid_env_keys");
  SetEnvKeys(&job, "API_KEY=a, API_KEY=b");
  EXPECT_EQ(Outcome(job, &f, false), "invalid_env_keys");
  SetEnvKeys(&job, "1BAD=x");
  InvokeDecision d = DecideInvoke(job, &f, false);
  EXPECT_EQ(std::get<v1::Problem>(d).code(), "invalid_env_keys");
  EXPECT_NE(std::get<v1::Problem>(d).detail().find("1BAD"), std::string::npos);
}

TEST(DecideInvoke, Row6MalformedHeaderIsRejectedEvenWhenNothingIsDeclared) {
  auto f = Function(true, {Version("1.0")});
  auto job = Job(kOwner);
  SetEnvKeys(&job, "=,=");
  EXPECT_EQ(Outcome(job, &f, false), "invalid_env_keys");
}

TEST(DecideInvoke, Row6DeclaredKeyNotMapped) {
  auto f = Function(true, {Version("1.0", {"API_KEY", "DB_URL"})});
  auto job = Job(kOwner);
  EXPECT_EQ(Outcome(job, &f, false), "missing_env_key");  // header absent
  EXPECT_NE(Detail(job, &f, false).find("API_KEY"), std::string::npos);
  SetEnvKeys(&job, "   ");  // present but blank counts as absent
  EXPECT_EQ(Outcome(job, &f, false), "missing_env_key");
  SetEnvKeys(&job, "API_KEY=s1");
  EXPECT_EQ(Outcome(job, &f, false), "missing_env_key");
  EXPECT_NE(Detail(job, &f, false).find("DB_URL"), std::string::npos);
}

TEST(DecideInvoke, Row6MissingComesBeforeUndeclared) {
  auto f = Function(true, {Version("1.0", {"API_KEY"})});
  auto job = Job(kOwner);
  SetEnvKeys(&job, "OTHER=s1");
  EXPECT_EQ(Outcome(job, &f, false), "missing_env_key");
}

TEST(DecideInvoke, Row6UndeclaredName) {
  auto f = Function(true, {Version("1.0", {"API_KEY"})});
  auto job = Job(kOwner);
  SetEnvKeys(&job, "API_KEY=s1, EXTRA=s2");
  EXPECT_EQ(Outcome(job, &f, false), "undeclared_env_key");
  EXPECT_NE(Detail(job, &f, false).find("EXTRA"), std::string::npos);

  auto none = Function(true, {Version("1.0")});
  SetEnvKeys(&job, "API_KEY=s1");
  EXPECT_EQ(Outcome(job, &none, false), "undeclared_env_key");
}

TEST(DecideInvoke, Row6BlankHeaderWithNothingDeclaredIsFine) {
  auto f = Function(true, {Version("1.0")});
  auto job = Job(kOwner);
  SetEnvKeys(&job, "");
  EXPECT_EQ(Outcome(job, &f, false), "ok:1.0");
}

TEST(DecideInvoke, SuccessFillsTheFunctionVersion) {
  auto f = Function(true, {Version("1.0"), Version("2.0", {"API_KEY"})});
  auto job = Job(kCaller);
  SetEnvKeys(&job, " API_KEY = 0b4e ");
  InvokeDecision d = DecideInvoke(job, &f, true);
  ASSERT_TRUE(std::holds_alternative<v1::FunctionVersion>(d));
  const auto& v = std::get<v1::FunctionVersion>(d);
  EXPECT_EQ(v.function_id(), kFn);
  EXPECT_EQ(v.version(), "2.0");
  EXPECT_EQ(v.owner_org_id(), kOwner);
  EXPECT_EQ(v.runtime(), "python");
  EXPECT_EQ(v.compute_type(), "GPU");
  EXPECT_EQ(v.price_micro_usd(), 2500);
  EXPECT_EQ(v.timeout_ms(), 5000);
  EXPECT_EQ(v.memory_mb(), 512);
  ASSERT_EQ(v.declared_keys_size(), 1);
  EXPECT_EQ(v.declared_keys(0), "API_KEY");
  EXPECT_TRUE(v.mcp());
  EXPECT_EQ(v.egress_size(), 0);
  EXPECT_EQ(v.bundle_digest(), "");
  EXPECT_EQ(v.handler(), "");
}

TEST(DecideInvoke, ABundleVersionCarriesItsEgressDigestAndHandler) {
  PublishedVersion bundled = Version("1.0");
  bundled.egress = {"api.open-meteo.com", "*.example.com:8443"};
  bundled.bundle_digest = std::string(64, 'a');
  bundled.handler = "src/main.py";
  auto f = Function(false, {bundled});
  InvokeDecision d = DecideInvoke(Job(kOwner), &f, false);
  ASSERT_TRUE(std::holds_alternative<v1::FunctionVersion>(d));
  const auto& v = std::get<v1::FunctionVersion>(d);
  ASSERT_EQ(v.egress_size(), 2);
  EXPECT_EQ(v.egress(0), "api.open-meteo.com");
  EXPECT_EQ(v.egress(1), "*.example.com:8443");
  EXPECT_EQ(v.bundle_digest(), std::string(64, 'a'));
  EXPECT_EQ(v.handler(), "src/main.py");
}

TEST(DecideInvoke, Row5TheEventMustMatchTheVersionsInputSchema) {
  PublishedVersion v = Version("1.0", {"API_TOKEN"});
  v.input_schema = *core::JsonSchema::Compile(
      R"({"type":"object","required":["city"],"properties":{"days":{"type":"integer"}}})");
  CachedFunction f = Function(false, {v});
  v1::InvokeJob job = Job(kOwner);
  job.set_event_json(R"({"days":"two"})");
  InvokeDecision d = DecideInvoke(job, &f, false);
  const auto* p = std::get_if<v1::Problem>(&d);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->code(), "invalid_event");
  ASSERT_EQ(p->errors_size(), 2);
  EXPECT_EQ(p->errors(0).field(), "/event/city");
  EXPECT_EQ(p->errors(0).message(), "is required");
  EXPECT_EQ(p->errors(1).field(), "/event/days");
  EXPECT_EQ(p->errors(1).message(), "must be an integer");
  // Row 5 before row 6: the missing declared key is not what the caller hears first.
  job.set_event_json(R"({"city":"Oslo","days":2})");
  EXPECT_EQ(Outcome(job, &f, false), "missing_env_key");
  SetEnvKeys(&job, "API_TOKEN=a1b2c3d4-0000-4000-8000-000000000000");
  EXPECT_EQ(Outcome(job, &f, false), "ok:1.0");
  // A string event is the tool's to parse: the schema describes object events.
  job.set_event_json(R"("{\"jsonrpc\":\"2.0\"}")");
  EXPECT_EQ(Outcome(job, &f, false), "ok:1.0");
  // A version without a schema it can check takes any event.
  f.versions[0].input_schema = nullptr;
  job.set_event_json(R"("anything")");
  EXPECT_EQ(Outcome(job, &f, false), "ok:1.0");
}

}  // namespace
}  // namespace toolgate::core

namespace toolgate::core {
namespace {

// The price a call is charged is its version's, fixed at publishing: the function's price of
// now (the default of the next version) never reaches a version already published.
TEST(DecideInvoke, ChargesTheVersionsOwnPrice) {
  PublishedVersion old_version = Version("1.0.0");
  old_version.price_micro_usd = 0;
  PublishedVersion new_version = Version("1.1.0");
  new_version.price_micro_usd = 40'000'000;
  auto f = Function(true, {old_version, new_version});
  f.price_micro_usd = 40'000'000;
  InvokeDecision pinned = DecideInvoke(Job(kCaller, "1.0.0"), &f, true);
  ASSERT_TRUE(std::holds_alternative<v1::FunctionVersion>(pinned));
  EXPECT_EQ(std::get<v1::FunctionVersion>(pinned).price_micro_usd(), 0);
  InvokeDecision latest = DecideInvoke(Job(kCaller), &f, true);
  ASSERT_TRUE(std::holds_alternative<v1::FunctionVersion>(latest));
  EXPECT_EQ(std::get<v1::FunctionVersion>(latest).price_micro_usd(), 40'000'000);
}

}  // namespace
}  // namespace toolgate::core
