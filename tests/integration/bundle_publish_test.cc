// Publishing bundles and egress declarations through a real system: JSON base64 and multipart
// uploads, one stored copy per digest, bad bundles refused with nothing stored, the bundle served
// to executors on tg.registry.code, and egress shown to callers.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "system.h"
#include "system_postgres.h"
#include "test_bundles.h"
#include "toolgate/base/crypto.h"
#include "toolgate/base/json_writer.h"
#include "toolgate/bus/bus.h"
#include "toolgate/core/bus_permissions.h"
#include "toolgate/pg/pg.h"
#include "toolgate/registry/subjects.h"
#include "toolgate/v1/toolgate.pb.h"

namespace toolgate::testing {
namespace {

using registry::Dir;
using registry::File;
using registry::Hardlink;
using registry::Pack;
using registry::Symlink;
using registry::TestEntry;

const auto* const kEnv = ::testing::AddGlobalTestEnvironment(new SharedSystem());

const char* const kHandler =
    "from vendored.greeting import hello\n\n"
    "def service_handler(event, context):\n"
    "    return {'greeting': hello(event.get('name', 'world'))}\n";

std::string PythonBundle(const std::string& salt = "") {
  return Pack({Dir("src"), File("src/main.py", kHandler), Dir("src/vendored"),
               File("src/vendored/__init__.py", ""),
               File("src/vendored/greeting.py",
                    "def hello(name):\n    return 'hello ' + name" + salt + "\n")});
}

// The JSON fields of a python version, without its code.
std::string Metadata(const std::string& version, const std::string& extra = "") {
  return R"({"version":")" + version + R"(","runtime":"python","compute_type":"CPU")" + extra + "}";
}

http::HttpResponse PublishJson(Account& owner, const std::string& fn, const std::string& version,
                               const std::string& archive, const std::string& extra = "") {
  auto r = owner.session().Post(
      "/api/v1/functions/" + fn + "/versions",
      Metadata(version, R"(,"bundle":")" + Base64Encode(archive) + "\"" + extra));
  if (!r.ok()) ADD_FAILURE() << r.status().ToString();
  return r.ok() ? *r : http::HttpResponse{};
}

http::HttpResponse PublishMultipart(Account& owner, const std::string& fn,
                                    const std::string& metadata, const std::string& archive) {
  const std::string boundary = "tg" + HexEncode(RandomBytes(12));
  std::string body = "--" + boundary +
                     "\r\nContent-Disposition: form-data; name=\"metadata\"\r\n"
                     "Content-Type: application/json\r\n\r\n" +
                     metadata + "\r\n--" + boundary +
                     "\r\nContent-Disposition: form-data; name=\"bundle\"; "
                     "filename=\"tool.tar.gz\"\r\nContent-Type: application/gzip\r\n\r\n" +
                     archive + "\r\n--" + boundary + "--\r\n";
  auto r = owner.session().Post("/api/v1/functions/" + fn + "/versions", body,
                                {{"Content-Type", "multipart/form-data; boundary=" + boundary}});
  if (!r.ok()) ADD_FAILURE() << r.status().ToString();
  return r.ok() ? *r : http::HttpResponse{};
}

// The field errors of a 422, "field: message" each.
std::vector<std::string> Errors(const http::HttpResponse& r) {
  std::vector<std::string> out;
  auto doc = ParseJson(r.body);
  simdjson::dom::array errors;
  if (!doc.ok() || doc->root["errors"].get_array().get(errors)) return out;
  for (auto e : errors) {
    out.push_back(std::string(std::string_view(e["field"])) + ": " +
                  std::string(std::string_view(e["message"])));
  }
  return out;
}

TEST(Bundles, PublishedAsBase64AndShownWithItsEgress) {
  Account owner(*g_system, "Bundler");
  std::string fn = owner.CreateFunction("Greeter", R"("visibility":"public","price_micro_usd":0)");
  const std::string archive = PythonBundle("!");
  auto r = PublishJson(
      owner, fn, "1.0", archive,
      R"(,"handler":"src/main.py","egress":["api.open-meteo.com","*.example.com:8443"])");
  ASSERT_EQ(r.status, 201) << r.body;
  auto version = Json(r.body);
  EXPECT_EQ(std::string_view(version.root["handler"]), "src/main.py");
  EXPECT_EQ(std::string_view(version.root["bundle"]["digest"]), HexEncode(Sha256(archive)));
  EXPECT_EQ(int64_t(version.root["bundle"]["size_bytes"]), static_cast<int64_t>(archive.size()));
  EXPECT_EQ(int64_t(version.root["bundle"]["files"]), 5);

  // Callers see where it may connect before they run it, signed in or not.
  auto anonymous = g_system->Client()->Get("/api/v1/functions/" + fn);
  ASSERT_EQ(anonymous->status, 200);
  auto detail = Json(anonymous->body);
  EXPECT_EQ(ToJson(detail.root["egress"]), R"(["api.open-meteo.com","*.example.com:8443"])");
  EXPECT_EQ(std::string_view(detail.root["handler"]), "src/main.py");
  EXPECT_EQ(std::string_view(detail.root["bundle"]["digest"]), HexEncode(Sha256(archive)));
  EXPECT_EQ(ToJson(detail.root["versions"].at(0)["egress"]),
            R"(["api.open-meteo.com","*.example.com:8443"])");

  // Single-file code without egress shows none.
  ASSERT_EQ(owner.PublishLua(fn, "2.0", "function service_handler(e, c) return e end").status, 201);
  detail = Json(g_system->Client()->Get("/api/v1/functions/" + fn)->body);
  EXPECT_EQ(ToJson(detail.root["egress"]), "[]");
  EXPECT_TRUE(detail.root["bundle"].is_null());
  EXPECT_TRUE(detail.root["handler"].is_null());
}

TEST(Bundles, MultipartUploadAndTheSameBundleIsStoredOnce) {
  Account owner(*g_system, "Uploader");
  std::string fn = owner.CreateFunction("Uploaded");
  std::string other_fn = owner.CreateFunction("Uploaded again");
  const std::string archive = PythonBundle(" (multipart)");
  const std::string digest = HexEncode(Sha256(archive));
  auto first = PublishMultipart(owner, fn, Metadata("1.0", R"(,"handler":"src/main.py")"), archive);
  ASSERT_EQ(first.status, 201) << first.body;
  EXPECT_EQ(StringField(first.body, "handler"), "src/main.py");
  // The same archive again, by JSON and by another function: still one stored copy.
  ASSERT_EQ(PublishJson(owner, fn, "1.1", archive, R"(,"handler":"src/main.py")").status, 201);
  ASSERT_EQ(
      PublishMultipart(owner, other_fn, Metadata("1.0", R"(,"handler":"src/main.py")"), archive)
          .status,
      201);
  auto pg = SystemPostgres(*g_system);
  EXPECT_EQ(CountRows(*pg, "SELECT count(*) FROM registry.bundles WHERE digest = $1", {digest}), 1);
  EXPECT_EQ(
      CountRows(*pg, "SELECT count(*) FROM registry.versions WHERE bundle_digest = $1", {digest}),
      3);

  // Deleting one function keeps the copy the other still publishes; deleting both removes it.
  ASSERT_EQ(owner.session().Delete("/api/v1/functions/" + fn)->status, 204);
  EXPECT_EQ(CountRows(*pg, "SELECT count(*) FROM registry.bundles WHERE digest = $1", {digest}), 1);
  ASSERT_EQ(owner.session().Delete("/api/v1/functions/" + other_fn)->status, 204);
  EXPECT_EQ(CountRows(*pg, "SELECT count(*) FROM registry.bundles WHERE digest = $1", {digest}), 0);
}

TEST(Bundles, UnpublishingTheLastVersionOfABundleRemovesIt) {
  Account owner(*g_system, "Unpublisher");
  std::string fn = owner.CreateFunction("Shrinking");
  const std::string archive = PythonBundle(" (unpublished)");
  const std::string digest = HexEncode(Sha256(archive));
  ASSERT_EQ(PublishJson(owner, fn, "1.0", archive, R"(,"handler":"src/main.py")").status, 201);
  ASSERT_EQ(PublishJson(owner, fn, "1.1", archive, R"(,"handler":"src/main.py")").status, 201);
  auto pg = SystemPostgres(*g_system);
  const std::string versions = "/api/v1/functions/" + fn + "/versions/";
  ASSERT_EQ(owner.session().Delete(versions + "1.1")->status, 204);
  EXPECT_EQ(CountRows(*pg, "SELECT count(*) FROM registry.bundles WHERE digest = $1", {digest}), 1);
  ASSERT_EQ(owner.session().Delete(versions + "1.0")->status, 204);
  EXPECT_EQ(CountRows(*pg, "SELECT count(*) FROM registry.bundles WHERE digest = $1", {digest}), 0);
}

TEST(Bundles, ExecutorsGetTheBundleOnTheCodeSubject) {
  Account owner(*g_system, "Served");
  std::string fn = owner.CreateFunction("Served tool");
  const std::string archive = PythonBundle(" (served)");
  ASSERT_EQ(PublishJson(owner, fn, "1.0", archive, R"(,"handler":"src/main.py")").status, 201);

  // Asked as the executor asks: its own NATS user, its own inbox.
  bus::BusOptions options;
  options.url = g_system->State("nats_url");
  options.user = "executor";
  options.password = g_system->Secret("nats-executor.password");
  options.inbox_prefix = core::InboxPrefix("executor");
  auto executor = bus::Bus::Connect(options);
  ASSERT_TRUE(executor.ok()) << executor.status().ToString();
  v1::CodeRequest request;
  request.set_function_id(fn);
  request.set_version("1.0");
  auto answer = (*executor)->Request(registry::kCodeSubject, request.SerializeAsString(), 10000);
  ASSERT_TRUE(answer.ok()) << answer.status().ToString();
  v1::CodeReply reply;
  ASSERT_TRUE(reply.ParseFromString(answer->data));
  EXPECT_TRUE(reply.found());
  EXPECT_EQ(reply.code(), "");
  EXPECT_EQ(reply.bundle(), archive);
  EXPECT_EQ(reply.bundle_digest(), HexEncode(Sha256(archive)));
}

TEST(Bundles, EachBadBundleIs422WithItsReasonAndNothingIsStored) {
  Account owner(*g_system, "Attacker");
  std::string fn = owner.CreateFunction("Evil");
  auto pg = SystemPostgres(*g_system);
  const int64_t bundles_before = CountRows(*pg, "SELECT count(*) FROM registry.bundles");
  struct Case {
    std::vector<TestEntry> entries;
    std::string error;
  };
  const Case cases[] = {
      {{File("handler.py", kHandler), File("../evil.py")},
       "bundle: ../evil.py: a path may not leave the bundle"},
      {{File("handler.py", kHandler), File("/etc/cron.d/evil")},
       "bundle: /etc/cron.d/evil: a path may not be absolute"},
      {{File("handler.py", kHandler), Symlink("passwd", "../../../etc/passwd")},
       "bundle: passwd: a link may not point out of the bundle"},
      {{File("handler.py", kHandler), Hardlink("shadow", "/etc/shadow")},
       "bundle: shadow: a hard link must point to a file earlier in the bundle"},
      {{File("handler.py", kHandler), registry::Entry("sda", AE_IFBLK)},
       "bundle: sda: device files are not allowed"},
      {{File("main.py", kHandler)},
       "bundle: handler.py: the handler must be a regular file in the bundle"},
  };
  for (const Case& c : cases) {
    auto r = PublishJson(owner, fn, "1.0", Pack(c.entries));
    EXPECT_EQ(r.status, 422) << r.body;
    EXPECT_EQ(Errors(r), std::vector<std::string>{c.error}) << r.body;
  }
  auto not_gzip =
      PublishJson(owner, fn, "1.0", Pack({File("handler.py", kHandler)}, registry::Packing::kTar));
  EXPECT_EQ(Errors(not_gzip),
            std::vector<std::string>{"bundle: is not a gzip-compressed tar archive"});
  auto multipart =
      PublishMultipart(owner, fn, Metadata("1.0"), Pack({File("handler.py"), File("../x.py")}));
  EXPECT_EQ(Errors(multipart),
            std::vector<std::string>{"bundle: ../x.py: a path may not leave the bundle"});
  // Too many files, over the limits: the registry's defaults are 10,000 entries and 250 MiB.
  std::vector<TestEntry> many = {File("handler.py", kHandler)};
  for (int i = 0; i < 10'000; ++i) many.push_back(File("m" + std::to_string(i) + ".py", ""));
  EXPECT_EQ(Errors(PublishJson(owner, fn, "1.0", Pack(many))),
            std::vector<std::string>{"bundle: has more than 10000 entries"});
  EXPECT_EQ(Errors(PublishJson(owner, fn, "1.0",
                               Pack({File("handler.py", kHandler),
                                     File("zeros", std::string(251u << 20, '\0'))}))),
            std::vector<std::string>{"bundle: unpacks to more than 250 MiB"});

  auto detail = Json(owner.session().Get("/api/v1/functions/" + fn)->body);
  EXPECT_EQ(detail.root["versions"].get_array().size(), 0u);
  EXPECT_EQ(CountRows(*pg, "SELECT count(*) FROM registry.bundles"), bundles_before);
}

TEST(Bundles, LargerThanTheGeneralBodyLimitAndTheOldBusLimit) {
  Account owner(*g_system, "Heavy");
  std::string fn = owner.CreateFunction("Heavy tool");
  // Random bytes do not compress: 14 MiB of them are a 14 MiB archive, 18.7 MiB in base64, over
  // both the edge's 6 MiB general limit and the 16 MiB NATS messages used to carry.
  const std::string archive =
      Pack({File("handler.py", kHandler), File("blob.bin", RandomBytes(14u << 20))});
  auto r = PublishJson(owner, fn, "1.0", archive);
  ASSERT_EQ(r.status, 201) << r.body.substr(0, 500);
  EXPECT_EQ(StringField(r.body, "handler"), "handler.py");
  // Every other route keeps the general limit.
  auto big = owner.session().Post("/api/v1/functions", std::string(7u << 20, ' '));
  ASSERT_TRUE(big.ok());
  EXPECT_EQ(big->status, 413);
  // Past the compressed limit (50 MiB) even the upload route says why.
  auto over = PublishMultipart(
      owner, fn, Metadata("2.0"),
      Pack({File("handler.py", kHandler), File("blob.bin", RandomBytes(51u << 20))}));
  EXPECT_EQ(Errors(over), std::vector<std::string>{"bundle: is over 50 MiB compressed"});
}

TEST(Egress, InvalidEntriesAre422OnTheirIndexAndNothingIsPublished) {
  Account owner(*g_system, "Egress");
  std::string fn = owner.CreateFunction("Net tool");
  auto r = owner.PublishLua(fn, "1.0", "function service_handler(e, c) return e end",
                            R"("egress":["api.x.com","*.*.com","a.com:0"])");
  EXPECT_EQ(r.status, 422) << r.body;
  std::vector<std::string> fields;
  for (const std::string& e : Errors(r)) fields.push_back(e.substr(0, e.find(':')));
  EXPECT_EQ(fields, (std::vector<std::string>{"egress[1]", "egress[2]"})) << r.body;
  EXPECT_EQ(Json(owner.session().Get("/api/v1/functions/" + fn)->body)
                .root["versions"]
                .get_array()
                .size(),
            0u);
  auto ok = owner.PublishLua(fn, "1.0", "function service_handler(e, c) return e end",
                             R"("egress":["*"])");
  ASSERT_EQ(ok.status, 201) << ok.body;
  EXPECT_EQ(ToJson(Json(ok.body).root["egress"]), R"(["*"])");
}

}  // namespace
}  // namespace toolgate::testing
