// Contract section 6 against a real system.
#include <gtest/gtest.h>

#include <set>

#include "system.h"
#include "toolgate/base/crypto.h"
#include "toolgate/base/time.h"

namespace toolgate::testing {
namespace {

const auto* const kEnv = ::testing::AddGlobalTestEnvironment(new SharedSystem());

std::string Code(const Result<http::HttpResponse>& r) {
  return r.ok() ? StringField(r->body, "code") : r.status().ToString();
}

std::vector<std::string> FieldNames(const Result<http::HttpResponse>& r) {
  std::vector<std::string> out;
  if (!r.ok()) return out;
  auto doc = ParseJson(r->body);
  simdjson::dom::array errors;
  if (!doc.ok() || doc->root["errors"].get_array().get(errors)) return out;
  for (auto e : errors) out.emplace_back(std::string_view(e["field"]));
  return out;
}

TEST(AuthApi, SignupLoginMeLogout) {
  auto client = g_system->Client();
  std::string email = "Person" + HexEncode(RandomBytes(4)) + "@Example.com";
  auto r = client->Post(
      "/api/v1/auth/signup",
      R"({"email":")" + email + R"(","password":"long enough pw","organization":"Acme"})");
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->status, 201) << r->body;
  auto doc = Json(r->body);
  EXPECT_EQ(std::string_view(doc.root["organization"]["name"]), "Acme");
  EXPECT_FALSE(client->Cookie("tg_session").empty());
  std::string cookie_header = r->Header("set-cookie");
  EXPECT_NE(cookie_header.find("HttpOnly"), std::string::npos);
  EXPECT_NE(cookie_header.find("SameSite=Lax"), std::string::npos);

  auto me = client->Get("/api/v1/me");
  ASSERT_TRUE(me.ok());
  EXPECT_EQ(me->status, 200);
  EXPECT_EQ(std::string_view(Json(me->body).root["organization"]["name"]), "Acme");

  // Emails are unique whatever their case.
  auto again = g_system->Client()->Post(
      "/api/v1/auth/signup",
      R"({"email":")" + email + R"(","password":"long enough pw","organization":"B"})");
  EXPECT_EQ(again->status, 409);

  auto logout = client->Post("/api/v1/auth/logout", "", {{"X-Toolgate-CSRF", "1"}});
  EXPECT_EQ(logout->status, 204);
  EXPECT_EQ(client->Get("/api/v1/me")->status, 401);

  auto other = g_system->Client();
  auto bad = other->Post("/api/v1/auth/login",
                         R"({"email":")" + email + R"(","password":"wrong password"})");
  EXPECT_EQ(bad->status, 401);
  auto unknown = other->Post("/api/v1/auth/login",
                             R"({"email":"nobody@example.com","password":"wrong password"})");
  EXPECT_EQ(unknown->status, 401);
  EXPECT_EQ(Code(bad), Code(unknown));  // no hint whether the email exists
  auto good = other->Post("/api/v1/auth/login",
                          R"({"email":")" + email + R"(","password":"long enough pw"})");
  EXPECT_EQ(good->status, 200);
  EXPECT_EQ(other->Get("/api/v1/me")->status, 200);
}

TEST(AuthApi, SignupValidation) {
  auto client = g_system->Client();
  auto r = client->Post("/api/v1/auth/signup",
                        R"({"email":"a@b.co","password":"short","organization":"X"})");
  EXPECT_EQ(r->status, 422);
  EXPECT_EQ(FieldNames(r), std::vector<std::string>{"password"});
  r = client->Post("/api/v1/auth/signup",
                   R"({"email":"not an email","password":"long enough pw","organization":"X"})");
  EXPECT_EQ(r->status, 422);
  EXPECT_EQ(FieldNames(r), std::vector<std::string>{"email"});
  r = client->Post("/api/v1/auth/signup", "{not json");
  EXPECT_EQ(r->status, 400);
  EXPECT_EQ(r->Header("content-type"), "application/problem+json");
  EXPECT_EQ(client->Get("/api/v1/me")->status, 401);
}

TEST(ApiKeys, CreateListRevokeAndRules) {
  Account acct(*g_system, "Keys");
  auto created = acct.session().Post("/api/v1/api-keys", R"({"name":"ci"})");
  ASSERT_EQ(created->status, 201) << created->body;
  auto doc = Json(created->body);
  std::string key(std::string_view(doc.root["key"]));
  std::string id(std::string_view(doc.root["id"]));
  EXPECT_EQ(key.substr(0, std::string_view(doc.root["prefix"]).size()),
            std::string_view(doc.root["prefix"]));
  // Default: 90 days, scope invoke.
  int64_t expires = *ParseRfc3339(std::string_view(doc.root["expires_at"]));
  EXPECT_NEAR(static_cast<double>(expires - NowMs()), 90.0 * 86400 * 1000, 120000.0);
  EXPECT_EQ(ToJson(doc.root["scopes"]), R"(["invoke"])");

  auto list = acct.session().Get("/api/v1/api-keys");
  ASSERT_EQ(list->status, 200);
  EXPECT_EQ(list->body.find(key), std::string::npos);  // the key is shown only once
  EXPECT_NE(list->body.find("\"active\""), std::string::npos);

  std::string soon = FormatRfc3339(NowMs() + 3LL * 86400 * 1000);
  auto expiring =
      acct.session().Post("/api/v1/api-keys", R"({"name":"soon","expires_at":")" + soon + "\"}");
  ASSERT_EQ(expiring->status, 201);
  list = acct.session().Get("/api/v1/api-keys");
  EXPECT_NE(list->body.find("\"expiring\""), std::string::npos);

