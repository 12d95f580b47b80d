#include "toolgate/registry/bundle_check.h"

#include <archive.h>
#include <archive_entry.h>

#include <algorithm>
#include <memory>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "toolgate/base/crypto.h"
#include "toolgate/core/bundle_paths.h"

namespace toolgate::registry {
namespace {

using ArchivePtr = std::unique_ptr<archive, decltype(&archive_read_free)>;

std::string MiB(uint64_t bytes) {
  return std::to_string(bytes >> 20) + " MiB";
}

Status EntryError(std::string_view path, std::string_view reason) {
  return Status::InvalidArgument(std::string(path) + ": " + std::string(reason));
}

const char* SpecialKind(mode_t type) {
  switch (type) {
    case AE_IFCHR:
    case AE_IFBLK:
      return "device files are not allowed";
    case AE_IFIFO:
      return "FIFOs are not allowed";
    case AE_IFSOCK:
      return "sockets are not allowed";
    default:
      return "only files, directories and links are allowed";
  }
}

// Entries seen so far, to check links and the handler once the whole archive is read: a link
// may point at an entry that comes later.
struct Entries {
  std::unordered_map<std::string, mode_t> kinds;          // every entry's type
  std::unordered_set<std::string> regular;                // regular files (hard links excluded)
  std::unordered_map<std::string, std::string> symlinks;  // path -> target as written
};

// The target of the symbolic link at link_path, resolved lexically from the link's directory
// (core::ResolveBundleLink); InvalidArgument when it is absolute, climbs above the bundle's
// root, or passes through a link (whose own target could climb further than the text shows).
Status CheckSymlink(const std::string& link_path, const std::string& target,
                    const Entries& entries) {
  auto link = core::SplitBundlePath(link_path);
  if (!link.ok()) return EntryError(link_path, link.status().message());
  auto visited = core::ResolveBundleLink(*link, target);
  if (!visited.ok()) return EntryError(link_path, visited.status().message());
  for (const std::string& prefix : *visited) {
    if (prefix == link_path) return EntryError(link_path, "a link may not point to itself");
    if (entries.symlinks.count(prefix) > 0) {
      return EntryError(link_path, "a link may not point through another link");
    }
  }
  return Status::Ok();
}

}  // namespace

Result<std::string> CheckBundlePath(std::string_view path) {
  while (path.size() >= 2 && path.substr(0, 2) == "./") path.remove_prefix(2);
  while (!path.empty() && path.back() == '/') path.remove_suffix(1);
  if (path.empty()) return Status::InvalidArgument("a path may not be empty");
  auto parts = core::SplitBundlePath(path);
  if (!parts.ok()) return parts.status();
  // One spelling per entry, so that "a//b" and "a/./b" cannot pass as two entries.
  std::string canonical = core::JoinBundlePath(*parts, parts->size());
  if (canonical != path) {
    return Status::InvalidArgument("a path may not have empty or \".\" components");
  }
  return canonical;
}

Result<BundleInfo> BundleCheck::Check(std::string_view bytes, std::string_view handler) const {
  if (bytes.size() > limits_.max_compressed_bytes) {
    return Status::InvalidArgument("is over " + MiB(limits_.max_compressed_bytes) + " compressed");
  }
  auto handler_path = CheckBundlePath(handler);
  if (!handler_path.ok()) return handler_path.status();

  ArchivePtr a(archive_read_new(), archive_read_free);
  if (!a) return Status::InvalidArgument("cannot be read (out of memory)");
  archive_read_support_filter_gzip(a.get());
  archive_read_support_format_tar(a.get());
  const Status not_tar_gz = Status::InvalidArgument("is not a gzip-compressed tar archive");
  if (archive_read_open_memory(a.get(), bytes.data(), bytes.size()) != ARCHIVE_OK) {
    return not_tar_gz;
  }

  BundleInfo info;
  Entries entries;
  bool handler_seen = false;
  for (;;) {
    archive_entry* entry = nullptr;
    int r = archive_read_next_header(a.get(), &entry);
    if (r == ARCHIVE_EOF) break;
    // The filter is known once the first header is read; "none" is always enabled in libarchive.
    if (archive_filter_code(a.get(), 0) != ARCHIVE_FILTER_GZIP) return not_tar_gz;
    if (r != ARCHIVE_OK && r != ARCHIVE_WARN) {
      if (info.files == 0) return not_tar_gz;
      const char* why = archive_error_string(a.get());
      return Status::InvalidArgument(std::string("is damaged: ") + (why ? why : "unreadable"));
    }
    const char* raw = archive_entry_pathname(entry);
    std::string_view name = raw ? raw : "";
    const mode_t type = archive_entry_filetype(entry);
    if (type == AE_IFDIR && (name == "." || name == "./")) continue;  // the root itself
    if (++info.files > static_cast<int64_t>(limits_.max_entries)) {
      return Status::InvalidArgument("has more than " + std::to_string(limits_.max_entries) +
                                     " entries");
    }
    auto path = CheckBundlePath(name);
    if (!path.ok()) return EntryError(name, path.status().message());
    auto [seen, added] = entries.kinds.emplace(*path, type);
    if (!added && (type != AE_IFDIR || seen->second != AE_IFDIR)) {
      return EntryError(*path, "appears twice in the bundle");
    }
    // Every entry's data counts, whatever its kind: a hard link may carry some too.
    const la_int64_t size = std::max<la_int64_t>(archive_entry_size(entry), 0);
    info.unpacked_bytes += static_cast<uint64_t>(size);
    if (info.unpacked_bytes > limits_.max_unpacked_bytes) {
      return Status::InvalidArgument("unpacks to more than " + MiB(limits_.max_unpacked_bytes));
    }
    const char* hardlink = archive_entry_hardlink(entry);
    if (hardlink != nullptr) {
      auto target = CheckBundlePath(hardlink);
      if (!target.ok() || entries.regular.count(*target) == 0) {
        return EntryError(*path, "a hard link must point to a file earlier in the bundle");
      }
      continue;
    }
    if (type == AE_IFLNK) {
      const char* target = archive_entry_symlink(entry);
      entries.symlinks[*path] = target ? target : "";
      continue;
    }
    if (type == AE_IFDIR) continue;
    if (type != AE_IFREG) return EntryError(*path, SpecialKind(type));
    entries.regular.insert(*path);
    if (*path == *handler_path) {
      handler_seen = true;
      info.handler_bytes = static_cast<uint64_t>(size);
      if (info.handler_bytes <= kMaxHandlerReadBytes) {
        info.handler_code.resize(static_cast<size_t>(size));
        size_t filled = 0;
        while (filled < info.handler_code.size()) {
          la_ssize_t got = archive_read_data(a.get(), info.handler_code.data() + filled,
                                             info.handler_code.size() - filled);
          if (got <= 0) return EntryError(*path, "cannot be read");
          filled += static_cast<size_t>(got);
        }
      }
    }
  }
  // An archive without entries never showed its filter in the loop.
  if (archive_filter_code(a.get(), 0) != ARCHIVE_FILTER_GZIP) return not_tar_gz;
  // Nothing may be placed under a link, whichever comes first: unpacking would follow it.
  for (const auto& [path, type] : entries.kinds) {
    std::vector<std::string> parts = *core::SplitBundlePath(path);  // canonical already
    for (size_t n = 1; n < parts.size(); ++n) {
      if (entries.symlinks.count(core::JoinBundlePath(parts, n)) > 0) {
        return EntryError(path, "a path may not pass through a link");
      }
    }
  }
  for (const auto& [path, target] : entries.symlinks) {
    Status s = CheckSymlink(path, target, entries);
    if (!s.ok()) return s;
  }
  if (!handler_seen) {
    return EntryError(*handler_path, "the handler must be a regular file in the bundle");
  }
  info.size_bytes = bytes.size();
  info.digest = HexEncode(Sha256(bytes));
  return info;
}

}  // namespace toolgate::registry
