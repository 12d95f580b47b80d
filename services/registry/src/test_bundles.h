// Archives built in memory for tests, entry by entry: tar lets an archive say anything (paths
// out of the bundle, links anywhere, device files), so the builder writes exactly what it is told.
#pragma once

#include <archive.h>
#include <archive_entry.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace toolgate::registry {

// One entry of an archive built for a test.
struct TestEntry {
  std::string path;
  mode_t type = AE_IFREG;
  std::string data;
  std::string symlink;   // target, for AE_IFLNK
  std::string hardlink;  // target, for a hard link
};

enum class Packing { kTarGz, kTar, kZip };

inline la_ssize_t Append(archive*, void* out, const void* buffer, size_t length) {
  static_cast<std::string*>(out)->append(static_cast<const char*>(buffer), length);
  return static_cast<la_ssize_t>(length);
}

inline std::string Pack(const std::vector<TestEntry>& entries, Packing packing = Packing::kTarGz) {
  std::string out;
  archive* a = archive_write_new();
  if (packing == Packing::kZip) {
    archive_write_set_format_zip(a);
  } else {
    archive_write_set_format_pax_restricted(a);
  }
  if (packing == Packing::kTarGz) archive_write_add_filter_gzip(a);
  EXPECT_EQ(archive_write_open(a, &out, nullptr, Append, nullptr), ARCHIVE_OK);
  for (const TestEntry& e : entries) {
    archive_entry* entry = archive_entry_new();
    archive_entry_set_pathname(entry, e.path.c_str());
    archive_entry_set_filetype(entry, e.type);
    archive_entry_set_perm(entry, e.type == AE_IFDIR ? 0755 : 0644);
    if (!e.symlink.empty()) archive_entry_set_symlink(entry, e.symlink.c_str());
    if (!e.hardlink.empty()) archive_entry_set_hardlink(entry, e.hardlink.c_str());
    archive_entry_set_size(entry, static_cast<la_int64_t>(e.data.size()));
    EXPECT_EQ(archive_write_header(a, entry), ARCHIVE_OK) << e.path;
    if (!e.data.empty()) archive_write_data(a, e.data.data(), e.data.size());
    archive_entry_free(entry);
  }
  archive_write_close(a);
  archive_write_free(a);
  return out;
}

inline TestEntry Entry(std::string path, mode_t type) {
  TestEntry e;
  e.path = std::move(path);
  e.type = type;
  return e;
}
inline TestEntry File(std::string path, std::string data = "x = 1\n") {
  TestEntry e = Entry(std::move(path), AE_IFREG);
  e.data = std::move(data);
  return e;
}
inline TestEntry Dir(std::string path) {
  return Entry(std::move(path), AE_IFDIR);
}
inline TestEntry Symlink(std::string path, std::string target) {
  TestEntry e = Entry(std::move(path), AE_IFLNK);
  e.symlink = std::move(target);
  return e;
}
inline TestEntry Hardlink(std::string path, std::string target) {
  TestEntry e = Entry(std::move(path), AE_IFREG);
  e.hardlink = std::move(target);
  return e;
}

}  // namespace toolgate::registry
