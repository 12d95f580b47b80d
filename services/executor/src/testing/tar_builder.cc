#include "testing/tar_builder.h"

#include <archive.h>
#include <archive_entry.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <vector>

namespace toolgate::executor::testing {

struct TarBuilder::State {
  archive* a = nullptr;
  std::string out;
  bool finished = false;
};

namespace {

la_ssize_t Append(archive*, void* client, const void* buffer, size_t length) {
  static_cast<std::string*>(client)->append(static_cast<const char*>(buffer), length);
  return static_cast<la_ssize_t>(length);
}

void Write(archive* a, const std::string& path, mode_t type, int mode, const std::string& data,
           const char* symlink = nullptr, const char* hardlink = nullptr) {
  archive_entry* e = archive_entry_new();
  archive_entry_set_pathname(e, path.c_str());
  archive_entry_set_filetype(e, type);
  archive_entry_set_perm(e, mode);
  archive_entry_set_size(e, static_cast<la_int64_t>(data.size()));
  if (symlink != nullptr) archive_entry_set_symlink(e, symlink);
  if (hardlink != nullptr) {
    archive_entry_set_hardlink(e, hardlink);
    archive_entry_set_size(e, 0);
  }
  if (type == AE_IFCHR) archive_entry_set_rdev(e, makedev(1, 3));
  if (archive_write_header(a, e) != ARCHIVE_OK) {
    throw std::runtime_error(archive_error_string(a));
  }
  if (!data.empty() && hardlink == nullptr) {
    archive_write_data(a, data.data(), data.size());
  }
  archive_entry_free(e);
}

}  // namespace

TarBuilder::TarBuilder() : state_(new State) {
  state_->a = archive_write_new();
  archive_write_add_filter_gzip(state_->a);
  archive_write_set_format_pax_restricted(state_->a);
  archive_write_set_bytes_in_last_block(state_->a, 1);
  archive_write_open(state_->a, &state_->out, nullptr, Append, nullptr);
}

TarBuilder::~TarBuilder() {
  archive_write_free(state_->a);
  delete state_;
}

TarBuilder& TarBuilder::File(const std::string& path, const std::string& data, int mode) {
  Write(state_->a, path, AE_IFREG, mode, data);
  return *this;
}
TarBuilder& TarBuilder::Dir(const std::string& path) {
  Write(state_->a, path, AE_IFDIR, 0755, "");
  return *this;
}
TarBuilder& TarBuilder::Symlink(const std::string& path, const std::string& target) {
  Write(state_->a, path, AE_IFLNK, 0777, "", target.c_str());
  return *this;
}
TarBuilder& TarBuilder::Hardlink(const std::string& path, const std::string& target) {
  Write(state_->a, path, AE_IFREG, 0644, "", nullptr, target.c_str());
  return *this;
}
TarBuilder& TarBuilder::CharDevice(const std::string& path) {
  Write(state_->a, path, AE_IFCHR, 0644, "");
  return *this;
}
TarBuilder& TarBuilder::Fifo(const std::string& path) {
  Write(state_->a, path, AE_IFIFO, 0644, "");
  return *this;
}

TarBuilder& TarBuilder::Tree(const std::string& dir) {
  std::vector<std::filesystem::path> paths;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    paths.push_back(e.path());
  }
  std::sort(paths.begin(), paths.end());
  for (const auto& p : paths) {
    std::string relative = std::filesystem::relative(p, dir).string();
    if (std::filesystem::is_directory(p)) {
      Dir(relative);
    } else {
      std::ifstream in(p, std::ios::binary);
      std::stringstream data;
      data << in.rdbuf();
      File(relative, data.str());
    }
  }
  return *this;
}

std::string TarBuilder::Finish() {
  if (!state_->finished) {
    archive_write_close(state_->a);
    state_->finished = true;
  }
  return state_->out;
}

}  // namespace toolgate::executor::testing
