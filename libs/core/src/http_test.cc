#include "toolgate/core/http.h"

#include <gtest/gtest.h>

#include "toolgate/base/crypto.h"

namespace toolgate::core {
namespace {

v1::HttpRequest Req(std::string method, std::string path) {
  v1::HttpRequest r;
  r.set_method(std::move(method));
  r.set_path(std::move(path));
  return r;
}

v1::HttpRequest SessionReq(std::string method, std::string path) {
  v1::HttpRequest r = Req(std::move(method), std::move(path));
  r.set_authenticated(true);
  r.mutable_principal()->set_org_id("org-1");
  r.mutable_principal()->set_user_id("user-1");
  return r;
}

v1::HttpRequest KeyReq(std::string method, std::string path, std::vector<std::string> scopes) {
  v1::HttpRequest r = Req(std::move(method), std::move(path));
  r.set_authenticated(true);
  r.mutable_principal()->set_org_id("org-1");
  r.mutable_principal()->set_key_id("key-1");
  for (auto& s : scopes) r.mutable_principal()->add_scopes(s);
  return r;
}

// A router whose handlers answer 200 with a body naming the route and its parameters.
class RouterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto echo = [](std::string name) {
      return [name](const Request& r) {
        std::string body = name;
        for (const auto& p : r.params) body += "|" + p;
        return JsonResponse(200, body);
      };
    };
    router_.Add("GET", "/secrets", echo("list"));
    router_.Add("POST", "/secrets", echo("create"));
    router_.Add("PUT", "/secrets/{id}", echo("set"));
    router_.Add("DELETE", "/secrets/{id}", echo("delete"));
    router_.Add("GET", "/functions/{id}/versions/{version}", echo("version"));
    router_.Add("POST", "/auth/login", echo("login"), /*require_auth=*/false);
  }
  Router router_;
};

