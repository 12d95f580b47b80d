#include "toolgate/core/env_keys.h"

#include <gtest/gtest.h>

namespace toolgate::core {
namespace {

std::vector<std::pair<std::string, std::string>> Pairs(std::string_view header) {
  auto parsed = ParseEnvKeys(header);
  EXPECT_TRUE(parsed.ok()) << header << ": " << parsed.status().ToString();
  std::vector<std::pair<std::string, std::string>> out;
  if (parsed.ok()) {
    for (const auto& m : *parsed) out.emplace_back(m.name, m.secret_id);
  }
  return out;
}

using PairList = std::vector<std::pair<std::string, std::string>>;

TEST(EnvKeysTest, ParsesOnePair) {
  EXPECT_EQ(Pairs("OPENAI_API_KEY=sec_123"), (PairList{{"OPENAI_API_KEY", "sec_123"}}));
}

TEST(EnvKeysTest, ParsesSeveralPairsInOrder) {
  EXPECT_EQ(Pairs("B=2,A=1,_c9=3"), (PairList{{"B", "2"}, {"A", "1"}, {"_c9", "3"}}));
}

TEST(EnvKeysTest, AllowsWhitespaceAroundCommasAndEquals) {
  EXPECT_EQ(Pairs("  A = 1 ,\tB\t=\t2  "), (PairList{{"A", "1"}, {"B", "2"}}));
  EXPECT_EQ(Pairs("A=1 , B=2"), (PairList{{"A", "1"}, {"B", "2"}}));
}

TEST(EnvKeysTest, KeepsUuidSecretIds) {
  EXPECT_EQ(Pairs("K=123e4567-e89b-42d3-a456-426614174000"),
            (PairList{{"K", "123e4567-e89b-42d3-a456-426614174000"}}));
}

TEST(EnvKeysTest, NamesAreCaseSensitive) {
  EXPECT_EQ(Pairs("key=1,KEY=2"), (PairList{{"key", "1"}, {"KEY", "2"}}));
}

void ExpectInvalid(std::string_view header) {
  auto parsed = ParseEnvKeys(header);
  ASSERT_FALSE(parsed.ok()) << '"' << header << '"';
  EXPECT_EQ(parsed.status().code(), Status::Code::kInvalidArgument);
  EXPECT_FALSE(parsed.status().message().empty());
}

TEST(EnvKeysTest, RejectsEmptyHeader) {
  ExpectInvalid("");
  ExpectInvalid("   ");
  ExpectInvalid("\t");
}

TEST(EnvKeysTest, RejectsInvalidNames) {
  for (const char* h : {"1A=x", "A-B=x", "=x", " =x", "A B=x", "A.B=x", "É=x", "A$=x"}) {
    ExpectInvalid(h);
  }
}

TEST(EnvKeysTest, RejectsEmptyOrMalformedSecretIds) {
  for (const char* h : {"A=", "A= ", "A=  ,B=1", "A=x y", "A=x=y", "A"}) ExpectInvalid(h);
}

TEST(EnvKeysTest, RejectsEmptyEntries) {
  for (const char* h : {"A=1,", ",A=1", "A=1,,B=2", "A=1, ,B=2"}) ExpectInvalid(h);
}

TEST(EnvKeysTest, RejectsDuplicateNames) {
  ExpectInvalid("A=1,A=2");
  ExpectInvalid("A=1,B=2, A =1");
}

TEST(EnvKeysTest, ErrorMessageNamesTheCulprit) {
  auto parsed = ParseEnvKeys("GOOD=1,bad-name=2");
  ASSERT_FALSE(parsed.ok());
  EXPECT_NE(parsed.status().message().find("bad-name"), std::string::npos);
  parsed = ParseEnvKeys("A=1,A=2");
  ASSERT_FALSE(parsed.ok());
  EXPECT_NE(parsed.status().message().find("A"), std::string::npos);
}

TEST(EnvKeysTest, IsValidEnvKeyName) {
  for (const char* name : {"A", "a", "_", "_1", "A1_B2", "snake_case", "__X"}) {
    EXPECT_TRUE(IsValidEnvKeyName(name)) << name;
  }
  for (const char* name : {"", "1", "1A", "A-B", "A B", " A", "A.", "ä"}) {
    EXPECT_FALSE(IsValidEnvKeyName(name)) << name;
  }
}

}  // namespace
}  // namespace toolgate::core
