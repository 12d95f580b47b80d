// `toolgate dev DIR [--event FILE] [--env NAME=VALUE]... [--env-file FILE]`: runs a tool on
// this machine, in the sandbox and runtime the executor uses, without publishing it and without
// billing. It runs the executor binary (toolgate-executor, beside toolgate) in its --run-file
// mode once per event: the event of --event FILE, else each of the manifest's examples, else {}.
// The declared keys get their values from DIR/.dev.vars (or --env-file) and --env (dev_vars.h),
// handed to the executor on its stdin, never on a command line. Needs what the executor needs
// (root, cgroups), like `toolgate up`.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "commands.h"
#include "dev_vars.h"
#include "toolgate/base/status.h"

namespace toolgate::cli {

// One run of `toolgate dev`: a name to show and the event, as compact JSON.
struct DevEvent {
  std::string title;
  std::string event_json;
};

// The events to run: event_file_text as the one event when given (InvalidArgument when it is
// not JSON), else one per example of the manifest (titled by the example's "title", else
// "example N"), else a single {}. Pure.
Result<std::vector<DevEvent>> DevEvents(const Manifest& manifest,
                                        const std::optional<std::string>& event_file_text);

// The values of the tool's declared keys: dir's .dev.vars when present (the file of
// --env-file instead, which must exist), then each --env of args. InvalidArgument naming the
// file and line, or the key, for a malformed line or word and for a key the manifest does not
// declare; never a value.
Result<std::vector<DevVar>> DevEnvOf(const std::filesystem::path& dir, const Manifest& manifest,
                                     const ParsedArgs& args);

// The executor's command line for one event of the tool in dir: the pool of its compute type,
// --run-file with its handler (or, for a bundle tool, --run-bundle with bundle_file, the packed
// directory, and its runtime and handler), the event, its egress list, its timeout and memory
// when the manifest sets them (the executor's defaults otherwise), and with env_on_stdin
// "--run-env-file /dev/stdin" (the keys' values follow on its stdin). Pure.
std::vector<std::string> DevExecutorArgs(const std::filesystem::path& executor,
                                         const std::filesystem::path& dir, const Manifest& manifest,
                                         std::string_view event_json,
                                         const std::filesystem::path& bundle_file = {},
                                         bool env_on_stdin = false);

// The command itself; words are what follows "dev". Returns the exit code: 0 when every run
// completed below status 500, 1 otherwise, 2 for a usage error (a handler whose extension is
// not its runtime's among them).
int RunDev(const std::vector<std::string>& words);

}  // namespace toolgate::cli
