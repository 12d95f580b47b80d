// BundleCheck: whether a version's bundle (a gzip-compressed tar archive holding the handler and
// its modules) is one Toolgate will store and unpack.
//
// The check reads the archive from memory with libarchive and never touches the disk: nothing
// is unpacked here. It refuses, naming the entry and the reason:
//   * anything but a gzip-compressed tar (zip, plain tar, bzip2, a gzip of something else);
//   * a path that is absolute, has a ".." component, or passes through a symbolic link;
//   * a symbolic link that is absolute or whose target, resolved from the link's directory,
//     leaves the bundle or passes through another link (so that no chain of links can climb
//     out: only relative links that stay inside are kept, like node_modules/.bin/*);
//   * a hard link whose target is not a regular file earlier in the bundle;
//   * character or block devices, FIFOs, sockets and any other special entry;
//   * the same path twice (a later entry would silently replace the checked one);
//   * more than max_compressed_bytes, more than max_unpacked_bytes of file data, or more than
//     max_entries entries (files, directories and links all count);
//   * a handler that is not a regular file of the bundle.
// A leading "./" is dropped from every path (what `tar -C dir -czf - .` writes).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "toolgate/base/status.h"
#include "toolgate/core/bundle_paths.h"

namespace toolgate::registry {

struct BundleLimits {
  size_t max_compressed_bytes = 50u << 20;   // 50 MiB, the archive as uploaded
  uint64_t max_unpacked_bytes = 250u << 20;  // 250 MiB, the sum of the entries' sizes
  size_t max_entries = 10'000;
};

// What a valid bundle holds.
struct BundleInfo {
  std::string digest;           // SHA-256 of the archive's bytes, lower-case hex
  uint64_t size_bytes = 0;      // the archive's size (compressed)
  uint64_t unpacked_bytes = 0;  // the sum of the entries' sizes (their data, of every kind)
  int64_t files = 0;            // entries of every kind
  uint64_t handler_bytes = 0;   // the handler's size
  // The handler's contents, for its syntax check; read only when handler_bytes is at most
  // kMaxHandlerReadBytes (empty otherwise).
  std::string handler_code;
};

// The largest handler BundleCheck reads into BundleInfo::handler_code: what single-file code
// may be, and so what a syntax check is made for.
inline constexpr uint64_t kMaxHandlerReadBytes = 1 << 20;

// Stateless apart from its limits; thread-safe.
class BundleCheck {
 public:
  explicit BundleCheck(BundleLimits limits = {}) : limits_(limits) {}

  // Checks archive, whose entry file is handler (a relative path, checked with
  // CheckBundlePath). InvalidArgument with a message for the publisher when the bundle is
  // refused: "PATH: REASON" for an entry's fault ("../evil.py: a path may not leave the
  // bundle"), or the reason alone for the whole archive ("is not a gzip-compressed tar
  // archive"). Never another code.
  Result<BundleInfo> Check(std::string_view archive, std::string_view handler) const;

  const BundleLimits& limits() const { return limits_; }

 private:
  BundleLimits limits_;
};

// A path inside a bundle with a leading "./" and any trailing '/' dropped, or InvalidArgument
// saying why it is not one: empty, absolute, with a ".." component or an empty one ("a//b"),
// or holding a control character.
Result<std::string> CheckBundlePath(std::string_view path);

// The entry file of a runtime when a version names none (core/bundle_paths.h).
using core::DefaultBundleHandler;

}  // namespace toolgate::registry
