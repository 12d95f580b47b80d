#include "toolgate/secrets/requests.h"

#include <gtest/gtest.h>

namespace toolgate::secrets {
namespace {

TEST(SecretName, Rule) {
  for (const char* good : {"a", "_", "OPENAI_API_KEY", "db.password", "prod-token-2", "A9"}) {
    EXPECT_TRUE(IsValidSecretName(good)) << good;
  }
  for (const char* bad : {"", "9lives", "-x", ".x", "has space", "a/b", "ключ", "a=b"}) {
    EXPECT_FALSE(IsValidSecretName(bad)) << bad;
  }
  EXPECT_TRUE(IsValidSecretName(std::string(128, 'a')));
  EXPECT_FALSE(IsValidSecretName(std::string(129, 'a')));
}

TEST(SecretValue, Rule) {
  EXPECT_TRUE(IsValidSecretValue("x"));
  EXPECT_TRUE(IsValidSecretValue(std::string(64 * 1024, 'x')));
  EXPECT_FALSE(IsValidSecretValue(std::string(64 * 1024 + 1, 'x')));
  EXPECT_FALSE(IsValidSecretValue(""));
  EXPECT_FALSE(IsValidSecretValue(std::string("a\0b", 3)));
}

std::vector<std::string> Fields(const std::variant<v1::Problem, SecretInput>& result) {
  std::vector<std::string> out;
  if (const auto* p = std::get_if<v1::Problem>(&result)) {
    for (const auto& e : p->errors()) out.push_back(e.field());
  }
  return out;
}

TEST(ParseSecretInput, Create) {
  auto ok = ParseSecretInput(R"({"name": "API_KEY", "value": "sk-123"})", true);
  ASSERT_TRUE(std::holds_alternative<SecretInput>(ok));
  EXPECT_EQ(std::get<SecretInput>(ok).name, "API_KEY");
  EXPECT_EQ(std::get<SecretInput>(ok).value, "sk-123");

  EXPECT_EQ(Fields(ParseSecretInput("{}", true)), (std::vector<std::string>{"name", "value"}));
  EXPECT_EQ(Fields(ParseSecretInput(R"({"name": "1x", "value": 5})", true)),
            (std::vector<std::string>{"name", "value"}));
  EXPECT_EQ(Fields(ParseSecretInput(R"({"name": "k", "value": "a\u0000b"})", true)),
            (std::vector<std::string>{"value"}));
}

TEST(ParseSecretInput, UpdateNeedsOnlyTheValue) {
  auto ok = ParseSecretInput(R"({"value": "new"})", false);
  ASSERT_TRUE(std::holds_alternative<SecretInput>(ok));
  EXPECT_EQ(std::get<SecretInput>(ok).value, "new");
  EXPECT_EQ(Fields(ParseSecretInput(R"({"value": ""})", false)),
            (std::vector<std::string>{"value"}));
}

TEST(ParseSecretInput, ProblemsNeverQuoteTheValue) {
  auto result = ParseSecretInput(R"({"name": "bad name", "value": "hunter2"})", true);
  ASSERT_TRUE(std::holds_alternative<v1::Problem>(result));
  EXPECT_EQ(std::get<v1::Problem>(result).DebugString().find("hunter2"), std::string::npos);
  auto not_json = ParseSecretInput(R"({"value": "hunter2")", true);
  ASSERT_TRUE(std::holds_alternative<v1::Problem>(not_json));
  EXPECT_EQ(std::get<v1::Problem>(not_json).status(), 400);
  EXPECT_EQ(std::get<v1::Problem>(not_json).DebugString().find("hunter2"), std::string::npos);
}

}  // namespace
}  // namespace toolgate::secrets
