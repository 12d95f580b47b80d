#include "completion.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "commands.h"
#include "toolgate/base/crypto.h"

namespace toolgate::cli {
namespace {
namespace fs = std::filesystem;

// What bash's completion of `words` (the last one being completed) offers, one per line,
// through the real script, as a shell would run it.
std::string BashCompletes(const std::string& script, const std::vector<std::string>& words) {
  fs::path file = fs::temp_directory_path() / ("tg-completion-" + HexEncode(RandomBytes(4)));
  std::ofstream(file) << script;
  std::string array;
  for (const auto& w : words) array += " '" + w + "'";
  std::string cmd = "bash -c 'source " + file.string() + "; COMP_WORDS=(" + array +
                    "); COMP_CWORD=" + std::to_string(words.size() - 1) +
                    "; _toolgate; printf \"%s\\n\" \"${COMPREPLY[@]}\"; complete -p toolgate'";
  // The inner quotes of the words would end the outer ones: the words here have none.
  std::string out;
  FILE* pipe = popen(cmd.c_str(), "r");
  char buf[4096];
  while (pipe && fgets(buf, sizeof buf, pipe)) out += buf;
  if (pipe) pclose(pipe);
  fs::remove(file);
  return out;
}

// What zsh's completion offers for `words` with the cursor on the last one: the script runs in
// zsh with the completion system's builtins standing in, each printing what it would offer
// (_describe its "word:summary" entries, compadd its words, _files "FILES").
std::string ZshCompletes(const std::string& script, const std::vector<std::string>& words) {
  fs::path file = fs::temp_directory_path() / ("tg-completion-" + HexEncode(RandomBytes(4)));
  std::ofstream(file) << script;
  std::string array;
  for (const auto& w : words) array += " '" + w + "'";
  std::string cmd = "zsh -fc 'compdef() {}; source " + file.string() +
                    "; _describe() { print -l -- ${(P)${@[-1]}} }; "
                    "compadd() { print -l -- ${(P)2} }; _files() { print FILES }; words=(" +
                    array + "); CURRENT=" + std::to_string(words.size()) +
                    "; PREFIX=" + words.back() + "; _toolgate'";
  std::string out;
  FILE* pipe = popen(cmd.c_str(), "r");
  char buf[4096];
  while (pipe && fgets(buf, sizeof buf, pipe)) out += buf;
  int status = pipe ? pclose(pipe) : -1;
  fs::remove(file);
  return status == 0 ? out : "zsh failed (" + std::to_string(status) + "): " + out;
}

const std::vector<CompletionCommand> kTable = {
    {"login", "Sign in.", {"--email", "--password"}},
    {"keys create", "Create a key.", {"--name", "--scopes"}},
    {"keys list", "List keys.", {"--limit"}},
    {"dev", "Run it's tool here.", {"--event"}},
};

TEST(CompletionTest, BashCompletesCommandsSubcommandsAndFlags) {
  std::string script = BashCompletion(kTable);
  std::string out = BashCompletes(script, {"toolgate", ""});
  EXPECT_NE(out.find("login\nkeys\ndev\n"), std::string::npos) << out;
  EXPECT_NE(out.find("complete -o filenames -F _toolgate toolgate"), std::string::npos) << out;
  EXPECT_EQ(BashCompletes(script, {"toolgate", "ke"}).substr(0, 5), "keys\n");
  EXPECT_EQ(BashCompletes(script, {"toolgate", "keys", "l"}).substr(0, 5), "list\n");
  out = BashCompletes(script, {"toolgate", "keys", "create", "--"});
  EXPECT_EQ(out.substr(0, out.find("complete")), "--name\n--scopes\n");
  out = BashCompletes(script, {"toolgate", "login", "--p"});
  EXPECT_EQ(out.substr(0, out.find("complete")), "--password\n");
}

TEST(CompletionTest, EveryCommandOfTheTableCompletes) {
  std::string script = BashCompletion(CompletionCommands());
  std::string top = BashCompletes(script, {"toolgate", ""});
  for (const auto& c : CompletionCommands()) {
    std::string first = c.name.substr(0, c.name.find(' '));
    EXPECT_NE(top.find(first + "\n"), std::string::npos) << first;
  }
  std::string flags = BashCompletes(script, {"toolgate", "publish", "dir", "--"});
  for (const char* flag : {"--bump", "--json", "--profile", "--url", "--api-key"}) {
    EXPECT_NE(flags.find(std::string(flag) + "\n"), std::string::npos) << flag << "\n" << flags;
  }
  flags = BashCompletes(script, {"toolgate", "logs", "f", "--f"});
  EXPECT_EQ(flags.substr(0, flags.find("complete")), "--follow\n");
}

TEST(CompletionTest, ZshScriptDescribesEachWord) {
  std::string script = ZshCompletion(kTable);
  EXPECT_EQ(script.rfind("#compdef toolgate\n", 0), 0u);
  EXPECT_NE(script.find("'login:Sign in.'"), std::string::npos) << script;
  EXPECT_NE(script.find("'keys:create, list'"), std::string::npos) << script;
  EXPECT_NE(script.find("'create:Create a key.'"), std::string::npos) << script;
  // A quote in a summary cannot end the word early.
  EXPECT_NE(script.find("'dev:Run it'\\''s tool here.'"), std::string::npos) << script;
  EXPECT_NE(script.find("'keys create') flags=(--name --scopes) ;;"), std::string::npos);
  EXPECT_NE(script.find("compdef _toolgate toolgate"), std::string::npos);
}

TEST(CompletionTest, ZshCompletesCommandsSubcommandsFlagsAndFiles) {
  std::string script = ZshCompletion(kTable);
  EXPECT_EQ(ZshCompletes(script, {"toolgate", ""}),
            "login:Sign in.\nkeys:create, list\ndev:Run it's tool here.\n");
  EXPECT_EQ(ZshCompletes(script, {"toolgate", "keys", ""}),
            "create:Create a key.\nlist:List keys.\n");
  EXPECT_EQ(ZshCompletes(script, {"toolgate", "keys", "create", "--"}), "--name\n--scopes\n");
  EXPECT_EQ(ZshCompletes(script, {"toolgate", "dev", "to"}), "FILES\n");
  // The real table: every flag of publish, global ones included.
  std::string flags =
      ZshCompletes(ZshCompletion(CompletionCommands()), {"toolgate", "publish", "--"});
  for (const char* flag : {"--bump", "--json", "--profile", "--url", "--api-key"}) {
    EXPECT_NE(flags.find(std::string(flag) + "\n"), std::string::npos) << flag << "\n" << flags;
  }
}

// Three-word commands ("workspace env-keys set") complete word by word in both shells.
TEST(CompletionTest, NestedGroupsCompleteWordByWord) {
  const std::vector<CompletionCommand> table = {
      {"workspace list", "List the workspace.", {"--json"}},
      {"workspace env-keys set", "Map keys.", {"--url"}},
      {"workspace env-keys show", "Show keys.", {"--json"}},
  };
  std::string bash = BashCompletion(table);
  std::string out = BashCompletes(bash, {"toolgate", "workspace", ""});
  EXPECT_EQ(out.substr(0, out.find("complete")), "list\nenv-keys\n");
  out = BashCompletes(bash, {"toolgate", "workspace", "env-keys", "s"});
  EXPECT_EQ(out.substr(0, out.find("complete")), "set\nshow\n");
  out = BashCompletes(bash, {"toolgate", "workspace", "env-keys", "set", "f", "--"});
  EXPECT_EQ(out.substr(0, out.find("complete")), "--url\n");
  std::string zsh = ZshCompletion(table);
  EXPECT_EQ(ZshCompletes(zsh, {"toolgate", "workspace", ""}),
            "list:List the workspace.\nenv-keys:set, show\n");
  EXPECT_EQ(ZshCompletes(zsh, {"toolgate", "workspace", "env-keys", ""}),
            "set:Map keys.\nshow:Show keys.\n");
  EXPECT_EQ(ZshCompletes(zsh, {"toolgate", "workspace", "env-keys", "show", "--"}), "--json\n");
  // The real table has them.
  out = BashCompletes(BashCompletion(CompletionCommands()),
                      {"toolgate", "workspace", "env-keys", ""});
  EXPECT_EQ(out.substr(0, out.find("complete")), "set\nshow\nclear\n");
}

TEST(CompletionTest, OnlyBashAndZsh) {
  EXPECT_TRUE(CompletionScript("bash", kTable).ok());
  EXPECT_TRUE(CompletionScript("zsh", kTable).ok());
  EXPECT_FALSE(CompletionScript("fish", kTable).ok());
}

}  // namespace
}  // namespace toolgate::cli
