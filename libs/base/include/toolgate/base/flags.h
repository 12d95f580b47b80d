// Flags: configuration from the command line and the environment.
//
// Each flag "--some-name" may also be set by the environment variable TOOLGATE_SOME_NAME; the
// command line wins. `--help` prints every flag with its default and its variable.
//
//   Flags flags("auth", "Users, organizations, sessions and API keys.");
//   flags.Define("nats-url", "nats://127.0.0.1:4222", "NATS server URL");
//   flags.Parse(argc, argv);   // exits with one clear line on a bad flag, or after --help
//   std::string url = flags.Get("nats-url");
//
// Not thread-safe during Define/Parse; Get is safe afterwards.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace toolgate {

class Flags {
 public:
  Flags(std::string program, std::string description);

  void Define(const std::string& name, const std::string& default_value, const std::string& help);
  // A flag that may be given several times: each occurrence on the command line adds its value
  // to a comma-separated list (read it with GetList); the environment variable, if set, holds
  // the whole list and is replaced by the command line's occurrences.
  void DefineRepeated(const std::string& name, const std::string& help);
  // Parses argv (flags only; positional arguments are returned). Prints help and exits 0 on
  // --help; prints one line and exits 2 on an unknown flag or a missing value. A flag whose
  // default is "true" or "false" may stand alone ("--no-egress"), meaning true, when it is last
  // or the next argument is another flag.
  std::vector<std::string> Parse(int argc, char** argv);

  const std::string& Get(const std::string& name) const;
  // The value as an integer; exits 2 with a clear line when it is not one.
  int64_t GetInt(const std::string& name) const;
  bool GetBool(const std::string& name) const;
  // The value split at commas, each item trimmed of spaces, empty items left out.
  std::vector<std::string> GetList(const std::string& name) const;

  // "some-name" -> "TOOLGATE_SOME_NAME".
  static std::string EnvName(std::string_view flag);

 private:
  struct Flag {
    std::string value;
    std::string default_value;
    std::string help;
    bool repeated = false;
    bool on_command_line = false;  // Parse: a repeated flag's first occurrence replaces
  };
  void PrintHelp() const;
  std::string program_;
  std::string description_;
  std::map<std::string, Flag> flags_;
};

}  // namespace toolgate
