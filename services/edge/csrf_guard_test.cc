#include "csrf_guard.h"

#include <gtest/gtest.h>

namespace toolgate::edge {
namespace {

// A cookie-authenticated POST as the web app sends it.
CsrfRequest AppPost() {
  return CsrfRequest{.method = "POST",
                     .path = "/api-keys",
                     .has_session_cookie = true,
                     .csrf_header = "1",
                     .origin = "http://127.0.0.1:8080",
                     .host = "127.0.0.1:8080",
                     .content_type = "application/json",
                     .has_body = true};
}

const std::vector<std::string> kNoOrigins;

TEST(CsrfGuardTest, TheWebAppsRequestPasses) {
  EXPECT_EQ(CheckCsrf(AppPost(), kNoOrigins), CsrfVerdict::kAllow);
}

TEST(CsrfGuardTest, ForeignOriginWithTextPlainIsRefused) {
  CsrfRequest r = AppPost();
  r.csrf_header = "";
  r.origin = "http://127.0.0.1:9999";
  r.content_type = "text/plain";
  EXPECT_EQ(CheckCsrf(r, kNoOrigins), CsrfVerdict::kForeignOrigin);
}

TEST(CsrfGuardTest, ForeignOriginIsRefusedEvenWithTheHeader) {
  CsrfRequest r = AppPost();
  r.origin = "http://127.0.0.1:9999";
  EXPECT_EQ(CheckCsrf(r, kNoOrigins), CsrfVerdict::kForeignOrigin);
}

TEST(CsrfGuardTest, NoHeaderAndNoOriginIsRefused) {
  CsrfRequest r = AppPost();
  r.csrf_header = "";
  r.origin = "";
  EXPECT_EQ(CheckCsrf(r, kNoOrigins), CsrfVerdict::kMissingToken);
}

TEST(CsrfGuardTest, TheHeaderWithoutOriginPasses) {  // the CLI
  CsrfRequest r = AppPost();
  r.origin = "";
  EXPECT_EQ(CheckCsrf(r, kNoOrigins), CsrfVerdict::kAllow);
}

TEST(CsrfGuardTest, SameOriginWithoutTheHeaderPasses) {
  CsrfRequest r = AppPost();
  r.csrf_header = "";
  EXPECT_EQ(CheckCsrf(r, kNoOrigins), CsrfVerdict::kAllow);
}

TEST(CsrfGuardTest, ConfiguredAppOriginPasses) {
  CsrfRequest r = AppPost();
  r.csrf_header = "";
  r.origin = "https://App.Example.com";
  EXPECT_EQ(CheckCsrf(r, kNoOrigins), CsrfVerdict::kForeignOrigin);
  EXPECT_EQ(CheckCsrf(r, {"https://app.example.com"}), CsrfVerdict::kAllow);
}

TEST(CsrfGuardTest, TokenOnlyCountsWithTheExactValue) {
  CsrfRequest r = AppPost();
  r.origin = "";
  r.csrf_header = "yes";
  EXPECT_EQ(CheckCsrf(r, kNoOrigins), CsrfVerdict::kMissingToken);
}

TEST(CsrfGuardTest, BodyMustBeJson) {
  CsrfRequest r = AppPost();
  r.content_type = "text/plain";
  EXPECT_EQ(CheckCsrf(r, kNoOrigins), CsrfVerdict::kNotJson);
  r.content_type = "application/x-www-form-urlencoded";
  EXPECT_EQ(CheckCsrf(r, kNoOrigins), CsrfVerdict::kNotJson);
  r.content_type = "";
  EXPECT_EQ(CheckCsrf(r, kNoOrigins), CsrfVerdict::kNotJson);
  r.content_type = "Application/JSON; charset=utf-8";
  EXPECT_EQ(CheckCsrf(r, kNoOrigins), CsrfVerdict::kAllow);
}

TEST(CsrfGuardTest, ABundleUploadIsMultipartWithTheHeaderOnly) {
  CsrfRequest r = AppPost();
  r.path = "/functions/6f1c2b9e-3d4a-4b5c-8d7e-9f0a1b2c3d4e/versions";
  r.content_type = "multipart/form-data; boundary=x";
  EXPECT_EQ(CheckCsrf(r, kNoOrigins), CsrfVerdict::kAllow);
  // A cross-site form can send multipart from the app's own site too, but never the header.
  r.csrf_header = "";
  EXPECT_EQ(CheckCsrf(r, kNoOrigins), CsrfVerdict::kNotJson);
  // Other routes take JSON only.
  r = AppPost();
  r.content_type = "multipart/form-data; boundary=x";
  EXPECT_EQ(CheckCsrf(r, kNoOrigins), CsrfVerdict::kNotJson);
}

TEST(CsrfGuardTest, BodilessDeleteNeedsNoContentType) {
  CsrfRequest r = AppPost();
  r.method = "DELETE";
  r.content_type = "";
  r.has_body = false;
  EXPECT_EQ(CheckCsrf(r, kNoOrigins), CsrfVerdict::kAllow);
  r.csrf_header = "";
  r.origin = "";
  EXPECT_EQ(CheckCsrf(r, kNoOrigins), CsrfVerdict::kMissingToken);
}

TEST(CsrfGuardTest, ApiKeysAndReadsAreNotChecked) {
  CsrfRequest r = AppPost();
  r.csrf_header = "";
  r.origin = "http://evil.example";
  r.content_type = "text/plain";
  r.has_api_key = true;
  EXPECT_EQ(CheckCsrf(r, kNoOrigins), CsrfVerdict::kAllow);
  r.has_api_key = false;
  r.method = "GET";
  EXPECT_EQ(CheckCsrf(r, kNoOrigins), CsrfVerdict::kAllow);
}

TEST(CsrfGuardTest, WithoutACookieOnlySignInRoutesAreChecked) {
  CsrfRequest r = AppPost();
  r.has_session_cookie = false;
  r.csrf_header = "";
  r.origin = "http://evil.example";
  r.content_type = "text/plain";
  EXPECT_EQ(CheckCsrf(r, kNoOrigins), CsrfVerdict::kAllow);  // 401 follows: nothing to forge
  r.path = "/auth/login";
  EXPECT_EQ(CheckCsrf(r, kNoOrigins), CsrfVerdict::kForeignOrigin);
  r.origin = "";
  EXPECT_EQ(CheckCsrf(r, kNoOrigins), CsrfVerdict::kAllow);  // a script (curl -d): no header
  r.content_type = "application/json";
  EXPECT_EQ(CheckCsrf(r, kNoOrigins), CsrfVerdict::kAllow);
  r.path = "/auth/signup";
  r.origin = "http://127.0.0.1:8080";
  EXPECT_EQ(CheckCsrf(r, kNoOrigins), CsrfVerdict::kAllow);
}

}  // namespace
}  // namespace toolgate::edge
