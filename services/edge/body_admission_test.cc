#include "body_admission.h"

#include <gtest/gtest.h>

#include "fake_decision_source.h"
#include "toolgate/base/crypto.h"
#include "toolgate/core/problem.h"

namespace toolgate::edge {
namespace {

constexpr const char* kFn = "6f1c2b9e-3d4a-4b5c-8d7e-9f0a1b2c3d4e";
constexpr int64_t kNowMs = 1'800'000'000'000;
constexpr size_t kBody = 1000;
constexpr size_t kUpload = 50000;

class BodyAdmissionTest : public ::testing::Test {
 protected:
  BodyAdmissionTest()
      : caches_(DecisionCacheOptions{}, [] { return int64_t{1}; }),
        admission_({.max_body_bytes = kBody, .max_upload_bytes = kUpload}, caches_, source_,
                   [] { return kNowMs; }) {
    AddKey("tg_owner", "org-owner", {"invoke", "manage"});
    AddKey("tg_invoker", "org-owner", {"invoke"});
    AddKey("tg_other", "org-other", {"invoke", "manage"});
    AddKey("tg_revoked", "org-owner", {"manage"}, /*revoked=*/true);
    v1::FunctionView* f = source_.function.mutable_function();
    f->set_function_id(kFn);
    f->set_org_id("org-owner");
  }

  void AddKey(const std::string& key, const std::string& org, std::vector<std::string> scopes,
              bool revoked = false) {
    source_.AddKey(Sha256(key), org, std::move(scopes), kNowMs + 24LL * 3600 * 1000, revoked);
  }

  // The verdict, whether given at once or through later (the fake source answers at once).
  BodyVerdict Decide(const std::string& method, const std::string& target,
                     std::vector<std::pair<std::string, std::string>> headers = {}) {
    RequestHead head;
    head.method = method;
    head.target = target;
    head.version = "HTTP/1.1";
    head.headers = std::move(headers);
    std::optional<BodyVerdict> later;
    int calls = 0;
    auto now = admission_.Decide(head, [&](BodyVerdict v) {
      ++calls;
      later = std::move(v);
    });
    EXPECT_EQ(calls + (now ? 1 : 0), 1) << "a verdict must be given exactly once";
    return now ? *now : later.value_or(BodyVerdict{});
  }

  static std::string Code(const BodyVerdict& v) { return v.refusal ? v.refusal->code() : "admit"; }

  std::string Upload() const { return std::string("/api/v1/functions/") + kFn + "/versions"; }

