// The CLI's own configuration: one profile per server, each with the server's URL and the
// session `toolgate login` saved for it. It lives in $XDG_CONFIG_HOME/toolgate/config.json
// (default ~/.config/toolgate/config.json), mode 0600 in a 0700 directory, since it holds
// session tokens:
//
//   {"profiles": {"default": {"url": "http://127.0.0.1:8080", "session": "..."},
//                 "staging": {"url": "https://staging.example.com"}}}
//
// Which profile a command uses: --profile, else TOOLGATE_PROFILE, else "default".
// Not thread-safe (reads the environment, writes files).
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <string_view>

#include "toolgate/base/status.h"

namespace toolgate::cli {

inline constexpr char kDefaultProfile[] = "default";

struct Profile {
  std::string url;      // "" when the profile has never named a server
  std::string session;  // the tg_session token; "" when signed out
};

struct CliConfig {
  std::map<std::string, Profile> profiles;
};

// Whether name may name a profile: 1 to 64 of [A-Za-z0-9_.-].
bool IsValidProfileName(std::string_view name);

// The configuration in text. InvalidArgument, saying what is wrong, for text that is not a JSON
// object of that shape or that names a profile IsValidProfileName refuses.
Result<CliConfig> ParseCliConfig(std::string_view text);

// The JSON text of config (profiles sorted by name; empty members left out).
std::string CliConfigJson(const CliConfig& config);

// $XDG_CONFIG_HOME/toolgate/config.json, or ~/.config/toolgate/config.json.
std::filesystem::path CliConfigPath();

// The configuration at path; an empty one when there is no file. InvalidArgument (naming the
// file) for a file ParseCliConfig refuses, Unavailable when it cannot be read.
Result<CliConfig> LoadCliConfig(const std::filesystem::path& path);

// Replaces the file at path with config: written 0600 to a temporary file beside it and renamed
// over it, so a crash leaves the old file or the new one, never half of one; the directory is
// created 0700 when missing. Unavailable on a failure, the old file untouched.
Status SaveCliConfig(const std::filesystem::path& path, const CliConfig& config);

}  // namespace toolgate::cli