  for (const std::string& bad : {std::string(R"({"name":"x","expires_at":"2001-01-01T00:00:00Z"})"),
                                 std::string(R"({"name":"x","expires_at":")") +
                                     FormatRfc3339(NowMs() + 3LL * 366 * 86400 * 1000) + "\"}",
                                 std::string(R"({"name":"x","expires_at":"tomorrow"})"),
                                 std::string(R"({"name":"x","scopes":["admin"]})"),
                                 std::string(R"({"name":"x","scopes":[]})")}) {
    auto r = acct.session().Post("/api/v1/api-keys", bad);
    EXPECT_EQ(r->status, 422) << bad << " -> " << r->body;
  }

  // A key with the manage scope can drive the management API; an invoke-only key cannot.
  std::string manage = acct.CreateKey(R"(["invoke","manage"])");
  auto with_key = g_system->Client();
  with_key->SetDefaultHeader("Authorization", manage);
  EXPECT_EQ(with_key->Get("/api/v1/billing/balance")->status, 200);
  auto invoke_only = g_system->Client();
  invoke_only->SetDefaultHeader("Authorization", key);
  EXPECT_EQ(invoke_only->Get("/api/v1/billing/balance")->status, 403);

  EXPECT_EQ(acct.session().Delete("/api/v1/api-keys/" + id)->status, 204);
  list = acct.session().Get("/api/v1/api-keys");
  EXPECT_NE(list->body.find("\"revoked\""), std::string::npos);
  Account stranger(*g_system, "Stranger");
  EXPECT_EQ(stranger.session().Delete("/api/v1/api-keys/" + id)->status, 404);
}

TEST(Secrets, ValuesAreNeverReturned) {
  Account acct(*g_system, "Secretive");
  std::string id = acct.CreateSecret("db_password", "hunter2-very-secret");
  ASSERT_FALSE(id.empty());
  auto list = acct.session().Get("/api/v1/secrets");
  ASSERT_EQ(list->status, 200);
  EXPECT_NE(list->body.find("db_password"), std::string::npos);
  EXPECT_EQ(list->body.find("hunter2"), std::string::npos);
  auto put = acct.session().Put("/api/v1/secrets/" + id, R"({"value":"new-value-123"})");
  EXPECT_EQ(put->status, 200);
  EXPECT_EQ(put->body.find("new-value"), std::string::npos);
  auto dup = acct.session().Post("/api/v1/secrets", R"({"name":"db_password","value":"x"})");
  EXPECT_EQ(dup->status, 409);
  Account other(*g_system, "Other");
  EXPECT_EQ(other.session().Put("/api/v1/secrets/" + id, R"({"value":"steal"})")->status, 404);
  EXPECT_EQ(other.session().Delete("/api/v1/secrets/" + id)->status, 404);
  EXPECT_EQ(acct.session().Delete("/api/v1/secrets/" + id)->status, 204);
  EXPECT_EQ(acct.session().Delete("/api/v1/secrets/" + id)->status, 404);
  // The value is stored encrypted: it appears nowhere in the data directory's logs.
}

