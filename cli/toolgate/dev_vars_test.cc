#include "dev_vars.h"

#include <gtest/gtest.h>

namespace toolgate::cli {
namespace {

TEST(DevVarsTest, ReadsBareQuotedAndCommentedLines) {
  auto vars = ParseDevVars(
      "# local values\n"
      "\n"
      "API_KEY=abc123\n"
      "  export TOKEN = spaced out  # a comment\n"
      "HASH=a#b\n"
      "DOUBLE=\"two\\nlines \\\"quoted\\\" \\\\ \\$HOME\"  # after\n"
      "SINGLE='as # written \\n'\n"
      "EMPTY=\n"
      "CRLF=value\r\n",
      ".dev.vars");
  ASSERT_TRUE(vars.ok()) << vars.status().ToString();
  std::vector<std::pair<std::string, std::string>> got;
  for (const auto& v : *vars) got.emplace_back(v.name, v.value);
  EXPECT_EQ(got, (std::vector<std::pair<std::string, std::string>>{
                     {"API_KEY", "abc123"},
                     {"TOKEN", "spaced out"},
                     {"HASH", "a#b"},
                     {"DOUBLE", "two\nlines \"quoted\" \\ $HOME"},
                     {"SINGLE", "as # written \\n"},
                     {"EMPTY", ""},
                     {"CRLF", "value"},
                 }));
}

TEST(DevVarsTest, ABadLineIsNamedByNumberAndNeverShowsItsValue) {
  struct Case {
    const char* text;
    const char* message;
  };
  for (const Case& c : std::vector<Case>{
           {"A=1\nno equals sign s3cret\n", ".dev.vars:2: not NAME=VALUE"},
           {"1BAD=s3cret\n", ".dev.vars:1: the name must match [A-Za-z_][A-Za-z0-9_]*"},
           {"\n\nA=\"s3cret\n", ".dev.vars:3: unterminated \" quote (A)"},
           {"A='s3cret\n", ".dev.vars:1: unterminated ' quote (A)"},
           {"A=\"s3cret\" trailing\n", ".dev.vars:1: text after the closing \" quote (A)"},
           {"A=\"s3\\qcret\"\n", ".dev.vars:1: unknown escape \\q in a \" quoted value (A)"},
           {"A=1\nA=s3cret\n", ".dev.vars:2: A is given twice"},
       }) {
    auto vars = ParseDevVars(c.text, ".dev.vars");
    ASSERT_FALSE(vars.ok()) << c.text;
    EXPECT_EQ(vars.status().message(), c.message);
    EXPECT_EQ(vars.status().message().find("s3cret"), std::string::npos);
  }
}

TEST(DevVarsTest, EnvWordsOverrideTheFileAndOnlyDeclaredKeysAreTaken) {
  auto word = ParseEnvWord("TOKEN=a=b");
  ASSERT_TRUE(word.ok());
  EXPECT_EQ(word->name, "TOKEN");
  EXPECT_EQ(word->value, "a=b");
  EXPECT_FALSE(ParseEnvWord("TOKEN").ok());
  EXPECT_FALSE(ParseEnvWord("=x").ok());

  const std::vector<std::string> declared = {"API_KEY", "TOKEN"};
  auto env = DevEnv(declared, {{"API_KEY", "file"}, {"TOKEN", "file"}}, {{"TOKEN", "word"}});
  ASSERT_TRUE(env.ok()) << env.status().ToString();
  ASSERT_EQ(env->size(), 2u);
  EXPECT_EQ((*env)[0].value, "file");
  EXPECT_EQ((*env)[1].value, "word");
  EXPECT_EQ(DevEnvJson(*env), R"({"API_KEY":"file","TOKEN":"word"})");

  auto undeclared = DevEnv(declared, {}, {{"OTHER", "s3cret"}});
  ASSERT_FALSE(undeclared.ok());
  EXPECT_EQ(undeclared.status().message(),
            "OTHER is not a declared key of this tool (declared_keys: API_KEY, TOKEN); add it to "
            "the manifest or remove it");
  auto from_file = DevEnv({}, {{"OTHER", "s3cret"}}, {});
  ASSERT_FALSE(from_file.ok());
  EXPECT_NE(from_file.status().message().find("(declared_keys: none)"), std::string::npos);
  EXPECT_FALSE(DevEnv(declared, {}, {{"TOKEN", "a"}, {"TOKEN", "b"}}).ok());
}

}  // namespace
}  // namespace toolgate::cli
