#include "bundle_pack.h"

#include <archive.h>
#include <archive_entry.h>
#include <fnmatch.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>

#include "toolgate/base/strings.h"

namespace toolgate::cli {
namespace fs = std::filesystem;

namespace {

constexpr std::string_view kManifestFile = "toolgate.json";
constexpr std::string_view kIgnoreFile = ".toolgateignore";
constexpr std::string_view kDevVarsFile = ".dev.vars";

// fnmatch for one gitignore pattern: "*" within a name; "**" across names.
bool Matches(const std::string& pattern, const std::string& path) {
  if (pattern.find("**") == std::string::npos) {
    return ::fnmatch(pattern.c_str(), path.c_str(), FNM_PATHNAME) == 0;
  }
  // "a/**/b" also matches "a/b": try the pattern with each "**/" dropped too.
  if (::fnmatch(pattern.c_str(), path.c_str(), 0) == 0) return true;
  std::string collapsed = pattern;
  for (size_t at; (at = collapsed.find("**/")) != std::string::npos;) collapsed.erase(at, 3);
  return ::fnmatch(collapsed.c_str(), path.c_str(), FNM_PATHNAME) == 0;
}

}  // namespace

IgnoreRules IgnoreRules::Parse(std::string_view text) {
  IgnoreRules rules;
  std::istringstream in{std::string(text)};
  std::string raw;
  while (std::getline(in, raw)) {
    std::string_view line = TrimRight(raw, " \t\r");
    if (line.empty() || line.front() == '#') continue;
    Rule rule;
    if (line.front() == '!') {
      rule.negate = true;
      line.remove_prefix(1);
    }
    if (!line.empty() && line.back() == '/') {
      rule.dir_only = true;
      line.remove_suffix(1);
    }
    if (!line.empty() && line.front() == '/') {
      rule.anchored = true;
      line.remove_prefix(1);
    }
    if (line.find('/') != std::string_view::npos) rule.anchored = true;
    if (line.empty()) continue;
    rule.pattern = std::string(line);
    rules.rules_.push_back(std::move(rule));
  }
  return rules;
}

bool IgnoreRules::Excluded(std::string_view path_view, bool is_dir) const {
  const std::string path(path_view);
  const size_t slash = path.rfind('/');
  const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  bool excluded = false;
  for (const Rule& rule : rules_) {
    if (rule.dir_only && !is_dir) continue;
    bool hit = rule.anchored ? Matches(rule.pattern, path) : Matches(rule.pattern, name);
    if (!rule.anchored && !hit && rule.pattern.find("**") != std::string::npos) {
      hit = Matches(rule.pattern, path);
    }
    if (hit) excluded = !rule.negate;
  }
  return excluded;
}

namespace {

using ArchivePtr = std::unique_ptr<archive, decltype(&archive_write_free)>;

la_ssize_t AppendTo(archive*, void* client, const void* buffer, size_t length) {
  static_cast<std::string*>(client)->append(static_cast<const char*>(buffer), length);
  return static_cast<la_ssize_t>(length);
}

class Packer {
 public:
  Packer(const fs::path& root, IgnoreRules rules, archive* a)
      : root_(root), rules_(std::move(rules)), archive_(a) {}

  // Adds the entries under dir (relative path prefix, "" for the root), in name order.
  Status AddDir(const fs::path& dir, const std::string& prefix) {
    std::error_code ec;
    std::vector<fs::directory_entry> entries;
    for (const auto& e : fs::directory_iterator(dir, ec)) entries.push_back(e);
    if (ec) return Status::Unavailable("cannot list " + dir.string() + ": " + ec.message());
    std::sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) {
      return a.path().filename() < b.path().filename();
    });
    for (const auto& e : entries) {
      const std::string name = e.path().filename().string();
      const std::string path = prefix.empty() ? name : prefix + "/" + name;
      if (prefix.empty() && (name == kManifestFile || name == kIgnoreFile)) continue;
      // .git, and .dev.vars, which holds the values `toolgate dev` gives the declared keys
      // (secrets), never go, whatever .toolgateignore says.
      if (name == ".git" || name == kDevVarsFile) continue;
      struct stat st;
      if (::lstat(e.path().c_str(), &st) != 0) {
        return Status::Unavailable("cannot read " + e.path().string());
      }
      const bool is_dir = S_ISDIR(st.st_mode);
      if (rules_.Excluded(path, is_dir)) continue;
      Status s = Status::Ok();
      if (is_dir) {
        s = Header(path, AE_IFDIR, 0755, 0);
        if (s.ok()) s = AddDir(e.path(), path);
      } else if (S_ISREG(st.st_mode)) {
        s = AddFile(e.path(), path, (st.st_mode & 0111) != 0 ? 0755 : 0644);
      } else if (S_ISLNK(st.st_mode)) {
        s = AddLink(e.path(), path);
      } else {
        return Status::InvalidArgument(path +
                                       ": only files, directories and links can go in a "
                                       "bundle");
      }
      if (!s.ok()) return s;
    }
    return Status::Ok();
  }

