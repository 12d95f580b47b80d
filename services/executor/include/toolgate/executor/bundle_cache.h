// BundleCache: the bundles of bundle versions, unpacked on the executor's disk once per digest.
//
// A bundle version's code is a .tar.gz named by the SHA-256 of its bytes (its digest). The first
// call of any version with that digest fetches the bytes from the BundleSource (the registry),
// checks that they hash to the digest (a source that answers with other bytes is refused, never
// unpacked), and unpacks them (bundle_unpack.h) into <dir>/<digest>, by way of a staging
// directory renamed into place once complete, so a directory under its digest is always whole.
// Every later call, of that version or another with the same bytes, finds the directory: a warm
// call never fetches nor unpacks.
//
// A worker that shows a bundle in its sandbox holds a BundleRef for its whole life; the cache
// keeps at most max_bytes of unpacked files, and when a new bundle takes it past that, it
// removes the least recently used bundles no reference holds. A bundle in use is never
// removed, so the cache may stay above max_bytes until its workers are gone (the next miss
// evicts then).
//
// The directory is emptied when the cache opens (but for .views, bundle_views.h's, and .lock):
// files left by an earlier executor could have been changed while no executor watched them, and
// fetching again costs one cold start.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

#include "toolgate/base/status.h"
#include "toolgate/executor/bundle_unpack.h"
#include "toolgate/executor/runtime.h"

namespace toolgate::executor {

// Where bundles come from on a miss.
class BundleSource {
 public:
  virtual ~BundleSource() = default;
  // The bundle (.tar.gz bytes) of a published version. NotFound when the version or its bundle
  // does not exist; Unavailable or Timeout when the source cannot answer. Called concurrently.
  virtual Result<std::string> FetchBundle(const std::string& function_id,
                                          const std::string& version,
                                          std::string_view traceparent) = 0;
};

struct BundleCacheOptions {
  // Absolute; created (0711: sandboxes pass through, nobody lists it) when missing; emptied on
  // Open. Every directory above it must let others through.
  std::string dir;
  uint64_t max_bytes = uint64_t{1} << 30;  // unpacked bytes kept for bundles no worker uses
  BundleLimits limits;
};

class BundleCache {
 public:
  // A cache in options.dir, filled from source, which must outlive it. Internal when the
  // directory cannot be made or emptied, another executor holds it (a lock file in it), or a
  // directory above it lets no other user through (the sandboxes could not bind the bundles).
  static Result<std::unique_ptr<BundleCache>> Open(BundleCacheOptions options,
                                                   BundleSource& source);

  // The unpacked bundle whose bytes hash to digest (64 lower-case hex characters), fetched as
  // function_id@version on a miss. The files stay on disk while the returned reference, or a
  // copy of it, lives. InvalidArgument for a malformed digest; Internal when the fetched bytes
  // do not hash to it (they are not unpacked); the bundle's refusal (InvalidArgument naming the
  // entry) when it does not unpack; the source's failure as is. Nothing of a failed miss stays on
  // disk. Thread-safe: concurrent misses of one digest fetch it once, the others wait for it.
  Result<BundleRef> Get(const std::string& digest, const std::string& function_id,
                        const std::string& version, std::string_view traceparent);

  // Leaves the files on disk (the next executor empties the directory). Every reference must
  // be gone.
  ~BundleCache();
  BundleCache(const BundleCache&) = delete;
  BundleCache& operator=(const BundleCache&) = delete;

  // Unpacked bytes held now, in use or not.
  uint64_t bytes() const;
  // Bundles held now.
  size_t count() const;

 private:
  BundleCache(BundleCacheOptions options, BundleSource& source)
      : options_(std::move(options)), source_(source) {}

  struct Entry {
    BundleRef ref;  // null while it is being fetched
    uint64_t bytes = 0;
    std::list<std::string>::iterator lru;  // into lru_, once ready
  };
  // Fetches, verifies and unpacks digest into its directory; the bytes it holds.
  Result<uint64_t> Load(const std::string& digest, const std::string& function_id,
                        const std::string& version, std::string_view traceparent);
  // Moves the least recently used bundles no reference holds out of the way while bytes_ is
  // over max_bytes; returns their renamed directories, to be removed without mu_. Requires mu_.
  std::vector<std::string> EvictUnused();

  const BundleCacheOptions options_;
  BundleSource& source_;
  mutable std::mutex mu_;
  std::condition_variable loaded_cv_;               // a load finished, well or not
  std::unordered_map<std::string, Entry> entries_;  // guarded by mu_; by digest
  std::list<std::string> lru_;                      // guarded by mu_; most recent first
  uint64_t bytes_ = 0;                              // guarded by mu_
  uint64_t serial_ = 0;                             // guarded by mu_; staging/trash names
  int lock_fd_ = -1;
};

// True when digest is 64 lower-case hex characters (a SHA-256, and a safe directory name).
bool IsBundleDigest(std::string_view digest);

}  // namespace toolgate::executor
