#include "invoke_decider.h"

#include <gtest/gtest.h>

#include <deque>

#include "fake_decision_source.h"
#include "toolgate/core/subjects.h"

namespace toolgate::edge {
namespace {

constexpr const char* kFn = "6f1c2b9e-3d4a-4b5c-8d7e-9f0a1b2c3d4e";
constexpr int64_t kNowMs = 1'800'000'000'000;
constexpr int64_t kDayMs = 24LL * 3600 * 1000;

class InvokeDeciderTest : public ::testing::Test {
 protected:
  InvokeDeciderTest()
      : caches_(DecisionCacheOptions{}, [this] { return mono_ms_; }),
        decider_(caches_, source_, uses_,
                 InvokeDecider::Clocks{.wall_ms = [this] { return wall_ms_; },
                                       .connection_epoch = [this] { return epoch_; }}) {
    source_.AddKey("good", "org-caller", {"invoke"}, kNowMs + 30 * kDayMs);
    // The caller's own private function, one version without declared keys.
    v1::FunctionView* f = source_.function.mutable_function();
    f->set_function_id(kFn);
    f->set_org_id("org-caller");
    AddVersion("1.0", {});
  }

  void AddVersion(const std::string& version, std::vector<std::string> keys) {
    v1::VersionView* v = source_.function.mutable_function()->add_versions();
    v->set_version(version);
    v->set_runtime(v1::RUNTIME_LUA);
    v->set_compute_type(v1::COMPUTE_TYPE_CPU);
    v->set_timeout_ms(1000);
    v->set_price_micro_usd(100);
    for (auto& k : keys) v->add_declared_keys(k);
  }

  struct Outcome {
    v1::InvokeJob job;
    InvokeVerdict verdict;
    std::string code() const {
      return verdict.reply ? verdict.reply->problem().code() : std::string("forward");
    }
  };
  Outcome Decide(const std::string& key_sha, const std::string& version = "") {
    v1::InvokeJob job;
    job.set_api_key_sha256(key_sha);
    job.set_function_id(kFn);
    job.set_version(version);
    return DecideJob(std::move(job));
  }
  Outcome DecideJob(v1::InvokeJob job) {
    std::optional<Outcome> out;
    decider_.Decide(std::move(job), [&](v1::InvokeJob j, InvokeVerdict v) {
      EXPECT_FALSE(out) << "done ran twice";
      out = Outcome{std::move(j), std::move(v)};
    });
    EXPECT_TRUE(out) << "the fake answers at once, so the decision is taken";
    return out ? std::move(*out) : Outcome{};
  }

