#include "toolgate/registry/multipart_form.h"

#include <gtest/gtest.h>

namespace toolgate::registry {
namespace {

const std::string kType = "multipart/form-data; boundary=XyZ";

TEST(MultipartFormTest, SplitsPartsWithBinaryBodies) {
  const std::string binary("\x1f\x8b\x00\r\n-\xff", 7);
  const std::string body =
      "preamble\r\n--XyZ\r\n"
      "Content-Disposition: form-data; name=\"metadata\"\r\n"
      "Content-Type: application/json\r\n\r\n"
      "{\"version\":\"1.0\"}\r\n--XyZ\r\n"
      "content-disposition: form-data; name=bundle; filename=\"tool; v1.tar.gz\"\r\n\r\n" +
      binary + "\r\n--XyZ--\r\nepilogue";
  auto parts = ParseMultipartForm(kType, body);
  ASSERT_TRUE(parts.ok()) << parts.status().ToString();
  ASSERT_EQ(parts->size(), 2u);
  EXPECT_EQ((*parts)[0].name, "metadata");
  EXPECT_EQ((*parts)[0].content_type, "application/json");
  EXPECT_EQ((*parts)[0].body, "{\"version\":\"1.0\"}");
  EXPECT_EQ((*parts)[1].name, "bundle");
  EXPECT_EQ((*parts)[1].filename, "tool; v1.tar.gz");
  EXPECT_EQ((*parts)[1].body, binary);
}

TEST(MultipartFormTest, RecognisesTheMediaType) {
  EXPECT_TRUE(IsMultipartForm("Multipart/Form-Data; boundary=a"));
  EXPECT_FALSE(IsMultipartForm("application/json"));
  EXPECT_FALSE(IsMultipartForm("multipart/mixed; boundary=a"));
}

TEST(MultipartFormTest, RefusesMalformedBodies) {
  const std::string part = "--XyZ\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nx";
  EXPECT_FALSE(ParseMultipartForm("multipart/form-data", part + "\r\n--XyZ--").ok());
  EXPECT_FALSE(ParseMultipartForm(kType, part).ok());  // no closing delimiter
  EXPECT_FALSE(ParseMultipartForm(kType, "no boundary here").ok());
  EXPECT_FALSE(
      ParseMultipartForm(kType, "--XyZ\r\nContent-Type: text/plain\r\n\r\nx\r\n--XyZ--").ok());
  EXPECT_FALSE(ParseMultipartForm(kType, part + "\r\n" + part + "\r\n--XyZ--").ok());  // twice
  auto refused = ParseMultipartForm(kType, part);
  EXPECT_EQ(refused.status().message(),
            "the multipart/form-data body is malformed: the closing boundary is missing");
}

}  // namespace
}  // namespace toolgate::registry