TEST(SplitPathTest, DropsEmptySegmentsAndKeepsTheRestInOrder) {
  EXPECT_EQ(SplitPath("/functions/alice/hello"),
            (std::vector<std::string>{"functions", "alice", "hello"}));
  EXPECT_EQ(SplitPath("a//b/"), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(SplitPath("/a%2Fb"), (std::vector<std::string>{"a%2Fb"}));  // not decoded
  EXPECT_TRUE(SplitPath("").empty());
  EXPECT_TRUE(SplitPath("///").empty());
}

TEST_F(RouterTest, ExtractsParametersInOrder) {
  auto r = router_.Dispatch(SessionReq("GET", "/functions/f-1/versions/1.2.3"));
  EXPECT_EQ(r.status(), 200);
  EXPECT_EQ(r.body(), "version|f-1|1.2.3");
  r = router_.Dispatch(SessionReq("PUT", "/secrets/abc"));
  EXPECT_EQ(r.body(), "set|abc");
}

TEST_F(RouterTest, SelectsTheRouteByMethod) {
  EXPECT_EQ(router_.Dispatch(SessionReq("GET", "/secrets")).body(), "list");
  EXPECT_EQ(router_.Dispatch(SessionReq("POST", "/secrets")).body(), "create");
  EXPECT_EQ(router_.Dispatch(SessionReq("DELETE", "/secrets/x")).body(), "delete|x");
}

TEST_F(RouterTest, UnknownPathIs404) {
  for (const char* path : {"/nope", "/secrets/a/b", "/functions/f-1/versions", "/"}) {
    auto r = router_.Dispatch(SessionReq("GET", path));
    EXPECT_EQ(r.status(), 404) << path;
    EXPECT_EQ(r.problem().code(), "not_found") << path;
  }
}

TEST_F(RouterTest, KnownPathWithAnotherMethodIs405) {
  auto r = router_.Dispatch(SessionReq("PATCH", "/secrets"));
  EXPECT_EQ(r.status(), 405);
  EXPECT_EQ(r.problem().code(), "method_not_allowed");
  r = router_.Dispatch(SessionReq("GET", "/secrets/abc"));
  EXPECT_EQ(r.status(), 405);
  // The method is checked before authentication, so probing reveals nothing secret.
  r = router_.Dispatch(Req("GET", "/auth/login"));
  EXPECT_EQ(r.status(), 405);
}

TEST_F(RouterTest, ProtectedRouteNeedsAuthentication) {
  auto r = router_.Dispatch(Req("GET", "/secrets"));
  EXPECT_EQ(r.status(), 401);
  EXPECT_EQ(r.problem().code(), "not_authenticated");
  EXPECT_TRUE(r.body().empty());
}

TEST_F(RouterTest, KeyWithoutManageScopeIs403) {
  auto r = router_.Dispatch(KeyReq("GET", "/secrets", {"invoke"}));
  EXPECT_EQ(r.status(), 403);
  EXPECT_EQ(r.problem().code(), "insufficient_scope");
  r = router_.Dispatch(KeyReq("GET", "/secrets", {}));
  EXPECT_EQ(r.status(), 403);
}

TEST_F(RouterTest, KeyWithManageScopeIsAllowed) {
  auto r = router_.Dispatch(KeyReq("GET", "/secrets", {"invoke", "manage"}));
  EXPECT_EQ(r.status(), 200);
  EXPECT_EQ(r.body(), "list");
}

TEST_F(RouterTest, SessionIsAllowedWithoutScopes) {
  EXPECT_EQ(router_.Dispatch(SessionReq("GET", "/secrets")).status(), 200);
}

TEST_F(RouterTest, PublicRouteWorksUnauthenticated) {
  auto r = router_.Dispatch(Req("POST", "/auth/login"));
  EXPECT_EQ(r.status(), 200);
  EXPECT_EQ(r.body(), "login");
}

TEST_F(RouterTest, HandlerSeesPrincipalAndQuery) {
  Router router;
  router.Add("GET", "/executions", [](const Request& r) {
    return JsonResponse(200, r.principal().org_id() + "|" + r.Query("function_id") + "|" +
                                 r.Query("cursor", "none"));
  });
  v1::HttpRequest req = SessionReq("GET", "/executions");
  (*req.mutable_query())["function_id"] = "f-9";
  EXPECT_EQ(router.Dispatch(req).body(), "org-1|f-9|none");
}

TEST(HttpResponsesTest, Builders) {
  auto r = JsonResponse(201, R"({"a":1})");
  EXPECT_EQ(r.status(), 201);
  EXPECT_EQ(r.body(), R"({"a":1})");
  EXPECT_FALSE(r.has_problem());
  EXPECT_EQ(NoContent().status(), 204);
  r = ProblemResponse("conflict", "Already there.");
  EXPECT_EQ(r.status(), 409);
  EXPECT_EQ(r.problem().detail(), "Already there.");
  EXPECT_EQ(Unavailable(Status::Unavailable("db down")).status(), 503);
  EXPECT_EQ(Unavailable(Status::Unavailable("db down")).problem().detail().find("db down"),
            std::string::npos);  // the cause goes to the log only
}

std::optional<int> Limit(const char* value, v1::HttpResponse* problem) {
  v1::HttpRequest http = SessionReq("GET", "/secrets");
  if (value != nullptr) (*http.mutable_query())["limit"] = value;
  return ParseLimit(Request{http, {}}, problem);
}

TEST(ParseLimitTest, DefaultIs50) {
  v1::HttpResponse problem;
  EXPECT_EQ(Limit(nullptr, &problem), 50);
}

TEST(ParseLimitTest, AcceptsOneTo200) {
  v1::HttpResponse problem;
  EXPECT_EQ(Limit("1", &problem), 1);
  EXPECT_EQ(Limit("200", &problem), 200);
  EXPECT_EQ(Limit("75", &problem), 75);
}

TEST(ParseLimitTest, RejectsOthersWithAFieldError) {
  for (const char* value : {"0", "201", "-1", "abc", "5x", "", " 5", "1.5", "99999999999"}) {
    v1::HttpResponse problem;
    EXPECT_EQ(Limit(value, &problem), std::nullopt) << value;
    EXPECT_EQ(problem.status(), 422) << value;
    ASSERT_EQ(problem.problem().errors_size(), 1) << value;
    EXPECT_EQ(problem.problem().errors(0).field(), "limit");
  }
}

TEST(CursorTest, RoundTrip) {
  InitCrypto();
  for (std::string position :
       {std::string("2027-01-31T00:00:00.123Z|123e4567-e89b-42d3-a456-426614174000"),
        std::string(""), std::string("\x00\xff/+=", 5)}) {
    std::string cursor = EncodeCursor(position);
    EXPECT_EQ(cursor.find_first_of("+/=&?# "), std::string::npos) << cursor;  // URL-safe
    EXPECT_EQ(DecodeCursor(cursor), position);
  }
}

TEST(CursorTest, RejectsGarbage) {
  InitCrypto();
  for (std::string cursor : {std::string("!!!"), std::string(""), std::string("abc"),
                             Base64UrlEncode("position-without-prefix"),
                             Base64UrlEncode("c2:other-version"), std::string("c1:plain")}) {
    EXPECT_EQ(DecodeCursor(cursor), std::nullopt) << cursor;
  }
  std::string valid = EncodeCursor("x");
  EXPECT_EQ(DecodeCursor(valid + "!"), std::nullopt);
}

}  // namespace
}  // namespace toolgate::core
