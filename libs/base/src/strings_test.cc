#include "toolgate/base/strings.h"

#include <gtest/gtest.h>

namespace toolgate {
namespace {

TEST(StringsTest, TrimLeftAndRightTouchOnlyTheirEnd) {
  EXPECT_EQ(TrimLeft(" \t a b \t", kBlanks), "a b \t");
  EXPECT_EQ(TrimRight(" \t a b \t", kBlanks), " \t a b");
  EXPECT_EQ(TrimLeft("   ", " "), "");
  EXPECT_EQ(TrimRight("   ", " "), "");
  EXPECT_EQ(TrimLeft("", " "), "");
  EXPECT_EQ(TrimRight("x", ""), "x");
}

TEST(StringsTest, TrimRemovesOnlyTheGivenCharacters) {
  EXPECT_EQ(Trim("  a  ", " "), "a");
  EXPECT_EQ(Trim("\t a \t", " "), "\t a \t");
  EXPECT_EQ(Trim("xxaxx", "x"), "a");
  EXPECT_EQ(Trim("a b", " "), "a b");  // inner bytes stay
}

TEST(StringsTest, TrimWithTwoSetsTrimsEachEndByItsOwn) {
  // A header line: blanks at the start, blanks and the line end at the end.
  EXPECT_EQ(Trim(" \tv \r\n", kBlanks, " \t\r\n"), "v");
  EXPECT_EQ(Trim("\rv \r", kBlanks, " \t\r"), "\rv");  // a leading CR stays
  EXPECT_EQ(Trim("v\n", kBlanks, " \t\r"), "v\n");     // an LF not in the set stays
  EXPECT_EQ(Trim(" \r ", kBlanks, " \t\r"), "");
}

TEST(StringsTest, TrimBlanksIsSpacesAndTabsOnly) {
  EXPECT_EQ(TrimBlanks(" \t a \t "), "a");
  EXPECT_EQ(TrimBlanks("\ra\n"), "\ra\n");
  EXPECT_EQ(TrimBlanks(" \t "), "");
}

TEST(StringsTest, TrimAsciiWhitespaceIsWhatIsspaceAccepts) {
  EXPECT_EQ(TrimAsciiWhitespace("  a b \t\n"), "a b");
  EXPECT_EQ(TrimAsciiWhitespace("\v\f\r x \r\f\v"), "x");
  EXPECT_EQ(TrimAsciiWhitespace(" \t "), "");
  EXPECT_EQ(TrimAsciiWhitespace("x"), "x");
  for (int c = 0; c < 256; ++c) {
    const char ch = static_cast<char>(c);
    const bool trimmed = TrimAsciiWhitespace(std::string_view(&ch, 1)).empty();
    EXPECT_EQ(trimmed, std::isspace(c) != 0) << c;
  }
}

TEST(StringsTest, ShellQuoteMakesOneWordOfAnyText) {
  EXPECT_EQ(ShellQuote("plain"), "'plain'");
  EXPECT_EQ(ShellQuote(""), "''");
  EXPECT_EQ(ShellQuote("it's"), "'it'\\''s'");
  EXPECT_EQ(ShellQuote("$HOME `x` \"y\" \\ \n"), "'$HOME `x` \"y\" \\ \n'");
}

}  // namespace
}  // namespace toolgate
