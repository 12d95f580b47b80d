// Values for a tool's declared keys when `toolgate dev` runs it on this machine: a .dev.vars file
// in the tool's directory (or --env-file FILE) and --env NAME=VALUE words. They stand in for the
// secrets X-Env-Keys maps on a published version. Values are never printed: every error names
// the file, the line or the key, never a value. Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "toolgate/base/status.h"

namespace toolgate::cli {

// The file `toolgate dev` reads from the tool's directory, and `toolgate new` ignores.
inline constexpr std::string_view kDevVarsFile = ".dev.vars";

struct DevVar {
  std::string name;
  std::string value;
};

// A .dev.vars text: one NAME=VALUE a line (NAME as a declared key: [A-Za-z_][A-Za-z0-9_]*;
// "export " before it is allowed). Blank lines and lines whose first non-blank is '#' are
// skipped. A value is either bare, up to the line's end with blanks around it dropped and a
// " #" starting a comment; or in double quotes, with \n, \t, \", \\ and \$ escapes; or in single
// quotes, taken as written. Only blanks or a comment may follow a closing quote. A quoted value
// stays on its line. InvalidArgument "<source>:<line>: <what is wrong>" for a malformed line or
// a name given twice.
Result<std::vector<DevVar>> ParseDevVars(std::string_view text, std::string_view source);

// One --env word, NAME=VALUE (the value as given, "=" and all). InvalidArgument naming the
// problem for a word without "=" or with a malformed name.
Result<DevVar> ParseEnvWord(std::string_view word);

// The values the tool gets: the file's, then the --env words' (a word wins over the file for
// the same name; a name given twice among the words is an error). InvalidArgument naming the
// key for a name the manifest does not declare, with the declared ones.
Result<std::vector<DevVar>> DevEnv(const std::vector<std::string>& declared_keys,
                                   const std::vector<DevVar>& from_file,
                                   const std::vector<DevVar>& from_words);

// The values as the executor's --run-env-file reads them: one JSON object of strings.
std::string DevEnvJson(const std::vector<DevVar>& env);

}  // namespace toolgate::cli