  int64_t mono_ms_ = 5'000;
  int64_t wall_ms_ = kNowMs;
  uint64_t epoch_ = 0;
  FakeSource source_;
  core::UsageBatcher uses_;
  DecisionCaches caches_;
  InvokeDecider decider_;
};

TEST_F(InvokeDeciderTest, AWarmCallAsksNobody) {
  Outcome first = Decide("good");
  ASSERT_EQ(first.code(), "forward");
  EXPECT_STREQ(first.verdict.next_subject, core::kBillingStageSubject);
  EXPECT_EQ(first.job.principal().org_id(), "org-caller");
  EXPECT_EQ(first.job.principal().key_id(), "id-good");
  EXPECT_EQ(first.job.function().version(), "1.0");
  EXPECT_EQ(first.job.function().runtime(), v1::RUNTIME_LUA);
  EXPECT_EQ(source_.key_lookups, 1);
  EXPECT_EQ(source_.function_views, 1);
  EXPECT_EQ(source_.last_view, std::string(kFn) + "@org-caller");

  Outcome second = Decide("good");
  EXPECT_EQ(second.code(), "forward");
  EXPECT_EQ(source_.key_lookups, 1);
  EXPECT_EQ(source_.function_views, 1);
  // Both uses reported as one, the latest.
  auto taken = uses_.Take();
  ASSERT_EQ(taken.size(), 1u);
  EXPECT_EQ(taken["id-good"], kNowMs);
}

TEST_F(InvokeDeciderTest, AVersionWithDeclaredKeysGoesToSecrets) {
  source_.function.mutable_function()->clear_versions();
  AddVersion("2.0", {"API_TOKEN"});
  v1::InvokeJob job;
  job.set_api_key_sha256("good");
  job.set_function_id(kFn);
  job.set_env_keys_present(true);
  job.set_env_keys_header("API_TOKEN=sec-1");
  Outcome out = DecideJob(job);
  ASSERT_EQ(out.code(), "forward");
  EXPECT_STREQ(out.verdict.next_subject, core::kSecretsStageSubject);
  // Without the header: refused with the key's expiry on the answer.
  job.clear_env_keys_present();
  job.clear_env_keys_header();
  Outcome missing = DecideJob(job);
  EXPECT_EQ(missing.code(), "missing_env_key");
  EXPECT_EQ(missing.verdict.reply->key_expires_at_ms(), kNowMs + 30 * kDayMs);
}

TEST_F(InvokeDeciderTest, UnknownKeysAreRememberedForTheNegativeTtl) {
  Outcome out = Decide("nobody");
  EXPECT_EQ(out.code(), "invalid_api_key");
  EXPECT_EQ(out.verdict.reply->problem().status(), 401);
  EXPECT_EQ(out.verdict.reply->key_expires_at_ms(), 0);
  EXPECT_EQ(Decide("nobody").code(), "invalid_api_key");
  EXPECT_EQ(source_.key_lookups, 1);
  // The key is created meanwhile; once the negative entry is over the edge asks again.
  source_.AddKey("nobody", "org-caller", {"invoke"}, kNowMs + kDayMs);
  mono_ms_ += DecisionCacheOptions{}.negative_ttl_ms;
  EXPECT_EQ(Decide("nobody").code(), "forward");
  EXPECT_EQ(source_.key_lookups, 2);
}

TEST_F(InvokeDeciderTest, ACachedKeyThatExpiresIsRefusedAtOnce) {
  source_.AddKey("short", "org-caller", {"invoke"}, kNowMs + 1000);
  ASSERT_EQ(Decide("short").code(), "forward");
  wall_ms_ = kNowMs + 1000;
  Outcome out = Decide("short");
  EXPECT_EQ(out.code(), "api_key_expired");
  EXPECT_EQ(out.verdict.reply->key_expires_at_ms(), kNowMs + 1000);
  EXPECT_EQ(source_.key_lookups, 1);
}

TEST_F(InvokeDeciderTest, ARevocationReachesTheNextCall) {
  ASSERT_EQ(Decide("good").code(), "forward");
  source_.keys["good"].set_revoked(true);
  caches_.KeyRevoked("good");  // the tg.events.key_revoked broadcast
  Outcome out = Decide("good");
  EXPECT_EQ(out.code(), "api_key_revoked");
  EXPECT_EQ(source_.key_lookups, 2);
  // Revoked stays revoked: remembered like any record.
  EXPECT_EQ(Decide("good").code(), "api_key_revoked");
  EXPECT_EQ(source_.key_lookups, 2);
}

TEST_F(InvokeDeciderTest, TheInvokeScopeRuleIsAuths) {
  source_.AddKey("manage", "org-caller", {"manage"}, kNowMs + kDayMs);
  Outcome out = Decide("manage");
  EXPECT_EQ(out.code(), "insufficient_scope");
  EXPECT_EQ(out.verdict.reply->problem().status(), 403);
  EXPECT_EQ(out.verdict.reply->key_expires_at_ms(), kNowMs + kDayMs);
  EXPECT_EQ(source_.function_views, 0);
}

TEST_F(InvokeDeciderTest, AReconnectionDropsBothCaches) {
  ASSERT_EQ(Decide("good").code(), "forward");
  epoch_ = 1;
  ASSERT_EQ(Decide("good").code(), "forward");
  EXPECT_EQ(source_.key_lookups, 2);
  EXPECT_EQ(source_.function_views, 2);
  ASSERT_EQ(Decide("good").code(), "forward");
  EXPECT_EQ(source_.key_lookups, 2);
}

TEST_F(InvokeDeciderTest, AFunctionChangeReachesTheNextCall) {
  ASSERT_EQ(Decide("good", "1.0").code(), "forward");
  source_.function.mutable_function()->clear_versions();  // 1.0 unpublished
  AddVersion("1.1", {});
  caches_.FunctionChanged(kFn);
  EXPECT_EQ(Decide("good", "1.0").code(), "version_not_found");
  EXPECT_EQ(Decide("good").job.function().version(), "1.1");
  EXPECT_EQ(source_.function_views, 2);
}

TEST_F(InvokeDeciderTest, AnotherOrganizationsPublicFunctionNeedsTheAdd) {
  source_.AddKey("other", "org-other", {"invoke"}, kNowMs + kDayMs);
  source_.function.mutable_function()->set_is_public(true);
  EXPECT_EQ(Decide("other").code(), "function_not_added");
  source_.function.set_added(true);
  caches_.WorkspaceChanged("org-other", kFn);
  EXPECT_EQ(Decide("other").code(), "forward");
  source_.function.mutable_function()->set_is_public(false);
  caches_.FunctionChanged(kFn);
  EXPECT_EQ(Decide("other").code(), "function_not_found");
}

TEST_F(InvokeDeciderTest, SessionsAreAskedEveryTime) {
  source_.session.mutable_principal()->set_org_id("org-caller");
  v1::InvokeJob job;
  job.set_session_token_sha256("cookie");
  job.set_function_id(kFn);
  Outcome out = DecideJob(job);
  ASSERT_EQ(out.code(), "forward");
  EXPECT_TRUE(out.job.session_token_sha256().empty());
  DecideJob(job);
  EXPECT_EQ(source_.sessions, 2);
  source_.session.Clear();
  source_.session.mutable_problem()->set_code("not_authenticated");
  EXPECT_EQ(DecideJob(job).code(), "not_authenticated");
}

TEST_F(InvokeDeciderTest, AFailedLookupAnswersAndCachesNothing) {
  source_.key_status = Status::Unavailable("no responders");
  EXPECT_EQ(Decide("good").code(), "service_unavailable");
  source_.key_status = Status::Ok();
  EXPECT_EQ(Decide("good").code(), "forward");
  EXPECT_EQ(source_.key_lookups, 2);
}

TEST_F(InvokeDeciderTest, NoCredentialsNoCall) {
  v1::InvokeJob job;
  job.set_function_id(kFn);
  EXPECT_EQ(DecideJob(job).code(), "missing_api_key");
  EXPECT_EQ(source_.key_lookups, 0);
}

TEST(FunctionFromView, CompilesTheSchemaAndKeepsEveryField) {
  v1::FunctionView view;
  view.set_function_id(kFn);
  view.set_org_id("o");
  view.set_is_public(true);
  view.set_mcp(true);
  v1::VersionView* v = view.add_versions();
  v->set_version("1.2.3");
  v->set_runtime(v1::RUNTIME_PYTHON);
  v->set_compute_type(v1::COMPUTE_TYPE_GPU);
  v->set_timeout_ms(7);
  v->set_memory_mb(64);
  v->add_declared_keys("K");
  v->set_price_micro_usd(9);
  v->add_egress("api.example.com");
  v->set_bundle_digest("abc");
  v->set_handler("src/main.py");
  v->set_input_schema_json(R"({"type":"object","required":["city"]})");
  view.add_versions()->set_version("not a version");
  core::CachedFunction f = FunctionFromView(view);
  EXPECT_EQ(f.function_id, kFn);
  EXPECT_TRUE(f.is_public);
  EXPECT_TRUE(f.mcp);
  ASSERT_EQ(f.versions.size(), 1u);
  const core::PublishedVersion& p = f.versions[0];
  EXPECT_EQ(p.parsed.parts[2], 3u);
  EXPECT_EQ(p.runtime, "python");
  EXPECT_EQ(p.declared_keys, std::vector<std::string>{"K"});
  EXPECT_EQ(p.egress, std::vector<std::string>{"api.example.com"});
  EXPECT_EQ(p.handler, "src/main.py");
  ASSERT_NE(p.input_schema, nullptr);
  EXPECT_FALSE(p.input_schema->Validate(R"({"town":"x"})").empty());
}

}  // namespace
}  // namespace toolgate::edge
