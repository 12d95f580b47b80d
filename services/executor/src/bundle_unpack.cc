#include "toolgate/executor/bundle_unpack.h"

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <set>
#include <unordered_map>
#include <utility>
#include <vector>

#include "toolgate/core/bundle_paths.h"

namespace toolgate::executor {
namespace {

using ArchivePtr = std::unique_ptr<archive, decltype(&archive_read_free)>;
using Parts = std::vector<std::string>;

class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  Fd(Fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  Fd& operator=(Fd&& other) noexcept {
    std::swap(fd_, other.fd_);
    return *this;
  }
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

std::string Join(const Parts& parts, size_t n) {
  return core::JoinBundlePath(parts, n);
}

Status EntryError(std::string_view path, std::string_view reason) {
  return Status::InvalidArgument(std::string(path) + ": " + std::string(reason));
}

std::string MiB(uint64_t bytes) {
  return std::to_string(bytes >> 20) + " MiB";
}

// The components of an entry's path (core::SplitBundlePath), or why it is refused, named.
Result<Parts> SplitPath(std::string_view path) {
  auto parts = core::SplitBundlePath(path);
  if (!parts.ok()) return EntryError(path, parts.status().message());
  return parts;
}

// Writes entries under a root directory, one component at a time, never through a link.
class TreeWriter {
 public:
  explicit TreeWriter(int root) : root_(root) {}

  // The directory holding parts[0..n), made where missing. InvalidArgument when a component
  // is a link or a file.
  Result<Fd> OpenDir(const Parts& parts, size_t n, std::string_view entry) {
    Fd dir(::fcntl(root_, F_DUPFD_CLOEXEC, 0));
    if (dir.get() < 0) return Errno("dup");
    for (size_t i = 0; i < n; ++i) {
      if (::mkdirat(dir.get(), parts[i].c_str(), 0755) != 0 && errno != EEXIST) {
        return Errno("mkdir " + Join(parts, i + 1));
      }
      Fd next(
          ::openat(dir.get(), parts[i].c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      if (next.get() < 0) {
        if (errno == ELOOP || errno == ENOTDIR) {
          return EntryError(entry, "a path may not pass through a link or a file");
        }
        return Errno("open " + Join(parts, i + 1));
      }
      dir = std::move(next);
    }
    return dir;
  }

 private:
  static Status Errno(const std::string& what) {
    return Status::Internal("cannot unpack the bundle: " + what + ": " + std::strerror(errno));
  }
  int root_;
};

// The paths a symbolic link's target passes through (core::ResolveBundleLink), or why it is
// refused, named.
Result<std::vector<std::string>> ResolveLink(const Parts& link, std::string_view target,
                                             std::string_view entry) {
  auto visited = core::ResolveBundleLink(link, target);
  if (!visited.ok()) return EntryError(entry, visited.status().message());
  return visited;
}

Status Fixup(const char* path, const struct stat* st, int type, struct FTW*) {
  if (type == FTW_SL || type == FTW_SLN) return Status::Ok();
  mode_t mode = S_ISDIR(st->st_mode) ? 0555 : 0444;
  if (::chmod(path, mode) != 0) {
    return Status::Internal(std::string("cannot unpack the bundle: chmod: ") +
                            std::strerror(errno));
  }
  return Status::Ok();
}

// nftw's callbacks take no context; each walk runs on one thread, start to end.
thread_local Status* walk_status = nullptr;

int FixupOne(const char* path, const struct stat* st, int type, struct FTW* ftw) {
  Status s = Fixup(path, st, type, ftw);
  if (s.ok()) return 0;
  *walk_status = std::move(s);
  return 1;
}

int RemoveOne(const char* path, const struct stat*, int, struct FTW*) {
  if (::remove(path) != 0 && errno != ENOENT) {
    *walk_status =
        Status::Internal(std::string("cannot remove ") + path + ": " + std::strerror(errno));
    return 1;
  }
  return 0;
}

Status Walk(const std::string& path, int (*fn)(const char*, const struct stat*, int, FTW*),
            int flags) {
  Status status = Status::Ok();
  walk_status = &status;
  int rc = ::nftw(path.c_str(), fn, 32, flags | FTW_PHYS);
  walk_status = nullptr;
  if (rc == -1 && errno != ENOENT && status.ok()) {
    return Status::Internal("cannot walk " + path + ": " + std::strerror(errno));
  }
  return status;
}

class Unpacker {
 public:
  Unpacker(archive* a, int root, const BundleLimits& limits)
      : archive_(a), writer_(root), limits_(limits) {}

  Result<UnpackedSize> Run() {
    archive_entry* entry = nullptr;
    for (;;) {
      int rc = archive_read_next_header(archive_, &entry);
      if (rc == ARCHIVE_EOF) break;
      if (rc != ARCHIVE_OK) return Corrupt();
      if (++size_.entries > limits_.max_entries) {
        return Status::InvalidArgument("the bundle holds more than " +
                                       std::to_string(limits_.max_entries) + " entries");
      }
      Status s = Entry(entry);
      if (!s.ok()) return s;
    }
    // Links are checked once every entry is known: a link may name one that comes later.
    for (const auto& [path, visited] : links_) {
      for (const std::string& step : visited) {
        if (links_.count(step) != 0) {
          return EntryError(path, "a link may not point through another link");
        }
      }
    }
    return size_;
  }

 private:
  Status Corrupt() {
    const char* why = archive_error_string(archive_);
    return Status::InvalidArgument(std::string("the bundle is not a valid gzip-compressed tar: ") +
                                   (why != nullptr ? why : "unreadable"));
  }

  Status Entry(archive_entry* entry) {
    const char* raw = archive_entry_pathname(entry);
    if (raw == nullptr) return Status::InvalidArgument("an entry's path is not valid text");
    std::string name = raw;
    auto parts = SplitPath(name);
    if (!parts.ok()) return parts.status();
    if (parts->empty()) return Status::Ok();  // the root itself
    const std::string path = Join(*parts, parts->size());
    if (!seen_.insert(path).second) return EntryError(name, "the bundle holds this path twice");
    auto dir = writer_.OpenDir(*parts, parts->size() - 1, name);
    if (!dir.ok()) return dir.status();
    const char* leaf = parts->back().c_str();

    if (const char* hardlink = archive_entry_hardlink(entry)) {
      auto target = SplitPath(hardlink);
      if (!target.ok() || target->empty() || files_.count(Join(*target, target->size())) == 0) {
        return EntryError(name, "a hard link must name a file earlier in the bundle");
      }
      auto target_dir = writer_.OpenDir(*target, target->size() - 1, name);
      if (!target_dir.ok()) return target_dir.status();
      if (::linkat(target_dir->get(), target->back().c_str(), dir->get(), leaf, 0) != 0) {
        return Failed("link " + path);
      }
      files_.insert(path);
      return Status::Ok();
    }
    switch (archive_entry_filetype(entry)) {
      case AE_IFDIR:
        if (::mkdirat(dir->get(), leaf, 0755) != 0 && errno != EEXIST) {
          return Failed("mkdir " + path);
        }
        return Status::Ok();
      case AE_IFREG:
        return File(name, path, dir->get(), leaf);
      case AE_IFLNK: {
        const char* target = archive_entry_symlink(entry);
        auto resolved = ResolveLink(*parts, target != nullptr ? target : "", name);
        if (!resolved.ok()) return resolved.status();
        if (::symlinkat(target, dir->get(), leaf) != 0) return Failed("symlink " + path);
        links_.emplace(path, std::move(*resolved));
        return Status::Ok();
      }
      case AE_IFCHR:
      case AE_IFBLK:
        return EntryError(name, "device files are not allowed");
      case AE_IFIFO:
        return EntryError(name, "FIFOs are not allowed");
      case AE_IFSOCK:
        return EntryError(name, "sockets are not allowed");
      default:
        return EntryError(name, "only files, directories and links are allowed");
    }
  }

  // A regular file's data, counted as it is decompressed: a header's size is only a claim.
  Status File(const std::string& name, const std::string& path, int dir, const char* leaf) {
    Fd out(::openat(dir, leaf, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644));
    if (out.get() < 0) {
      if (errno == EEXIST) return EntryError(name, "the bundle holds this path twice");
      return Failed("create " + path);
    }
    char buf[64 << 10];
    for (;;) {
      la_ssize_t n = archive_read_data(archive_, buf, sizeof buf);
      if (n < 0) return Corrupt();
      if (n == 0) break;
      size_.bytes += static_cast<uint64_t>(n);
      if (size_.bytes > limits_.max_unpacked_bytes) {
        return Status::InvalidArgument("the bundle unpacks to more than " +
                                       MiB(limits_.max_unpacked_bytes));
      }
      for (la_ssize_t off = 0; off < n;) {
        ssize_t w = ::write(out.get(), buf + off, static_cast<size_t>(n - off));
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return Failed("write " + path);
        off += w;
      }
    }
    files_.insert(path);
    return Status::Ok();
  }

  static Status Failed(const std::string& what) {
    return Status::Internal("cannot unpack the bundle: " + what + ": " + std::strerror(errno));
  }

  archive* archive_;
  TreeWriter writer_;
  const BundleLimits& limits_;
  UnpackedSize size_;
  std::set<std::string> seen_;
  std::set<std::string> files_;  // regular files, for hard links
  // symlink path -> the paths its target passes through
  std::unordered_map<std::string, std::vector<std::string>> links_;
};

}  // namespace

Result<UnpackedSize> UnpackBundle(std::string_view bytes, const std::string& dir,
                                  const BundleLimits& limits) {
  if (bytes.size() > limits.max_compressed_bytes) {
    return Status::InvalidArgument("the bundle is larger than " + MiB(limits.max_compressed_bytes));
  }
  Fd root(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (root.get() < 0) {
    return Status::Internal("cannot open " + dir + ": " + std::strerror(errno));
  }
  ArchivePtr a(archive_read_new(), archive_read_free);
  if (!a) return Status::Internal("archive_read_new failed");
  archive_read_support_filter_gzip(a.get());
  archive_read_support_format_tar(a.get());
  if (archive_read_open_memory(a.get(), bytes.data(), bytes.size()) != ARCHIVE_OK) {
    return Status::InvalidArgument("the bundle is not a gzip-compressed tar archive");
  }
  if (archive_filter_code(a.get(), 0) != ARCHIVE_FILTER_GZIP) {
    return Status::InvalidArgument("the bundle is not a gzip-compressed tar archive");
  }
  auto size = Unpacker(a.get(), root.get(), limits).Run();
  if (!size.ok()) return size.status();
  Status fixed = Walk(dir, FixupOne, FTW_DEPTH);
  if (!fixed.ok()) return fixed;
  return size;
}

bool IsBundlePath(std::string_view path) {
  auto parts = SplitPath(path);
  return parts.ok() && !parts->empty();
}

Status RemoveTree(const std::string& path) {
  return Walk(path, RemoveOne, FTW_DEPTH);
}

}  // namespace toolgate::executor
