#include "toolgate/base/flags.h"

#include <charconv>
#include <cstdio>
#include <cstdlib>

namespace toolgate {

Flags::Flags(std::string program, std::string description)
    : program_(std::move(program)), description_(std::move(description)) {}

void Flags::Define(const std::string& name, const std::string& default_value,
                   const std::string& help) {
  flags_[name] = Flag{default_value, default_value, help};
}

void Flags::DefineRepeated(const std::string& name, const std::string& help) {
  flags_[name] = Flag{"", "", help, /*repeated=*/true};
}

std::string Flags::EnvName(std::string_view flag) {
  std::string env = "TOOLGATE_";
  for (char c : flag) env.push_back(c == '-' ? '_' : static_cast<char>(std::toupper(c)));
  return env;
}

std::vector<std::string> Flags::Parse(int argc, char** argv) {
  for (auto& [name, flag] : flags_) {
    if (const char* env = std::getenv(EnvName(name).c_str())) flag.value = env;
  }
  std::vector<std::string> positional;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      PrintHelp();
      std::exit(0);
    }
    if (arg.substr(0, 2) != "--") {
      positional.emplace_back(arg);
      continue;
    }
    arg.remove_prefix(2);
    std::string name(arg.substr(0, arg.find('=')));
    auto it = flags_.find(name);
    if (it == flags_.end()) {
      std::fprintf(stderr, "%s: unknown flag --%s (see --help)\n", program_.c_str(), name.c_str());
      std::exit(2);
    }
    Flag& flag = it->second;
    const bool boolean = flag.default_value == "true" || flag.default_value == "false";
    std::string value;
    if (arg.find('=') != std::string_view::npos) {
      value = std::string(arg.substr(arg.find('=') + 1));
    } else if (boolean && (i + 1 >= argc || std::string_view(argv[i + 1]).substr(0, 2) == "--")) {
      value = "true";
    } else if (i + 1 < argc) {
      value = argv[++i];
    } else {
      std::fprintf(stderr, "%s: flag --%s needs a value\n", program_.c_str(), name.c_str());
      std::exit(2);
    }
    if (flag.repeated && flag.on_command_line) {
      flag.value += "," + value;
    } else {
      flag.value = std::move(value);
    }
    flag.on_command_line = true;
  }
  return positional;
}

const std::string& Flags::Get(const std::string& name) const {
  return flags_.at(name).value;
}

int64_t Flags::GetInt(const std::string& name) const {
  const std::string& v = Get(name);
  int64_t out = 0;
  auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
  if (ec != std::errc() || ptr != v.data() + v.size()) {
    std::fprintf(stderr, "%s: --%s must be an integer, got '%s'\n", program_.c_str(), name.c_str(),
                 v.c_str());
    std::exit(2);
  }
  return out;
}

bool Flags::GetBool(const std::string& name) const {
  const std::string& v = Get(name);
  return v == "1" || v == "true" || v == "yes" || v == "on";
}

std::vector<std::string> Flags::GetList(const std::string& name) const {
  std::vector<std::string> out;
  std::string_view rest = Get(name);
  while (!rest.empty()) {
    size_t comma = rest.find(',');
    std::string_view item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (!item.empty()) out.emplace_back(item);
  }
  return out;
}

void Flags::PrintHelp() const {
  std::printf(
      "Usage: %s [flags]\n\n%s\n\nFlags (each also settable by its environment variable):\n",
      program_.c_str(), description_.c_str());
  for (const auto& [name, flag] : flags_) {
    std::printf("  --%-24s %s\n  %-26s default: '%s', env %s\n", name.c_str(), flag.help.c_str(),
                "", flag.default_value.c_str(), EnvName(name).c_str());
  }
}

}  // namespace toolgate
