// Shell completion scripts for `toolgate completion bash|zsh`, written from the command table
// so that a new command or flag completes without anyone editing a script. Pure functions;
// thread-safe.
//
// What completes: the command words (a group such as "keys" or "workspace env-keys" first,
// then its subcommand), then that command's flags; any other word completes as a file name
// (DIRs, event files).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "toolgate/base/status.h"

namespace toolgate::cli {

struct CompletionCommand {
  std::string name;                // "keys create": one to three words
  std::string summary;             // shown by zsh beside the word
  std::vector<std::string> flags;  // "--name", ...
};

// A bash script defining _toolgate and registering it with `complete` (source it, or install it
// as /usr/share/bash-completion/completions/toolgate).
std::string BashCompletion(const std::vector<CompletionCommand>& commands);

// A zsh script: as a file named _toolgate in $fpath it is the completion function itself;
// sourced (`source <(toolgate completion zsh)`) it registers itself with compdef.
std::string ZshCompletion(const std::vector<CompletionCommand>& commands);

// The script for shell ("bash" or "zsh"); InvalidArgument for any other shell.
Result<std::string> CompletionScript(std::string_view shell,
                                     const std::vector<CompletionCommand>& commands);

}  // namespace toolgate::cli