 private:
  Status Header(const std::string& path, mode_t type, int mode, int64_t size,
                const std::string& link = "") {
    std::unique_ptr<archive_entry, decltype(&archive_entry_free)> e(archive_entry_new(),
                                                                    archive_entry_free);
    archive_entry_set_pathname(e.get(), path.c_str());
    archive_entry_set_filetype(e.get(), type);
    archive_entry_set_perm(e.get(), mode);
    archive_entry_set_size(e.get(), size);
    archive_entry_set_uid(e.get(), 0);
    archive_entry_set_gid(e.get(), 0);
    archive_entry_set_mtime(e.get(), 0, 0);
    if (!link.empty()) archive_entry_set_symlink(e.get(), link.c_str());
    if (archive_write_header(archive_, e.get()) != ARCHIVE_OK) {
      return Status::Unavailable(path + ": " + archive_error_string(archive_));
    }
    return Status::Ok();
  }

  Status AddFile(const fs::path& file, const std::string& path, int mode) {
    std::ifstream in(file, std::ios::binary);
    std::stringstream data;
    data << in.rdbuf();
    if (!in && !in.eof()) return Status::Unavailable("cannot read " + file.string());
    const std::string bytes = data.str();
    Status s = Header(path, AE_IFREG, mode, static_cast<int64_t>(bytes.size()));
    if (!s.ok()) return s;
    if (!bytes.empty() && archive_write_data(archive_, bytes.data(), bytes.size()) !=
                              static_cast<la_ssize_t>(bytes.size())) {
      return Status::Unavailable(path + ": " + archive_error_string(archive_));
    }
    return Status::Ok();
  }

  // A link goes in as a link when it stays inside the bundle (node_modules/.bin/*).
  Status AddLink(const fs::path& file, const std::string& path) {
    std::error_code ec;
    fs::path target = fs::read_symlink(file, ec);
    if (ec) return Status::Unavailable("cannot read the link " + file.string());
    if (target.is_absolute()) {
      return Status::InvalidArgument(path + ": a link in a bundle must be relative (it points to " +
                                     target.string() + ")");
    }
    fs::path resolved = (fs::path(path).parent_path() / target).lexically_normal();
    if (resolved.empty() || *resolved.begin() == "..") {
      return Status::InvalidArgument(path + ": a link in a bundle may not point out of it");
    }
    return Header(path, AE_IFLNK, 0777, 0, target.string());
  }

  fs::path root_;
  IgnoreRules rules_;
  archive* archive_;
};

}  // namespace

Result<std::string> PackBundle(const fs::path& dir) {
  IgnoreRules rules;
  if (fs::exists(dir / kIgnoreFile)) {
    std::ifstream in(dir / kIgnoreFile, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    rules = IgnoreRules::Parse(text.str());
  }
  std::string out;
  ArchivePtr a(archive_write_new(), archive_write_free);
  if (!a) return Status::Unavailable("archive_write_new failed");
  archive_write_add_filter_gzip(a.get());
  // No name or time in the gzip header: the same files give the same bytes.
  archive_write_set_filter_option(a.get(), "gzip", "timestamp", nullptr);
  archive_write_set_format_pax_restricted(a.get());
  archive_write_set_bytes_in_last_block(a.get(), 1);
  if (archive_write_open(a.get(), &out, nullptr, AppendTo, nullptr) != ARCHIVE_OK) {
    return Status::Unavailable(std::string("cannot start the bundle: ") +
                               archive_error_string(a.get()));
  }
  Status s = Packer(dir, std::move(rules), a.get()).AddDir(dir, "");
  if (!s.ok()) return s;
  if (archive_write_close(a.get()) != ARCHIVE_OK) {
    return Status::Unavailable(std::string("cannot finish the bundle: ") +
                               archive_error_string(a.get()));
  }
  return out;
}

Status InstallNodeModules(const fs::path& dir) {
  if (!fs::exists(dir / "package.json") || fs::exists(dir / "node_modules")) return Status::Ok();
  const bool locked = fs::exists(dir / "package-lock.json");
  std::vector<std::string> argv = {"npm", locked ? "ci" : "install", "--omit=dev", "--no-audit",
                                   "--no-fund"};
  std::string shown;
  for (const auto& a : argv) shown += (shown.empty() ? "" : " ") + a;
  std::fprintf(stderr, "running %s in %s\n", shown.c_str(), dir.c_str());
  std::fflush(stderr);
  pid_t pid = ::fork();
  if (pid < 0) return Status::Unavailable("cannot run npm: fork failed");
  if (pid == 0) {
    // npm's output is for the user, on stderr: stdout carries the command's JSON answer.
    ::dup2(2, 1);
    if (::chdir(dir.c_str()) != 0) ::_exit(126);
    std::vector<char*> args;
    for (auto& a : argv) args.push_back(a.data());
    args.push_back(nullptr);
    ::execvp(args[0], args.data());
    ::_exit(127);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 127) {
    return Status::Unavailable("npm is not installed; install it, or run npm yourself so that " +
                               dir.string() + "/node_modules exists");
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return Status::Unavailable(shown + " failed in " + dir.string());
  }
  return Status::Ok();
}

}  // namespace toolgate::cli
