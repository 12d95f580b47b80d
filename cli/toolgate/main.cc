// toolgate: the launcher (`toolgate up`) and the management CLI.
#include <cstdio>
#include <string>
#include <vector>

#include "commands.h"
#include "launcher.h"
#include "trace_command.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (!args.empty() && args[0] == "up") {
    std::vector<std::string> rest(args.begin() + 1, args.end());
    // `--demo` and `--detach` are switches; Flags wants a value.
    for (auto& a : rest) {
      if (a == "--demo") a = "--demo=true";
      if (a == "--detach") a = "--detach=true";
    }
    return toolgate::cli::RunUp(rest);
  }
  if (!args.empty() && args[0] == "status") {
    return toolgate::cli::RunStatus(std::vector<std::string>(args.begin() + 1, args.end()));
  }
  if (!args.empty() && args[0] == "down") {
    return toolgate::cli::RunDown(std::vector<std::string>(args.begin() + 1, args.end()));
  }
  if (!args.empty() && (args[0] == "version" || args[0] == "--version")) {
    std::printf("toolgate %s\n", TOOLGATE_VERSION);
    return 0;
  }
  if (args.size() >= 2 && args[0] == "keys" && args[1] == "init") {
    return toolgate::cli::RunKeysInit(std::vector<std::string>(args.begin() + 2, args.end()));
  }
  if (!args.empty() && args[0] == "trace") {
    return toolgate::cli::RunTrace(std::vector<std::string>(args.begin() + 1, args.end()));
  }
  if (args.empty()) args.push_back("help");
  return toolgate::cli::RunClientCommand(args);
}
