// UnpackBundle: a version's bundle (a gzip-compressed tar archive) written out as a directory
// tree the sandboxes may show read-only.
//
// The registry checked the bundle when it was published; the executor checks it again as it
// writes it (defense in depth: a registry bug, or a row changed in the database, must not become
// a file written outside the cache). Every entry is written through directory descriptors opened
// one component at a time with O_NOFOLLOW, so no entry can be written through a link, and it is
// refused, naming the entry, when:
//   * its path is absolute, has a ".." component, or is not valid text;
//   * it is a device, FIFO, socket or any other special entry;
//   * it is a symbolic link that is absolute or whose target, resolved from the link's
//     directory, leaves the bundle or passes through another link;
//   * it is a hard link to anything but a regular file earlier in the bundle;
//   * it names a path a previous entry already holds;
//   * the bundle holds more than max_entries entries or more than max_unpacked_bytes of file
//     data (counted as the data is decompressed, not as the headers claim).
// Files end up mode 0444 and directories 0555, owned by the executor (root): the sandboxes,
// whose users are other uids, read them and cannot change them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "toolgate/base/status.h"

namespace toolgate::executor {

struct BundleLimits {
  size_t max_compressed_bytes = 50u << 20;   // the archive as fetched
  uint64_t max_unpacked_bytes = 250u << 20;  // the sum of the files' sizes
  size_t max_entries = 10'000;               // files, directories and links
};

struct UnpackedSize {
  uint64_t bytes = 0;  // file data written
  size_t entries = 0;
};

// Writes archive's entries under dir, which must exist and be empty. InvalidArgument naming
// the entry ("lib/../../x: a path may not leave the bundle") when the bundle is refused,
// Internal when the disk fails; on any failure dir may hold part of the bundle: the caller
// removes it. Thread-safe (touches only dir).
Result<UnpackedSize> UnpackBundle(std::string_view archive, const std::string& dir,
                                  const BundleLimits& limits);

// True when path names something inside a bundle: relative, no ".." component, no control
// character, not the root itself ("src/main.py", "./handler.py").
bool IsBundlePath(std::string_view path);

// Removes path and everything under it, never following a link out of it. Ok when path does
// not exist. Internal when something could not be removed.
Status RemoveTree(const std::string& path);

}  // namespace toolgate::executor
