// toolgate: the launcher (`toolgate up`) and the management CLI; every command is a row of the
// table in commands.cc.
#include <string>
#include <vector>

#include "commands.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) args.push_back("help");
  return toolgate::cli::RunClientCommand(args);
}