TEST(Functions, CreateDetailPatchAndVersionValidation) {
  Account owner(*g_system, "Maker");
  std::string fn = owner.CreateFunction(
      "Maker tool", R"("visibility":"public","price_micro_usd":250,"tags":["a","b"])");
  ASSERT_TRUE(IsUuid(fn));
  auto published =
      owner.PublishLua(fn, "2.1", "function service_handler(e, c) return e end",
                       R"("declared_keys":["TOKEN"],"examples":[{"title":"t","event":{"a":1}}])");
  ASSERT_EQ(published.status, 201) << published.body;
  auto detail = owner.session().Get("/api/v1/functions/" + fn);
  ASSERT_EQ(detail->status, 200);
  auto doc = Json(detail->body);
  EXPECT_EQ(std::string_view(doc.root["function_id"]), fn);
  EXPECT_EQ(std::string_view(doc.root["latest_version"]), "2.1");
  EXPECT_EQ(std::string_view(doc.root["runtime"]), "lua");
  EXPECT_EQ(std::string_view(doc.root["compute_type"]), "CPU");
  EXPECT_EQ(int64_t(doc.root["price_micro_usd"]), 250);
  EXPECT_EQ(ToJson(doc.root["declared_keys"]), R"(["TOKEN"])");
  EXPECT_EQ(int64_t(doc.root["timeout_ms"]), 30000);
  EXPECT_EQ(int64_t(doc.root["memory_mb"]), 128);
  EXPECT_EQ(std::string_view(doc.root["organization"]["name"]), "Maker");

  struct Case {
    std::string body;
    const char* field;
  } cases[] = {
      {R"({"version":"1.x","runtime":"lua","compute_type":"CPU","code":"x=1"})", "version"},
      {R"({"version":"1.2.3.4.5","runtime":"lua","compute_type":"CPU","code":"x=1"})", "version"},
      {R"({"version":"3","runtime":"ruby","compute_type":"CPU","code":"x=1"})", "runtime"},
      {R"({"version":"3","runtime":"lua","compute_type":"TPU","code":"x=1"})", "compute_type"},
      {R"({"version":"3","runtime":"lua","compute_type":"GPU","code":"x=1"})", "compute_type"},
      {R"({"version":"3","runtime":"lua","compute_type":"CPU","code":"x=1","timeout_ms":900001})",
       "timeout_ms"},
      {R"({"version":"3","runtime":"lua","compute_type":"CPU","code":"x=1","memory_mb":4097})",
       "memory_mb"},
      {R"({"version":"3","runtime":"lua","compute_type":"CPU","code":"x=1","declared_keys":["9x"]})",
       "declared_keys"},
      {R"({"version":"3","runtime":"lua","compute_type":"CPU","code":"function ("})", "code"},
  };
  for (const auto& c : cases) {
    auto r = owner.session().Post("/api/v1/functions/" + fn + "/versions", c.body);
    EXPECT_EQ(r->status, 422) << c.body << " -> " << r->body;
    auto fields = FieldNames(r);
    EXPECT_TRUE(std::find(fields.begin(), fields.end(), c.field) != fields.end())
        << c.body << " -> " << r->body;
  }
  // The compiler's message reaches the publisher.
  auto syntax = owner.session().Post(
      "/api/v1/functions/" + fn + "/versions",
      R"({"version":"3","runtime":"lua","compute_type":"CPU","code":"function ("})");
  EXPECT_NE(syntax->body.find("expected"), std::string::npos) << syntax->body;

  // Only the owner may change a function or publish to it.
  Account other(*g_system, "Other maker");
  EXPECT_EQ(other.session().Patch("/api/v1/functions/" + fn, R"({"price_micro_usd":1})")->status,
            403);
  EXPECT_EQ(other.PublishLua(fn, "9", "x = 1").status, 403);
  auto patched = owner.session().Patch("/api/v1/functions/" + fn, R"({"description":"better"})");
  EXPECT_EQ(patched->status, 200);
  EXPECT_EQ(StringField(patched->body, "description"), "better");

  // A private function of another organization does not exist for others.
  std::string secret_fn = owner.CreateFunction("hidden");
  EXPECT_EQ(other.session().Get("/api/v1/functions/" + secret_fn)->status, 404);
}

TEST(Workspace, AddListRemove) {
  Account owner(*g_system, "Shop");
  Account user(*g_system, "Buyer");
  std::string pub = owner.CreateFunction("public", R"("visibility":"public")");
  std::string priv = owner.CreateFunction("private");
  EXPECT_EQ(
      user.session().Post("/api/v1/workspace/tools", R"({"function_id":")" + priv + "\"}")->status,
      404);
  user.AddToWorkspace(pub);
  auto list = user.session().Get("/api/v1/workspace/tools");
  ASSERT_EQ(list->status, 200);
  auto doc = Json(list->body);
  EXPECT_NE(ToJson(doc.root["added"]).find(pub), std::string::npos);
  EXPECT_EQ(ToJson(doc.root["owned"]).find(pub), std::string::npos);
  auto owned = owner.session().Get("/api/v1/workspace/tools");
  EXPECT_NE(ToJson(Json(owned->body).root["owned"]).find(priv), std::string::npos);
  EXPECT_EQ(user.session().Delete("/api/v1/workspace/tools/" + pub)->status, 204);
  EXPECT_EQ(user.session().Delete("/api/v1/workspace/tools/" + pub)->status, 404);
}

TEST(Functions, DeleteIsTheOwnersAndKeepsTheRecords) {
  Account owner(*g_system, "Closing Shop");
  owner.TopUp(1'000'000);
  std::string owner_key = owner.CreateKey();
  Account user(*g_system, "Former Customer");
  user.TopUp(1'000'000);
  std::string user_key = user.CreateKey();
  std::string fn = owner.CreateFunction("retiring", R"("visibility":"public","price_micro_usd":3)");
  ASSERT_EQ(owner.PublishLua(fn, "1", "function service_handler(e, c) return e end").status, 201);
  user.AddToWorkspace(fn);
  ASSERT_EQ(Invoke(*g_system, user_key, fn, "1", R"({"event":{}})").status, 200);
  ASSERT_EQ(Invoke(*g_system, owner_key, fn, "1", R"({"event":{}})").status, 200);
  const size_t user_ledger = user.Ledger().size();

  EXPECT_EQ(user.session().Delete("/api/v1/functions/" + fn)->status, 403);
  EXPECT_EQ(owner.session().Delete("/api/v1/functions/" + fn)->status, 204);
  EXPECT_EQ(owner.session().Delete("/api/v1/functions/" + fn)->status, 404);

  // Gone for everyone: invocations, the detail, the workspace that had it.
  auto invoked = Invoke(*g_system, user_key, fn, "1", R"({"event":{}})");
  EXPECT_EQ(invoked.status, 404) << invoked.body;
  EXPECT_EQ(StringField(invoked.body, "code"), "function_not_found");
  EXPECT_EQ(Invoke(*g_system, owner_key, fn, "", R"({"event":{}})").status, 404);
  EXPECT_EQ(owner.session().Get("/api/v1/functions/" + fn)->status, 404);
  EXPECT_EQ(user.session().Get("/api/v1/workspace/tools")->body.find(fn), std::string::npos);
  // What was charged and run stays on record.
  EXPECT_EQ(user.Ledger().size(), user_ledger);
  auto executions = user.session().Get("/api/v1/executions");
  ASSERT_EQ(executions->status, 200);
  EXPECT_NE(executions->body.find(fn), std::string::npos);
  // A new function may reuse nothing of it, and the name is free again.
  EXPECT_FALSE(owner.CreateFunction("retiring").empty());
}

TEST(Functions, AnOwnerDeprecatesAndUnpublishesSingleVersions) {
  Account owner(*g_system, "Version Keeper");
  owner.TopUp(1'000'000);
  std::string key = owner.CreateKey();
  Account other(*g_system, "Bystander");
  std::string fn = owner.CreateFunction("versioned", R"("visibility":"public")");
  for (const char* v : {"1.0.0", "1.1.0", "2.0.0"}) {
    std::string code = std::string("function service_handler(e, c) return {v = '") + v + "'} end";
    ASSERT_EQ(owner.PublishLua(fn, v, code).status, 201);
  }
  const std::string base = "/api/v1/functions/" + fn + "/versions/";

  // Deprecating marks the version; it still runs for whoever pins it.
  auto r = owner.session().Patch(base + "1.0.0", R"({"deprecated": true})");
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_NE(r->body.find(R"("deprecated":true)"), std::string::npos) << r->body;
  auto detail = owner.session().Get("/api/v1/functions/" + fn);
  auto versions = Json(detail->body).root["versions"];
  EXPECT_TRUE(bool(versions.at(2)["deprecated"].get_bool())) << detail->body;  // 1.0.0
  EXPECT_FALSE(bool(versions.at(0)["deprecated"].get_bool())) << detail->body;
  auto called = Invoke(*g_system, key, fn, "1.0.0", R"({"event":{}})");
  EXPECT_EQ(called.status, 200) << called.body;
  EXPECT_NE(called.body.find("1.0.0"), std::string::npos) << called.body;
  ASSERT_EQ(owner.session().Patch(base + "1.0.0", R"({"deprecated": false})")->status, 200);
  detail = owner.session().Get("/api/v1/functions/" + fn);
  EXPECT_FALSE(bool(Json(detail->body).root["versions"].at(2)["deprecated"].get_bool()));

  // Bad requests change nothing.
  EXPECT_EQ(Code(owner.session().Patch(base + "1.0.0", R"({"deprecated": "yes"})")),
            "validation_failed");
  EXPECT_EQ(Code(owner.session().Patch(base + "1.0.0", R"({})")), "validation_failed");
  EXPECT_EQ(Code(owner.session().Patch(base + "1.0.0", R"({"deprecated": true, "x": 1})")),
            "validation_failed");
  EXPECT_EQ(Code(owner.session().Patch(base + "9.9.9", R"({"deprecated": true})")),
            "version_not_found");
  // Only the publishing organization decides, even over a public function.
  EXPECT_EQ(Code(other.session().Patch(base + "1.0.0", R"({"deprecated": true})")), "forbidden");
  EXPECT_EQ(Code(other.session().Delete(base + "2.0.0")), "forbidden");

  // Unpublishing the latest: pinned calls are 404, "latest" is the next highest.
  called = Invoke(*g_system, key, fn, "", R"({"event":{}})");
  EXPECT_NE(called.body.find("2.0.0"), std::string::npos) << called.body;
  r = owner.session().Delete(base + "2.0.0");
  ASSERT_EQ(r->status, 204) << r->body;
  EXPECT_EQ(Code(owner.session().Delete(base + "2.0.0")), "version_not_found");
  called = Invoke(*g_system, key, fn, "2.0.0", R"({"event":{}})");
  EXPECT_EQ(called.status, 404) << called.body;
  EXPECT_EQ(StringField(called.body, "code"), "version_not_found");
  called = Invoke(*g_system, key, fn, "", R"({"event":{}})");
  EXPECT_EQ(called.status, 200) << called.body;
  EXPECT_NE(called.body.find("1.1.0"), std::string::npos) << called.body;
  detail = owner.session().Get("/api/v1/functions/" + fn);
  EXPECT_EQ(StringField(detail->body, "latest_version"), "1.1.0");
  EXPECT_EQ(detail->body.find("2.0.0"), std::string::npos) << detail->body;
  // Its number never comes back (executors cache code by number), nor one equal to it.
  auto again = owner.PublishLua(fn, "2.0.0", "function service_handler(e, c) return 1 end");
  EXPECT_EQ(again.status, 409) << again.body;
  EXPECT_EQ(StringField(again.body, "code"), "version_exists");
  EXPECT_EQ(owner.PublishLua(fn, "2.0", "function service_handler(e, c) return 1 end").status, 409);
  EXPECT_EQ(owner.PublishLua(fn, "2.0.1", "function service_handler(e, c) return 1 end").status,
            201);
  // Deleting the function takes the kept numbers with it.
  EXPECT_EQ(owner.session().Delete("/api/v1/functions/" + fn)->status, 204);
}

TEST(Functions, TheLastSevenDaysShowTheSuccessRateAndTheMedianLatency) {
  Account owner(*g_system, "Measured");
  owner.TopUp(1'000'000);
  std::string key = owner.CreateKey();
  std::string fn = owner.CreateFunction("sometimes fails");
  ASSERT_EQ(owner
                .PublishLua(fn, "1",
                            "function service_handler(e, c)\n"
                            "  if e.fail then return {statusCode = 500, body = 'no'} end\n"
                            "  return {statusCode = 200, body = 'yes'}\n"
                            "end")
                .status,
            201);
  for (const char* event :
       {R"({"event":{}})", R"({"event":{}})", R"({"event":{"fail":true}})", R"({"event":{}})"}) {
    ASSERT_NE(Invoke(*g_system, key, fn, "1", event).status, 0);
  }
  // The registry learns of runs from billing's execution events, written once a second.
  std::string week;
  auto counted = [&] {
    auto detail = owner.session().Get("/api/v1/functions/" + fn);
    if (!detail.ok() || detail->status != 200) {
      ADD_FAILURE() << "GET the function: " << (detail.ok() ? detail->body : "no answer");
      return true;  // no use polling what cannot be read
    }
    week = ToJson(Json(detail->body).root["last_7_days"]);
    return week.find(R"("executions":4)") != std::string::npos;
  };
  ASSERT_TRUE(WaitUntil(counted, 15000, "the registry to count four executions", 0)) << week;
  ASSERT_FALSE(HasFailure());
  auto doc = Json(week);
  EXPECT_EQ(int64_t(doc.root["executions"].get_int64()), 4) << week;
  double rate = 0;
  ASSERT_EQ(doc.root["success_rate"].get_double().get(rate), simdjson::SUCCESS) << week;
  EXPECT_DOUBLE_EQ(rate, 0.75) << week;
  int64_t p50 = 0;
  ASSERT_EQ(doc.root["p50_ms"].get_int64().get(p50), simdjson::SUCCESS) << week;
  EXPECT_GE(p50, 1);

  // Cards show the same figures (here the favorites' cards, which include one's own tools).
  ASSERT_EQ(owner.session().Put("/api/v1/favorites/" + fn, "")->status, 204);
  auto favorites = owner.session().Get("/api/v1/favorites");
  ASSERT_EQ(favorites->status, 200) << favorites->body;
  auto card_week = ToJson(Json(favorites->body).root["items"].at(0)["last_7_days"]);
  EXPECT_EQ(card_week, week);
}

TEST(Ledger, PaginationHasNoDuplicatesOrGaps) {
  Account acct(*g_system, "Pages");
  for (int i = 1; i <= 7; ++i) acct.TopUp(i);
  std::set<std::string> seen;
  std::string cursor;
  int pages = 0;
  for (;;) {
    std::string path = "/api/v1/billing/ledger?limit=3";
    if (!cursor.empty()) path += "&cursor=" + http::UrlEncode(cursor);
    auto r = acct.session().Get(path);
    ASSERT_EQ(r->status, 200) << r->body;
    auto doc = Json(r->body);
    for (auto item : doc.root["items"].get_array()) {
      EXPECT_TRUE(seen.insert(std::string(ToJson(item["id"]))).second);
    }
    ++pages;
    std::string_view next;
    if (doc.root["next_cursor"].get_string().get(next) != simdjson::SUCCESS) break;
    cursor = std::string(next);
  }
  EXPECT_EQ(seen.size(), 7u);
  EXPECT_EQ(pages, 3);
  EXPECT_EQ(acct.Balance(), 28);
  auto bad = acct.session().Get("/api/v1/billing/ledger?limit=500");
  EXPECT_EQ(bad->status, 422);
  bad = acct.session().Get("/api/v1/billing/ledger?cursor=garbage");
  EXPECT_EQ(bad->status, 422);
}

TEST(Health, AllServicesAnswer) {
  auto r = g_system->Client()->Get("/healthz");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(StringField(r->body, "status"), "ok");
}

}  // namespace
}  // namespace toolgate::testing