  FakeSource source_;
  DecisionCaches caches_;
  BodyAdmission admission_;
};

TEST_F(BodyAdmissionTest, AnUploadWithoutCredentialsIsRefusedBeforeAnythingIsAsked) {
  BodyVerdict v = Decide("POST", Upload());
  EXPECT_EQ(Code(v), "not_authenticated");
  EXPECT_EQ(source_.key_lookups + source_.function_views + source_.sessions, 0);
}

TEST_F(BodyAdmissionTest, AnUnknownOrRevokedKeyIsRefusedOnEveryRoute) {
  for (const std::string& target :
       {Upload(), std::string("/api/v1/secrets"), std::string("/api/v1/functions/x/invoke"),
        std::string("/mcp"), std::string("/api/v1/auth/login")}) {
    SCOPED_TRACE(target);
    EXPECT_EQ(Code(Decide("POST", target, {{"authorization", "Bearer tg_nobody"}})),
              "invalid_api_key");
    EXPECT_EQ(Code(Decide("POST", target, {{"authorization", "Bearer tg_revoked"}})),
              "api_key_revoked");
  }
}

TEST_F(BodyAdmissionTest, OnlyTheOwnersManageKeyGetsTheUploadLimit) {
  BodyVerdict owner = Decide("POST", Upload(), {{"authorization", "Bearer tg_owner"}});
  EXPECT_EQ(Code(owner), "admit");
  EXPECT_EQ(owner.body_limit, kUpload);
  EXPECT_EQ(Code(Decide("POST", Upload(), {{"authorization", "Bearer tg_invoker"}})),
            "insufficient_scope");
  // Another organization: a private function is invisible to it, a public one not its own.
  EXPECT_EQ(Code(Decide("POST", Upload(), {{"authorization", "Bearer tg_other"}})),
            "function_not_found");
  source_.function.mutable_function()->set_is_public(true);
  caches_.FunctionChanged(kFn);
  EXPECT_EQ(Code(Decide("POST", Upload(), {{"authorization", "Bearer tg_other"}})), "forbidden");
  EXPECT_EQ(Code(Decide("POST", "/api/v1/functions/0e0e0e0e-0000-4000-8000-000000000000/versions",
                        {{"authorization", "Bearer tg_owner"}})),
            "function_not_found");
}

TEST_F(BodyAdmissionTest, AWarmOwnerIsAdmittedFromTheCaches) {
  Decide("POST", Upload(), {{"authorization", "Bearer tg_owner"}});
  const int asked = source_.key_lookups + source_.function_views;
  RequestHead head;
  head.method = "POST";
  head.target = Upload();
  head.headers = {{"authorization", "Bearer tg_owner"}};
  auto now = admission_.Decide(head, [](BodyVerdict) { ADD_FAILURE() << "asked the owners"; });
  ASSERT_TRUE(now.has_value());
  EXPECT_EQ(now->body_limit, kUpload);
  EXPECT_EQ(source_.key_lookups + source_.function_views, asked);
}

TEST_F(BodyAdmissionTest, ASessionUploadIsCheckedWithAuthAndTheOwner) {
  source_.session.mutable_principal()->set_org_id("org-owner");
  BodyVerdict v = Decide("POST", Upload(), {{"cookie", "tg_session=abc"}});
  EXPECT_EQ(Code(v), "admit");
  EXPECT_EQ(v.body_limit, kUpload);
  EXPECT_EQ(source_.sessions, 1);
  source_.session.Clear();
  *source_.session.mutable_problem() = core::MakeProblem("not_authenticated", "expired");
  EXPECT_EQ(Code(Decide("POST", Upload(), {{"cookie", "tg_session=old"}})), "not_authenticated");
}

TEST_F(BodyAdmissionTest, RoutesThatNeedACallerRefuseABodyWithoutCredentials) {
  EXPECT_EQ(Code(Decide("POST", "/api/v1/secrets")), "not_authenticated");
  EXPECT_EQ(Code(Decide("PUT", "/api/v1/workspace/tools/x/env-keys")), "not_authenticated");
  EXPECT_EQ(Code(Decide("POST", "/api/v1/functions/x/1.0/invoke")), "missing_api_key");
  EXPECT_EQ(Code(Decide("POST", "/mcp/functions/x")), "missing_api_key");
  EXPECT_EQ(Code(Decide("POST", "/mcp")), "missing_api_key");
}

TEST_F(BodyAdmissionTest, SigningUpAndInAndOutTakeABodyFromAnyone) {
  for (const char* target : {"/api/v1/auth/signup", "/api/v1/auth/login", "/api/v1/auth/logout"}) {
    BodyVerdict v = Decide("POST", target);
    EXPECT_EQ(Code(v), "admit") << target;
    EXPECT_EQ(v.body_limit, kBody) << target;
  }
}

TEST_F(BodyAdmissionTest, OtherCallersGetTheGeneralLimit) {
  BodyVerdict key = Decide("POST", "/api/v1/secrets", {{"authorization", "Bearer tg_invoker"}});
  EXPECT_EQ(Code(key), "admit");
  EXPECT_EQ(key.body_limit, kBody);
  // A session cookie is judged by the route's owner: only its size is decided here.
  BodyVerdict session = Decide("POST", "/api/v1/secrets", {{"cookie", "tg_session=abc"}});
  EXPECT_EQ(Code(session), "admit");
  EXPECT_EQ(session.body_limit, kBody);
  EXPECT_EQ(source_.sessions, 0);
}

TEST_F(BodyAdmissionTest, AFailedRoundTripRefusesWithTheBussProblem) {
  source_.key_status = Status::Unavailable("no responders");
  BodyVerdict v = Decide("POST", Upload(), {{"authorization", "Bearer tg_owner"}});
  ASSERT_TRUE(v.refusal.has_value());
  EXPECT_GE(v.refusal->status(), 500);
}

}  // namespace
}  // namespace toolgate::edge
