#include "cli_config.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "toolgate/base/json.h"
#include "toolgate/base/json_writer.h"

namespace toolgate::cli {
namespace fs = std::filesystem;

bool IsValidProfileName(std::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.' && c != '-') {
      return false;
    }
  }
  return true;
}

Result<CliConfig> ParseCliConfig(std::string_view text) {
  auto doc = ParseJson(text);
  if (!doc.ok()) return Status::InvalidArgument("is not JSON: " + doc.status().message());
  simdjson::dom::object root;
  if (doc->root.get_object().get(root) != simdjson::SUCCESS) {
    return Status::InvalidArgument("must be a JSON object");
  }
  CliConfig config;
  simdjson::dom::element profiles_element;
  if (root["profiles"].get(profiles_element) != simdjson::SUCCESS) return config;
  simdjson::dom::object profiles;
  if (profiles_element.get_object().get(profiles) != simdjson::SUCCESS) {
    return Status::InvalidArgument("\"profiles\" must be an object");
  }
  for (auto [name, value] : profiles) {
    if (!IsValidProfileName(name)) {
      return Status::InvalidArgument("\"" + std::string(name) + "\" is not a profile name");
    }
    simdjson::dom::object fields;
    if (value.get_object().get(fields) != simdjson::SUCCESS) {
      return Status::InvalidArgument("profile \"" + std::string(name) + "\" must be an object");
    }
    Profile profile;
    if (GetString(fields, "url", &profile.url) == Field::kWrongType ||
        GetString(fields, "session", &profile.session) == Field::kWrongType) {
      return Status::InvalidArgument("profile \"" + std::string(name) +
                                     "\": url and session must be strings");
    }
    config.profiles[std::string(name)] = std::move(profile);
  }
  return config;
}

std::string CliConfigJson(const CliConfig& config) {
  JsonWriter w;
  w.BeginObject().Key("profiles").BeginObject();
  for (const auto& [name, profile] : config.profiles) {
    w.Key(name).BeginObject();
    if (!profile.url.empty()) w.Field("url", profile.url);
    if (!profile.session.empty()) w.Field("session", profile.session);
    w.EndObject();
  }
  w.EndObject().EndObject();
  return w.Take() + "\n";
}

fs::path CliConfigPath() {
  const char* xdg = std::getenv("XDG_CONFIG_HOME");
  fs::path base = xdg != nullptr && *xdg != '\0' ? fs::path(xdg) : fs::path();
  if (base.empty()) {
    const char* home = std::getenv("HOME");
    base = fs::path(home != nullptr ? home : ".") / ".config";
  }
  return base / "toolgate" / "config.json";
}

Result<CliConfig> LoadCliConfig(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::error_code ec;
    if (!fs::exists(path, ec)) return CliConfig{};
    return Status::Unavailable("cannot read " + path.string());
  }
  std::ostringstream text;
  text << in.rdbuf();
  auto config = ParseCliConfig(text.str());
  if (!config.ok()) return Status::InvalidArgument(path.string() + " " + config.status().message());
  return config;
}

Status SaveCliConfig(const fs::path& path, const CliConfig& config) {
  std::error_code ec;
  if (fs::create_directories(path.parent_path(), ec)) {
    fs::permissions(path.parent_path(), fs::perms::owner_all, ec);
  }
  if (ec) return Status::Unavailable("cannot create " + path.parent_path().string());
  fs::path tmp = path;
  tmp += ".tmp";
  // The session tokens are credentials: the file is 0600 from its first byte on.
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return Status::Unavailable("cannot write " + tmp.string());
  const std::string text = CliConfigJson(config);
  bool written = fchmod(fd, 0600) == 0 &&
                 write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) &&
                 fsync(fd) == 0;
  written = close(fd) == 0 && written;
  if (written) fs::rename(tmp, path, ec);
  if (!written || ec) {
    fs::remove(tmp, ec);
    return Status::Unavailable("cannot write " + path.string());
  }
  return Status::Ok();
}

}  // namespace toolgate::cli
