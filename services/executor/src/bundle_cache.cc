#include "toolgate/executor/bundle_cache.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <vector>

#include "toolgate/base/crypto.h"
#include "toolgate/base/log.h"

namespace toolgate::executor {

bool IsBundleDigest(std::string_view digest) {
  if (digest.size() != 64) return false;
  for (char c : digest) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

namespace {

// The sandboxes' root user, an unprivileged host uid, binds a bundle's directory from its host
// path: every directory above it must let others through (search, not read).
Status CheckReachable(const std::string& dir) {
  for (size_t slash = dir.find('/', 1); slash != std::string::npos;
       slash = dir.find('/', slash + 1)) {
    std::string above = dir.substr(0, slash);
    struct stat st;
    if (::stat(above.c_str(), &st) == 0 && (st.st_mode & S_IXOTH) == 0) {
      return Status::Internal(above +
                              " lets no other user through (chmod o+x), so sandboxes "
                              "cannot see the bundles under it");
    }
  }
  return Status::Ok();
}

}  // namespace

Result<std::unique_ptr<BundleCache>> BundleCache::Open(BundleCacheOptions options,
                                                       BundleSource& source) {
  if (options.dir.empty() || options.dir.front() != '/') {
    return Status::InvalidArgument("the bundle cache needs an absolute directory");
  }
  while (options.dir.size() > 1 && options.dir.back() == '/') options.dir.pop_back();
  // Others may pass through to a digest's directory, not list which digests are here.
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(options.dir).parent_path(), ec);
  if (::mkdir(options.dir.c_str(), 0711) != 0 && errno != EEXIST) {
    return Status::Internal("cannot make " + options.dir + ": " + std::strerror(errno));
  }
  struct stat st;
  if (::lstat(options.dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) ||
      ::chmod(options.dir.c_str(), 0711) != 0) {
    return Status::Internal(options.dir + " is not a directory the executor owns");
  }
  Status reachable = CheckReachable(options.dir + "/");
  if (!reachable.ok()) return reachable;
  // One executor per directory: another one's emptying or eviction would pull files from under
  // this one's workers. The lock goes with the process, however it ends.
  int lock = ::open((options.dir + "/.lock").c_str(), O_RDONLY | O_CREAT | O_CLOEXEC, 0600);
  if (lock < 0 || ::flock(lock, LOCK_EX | LOCK_NB) != 0) {
    std::string why = std::strerror(errno);
    if (lock >= 0) ::close(lock);
    return Status::Internal(options.dir + " is in use by another executor (" + why + ")");
  }
  // Empties the directory but keeps it (an operator may have made it a mount of its own).
  Status emptied = Status::Ok();
  if (DIR* d = ::opendir(options.dir.c_str())) {
    std::vector<std::string> names;
    while (dirent* e = ::readdir(d)) {
      if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0 &&
          std::strcmp(e->d_name, ".lock") != 0 && std::strcmp(e->d_name, ".views") != 0) {
        names.emplace_back(e->d_name);
      }
    }
    ::closedir(d);
    for (const std::string& name : names) {
      Status s = RemoveTree(options.dir + "/" + name);
      if (!s.ok()) return s;
    }
  }
  auto cache = std::unique_ptr<BundleCache>(new BundleCache(std::move(options), source));
  cache->lock_fd_ = lock;
  return cache;
}

Result<BundleRef> BundleCache::Get(const std::string& digest, const std::string& function_id,
                                   const std::string& version, std::string_view traceparent) {
  if (!IsBundleDigest(digest)) {
    return Status::InvalidArgument("not a bundle digest: \"" + digest + "\"");
  }
  {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      auto it = entries_.find(digest);
      if (it == entries_.end()) break;
      if (it->second.ref) {
        lru_.splice(lru_.begin(), lru_, it->second.lru);
        return it->second.ref;
      }
      loaded_cv_.wait(lock);  // another call is fetching it
    }
    entries_.emplace(digest, Entry{});  // ours to load; others wait
  }

  auto loaded = Load(digest, function_id, version, traceparent);
  std::vector<std::string> doomed;
  BundleRef ref;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!loaded.ok()) {
      entries_.erase(digest);
    } else {
      Entry& entry = entries_[digest];
      entry.ref =
          std::make_shared<const BundleFiles>(BundleFiles{digest, options_.dir + "/" + digest});
      entry.bytes = *loaded;
      lru_.push_front(digest);
      entry.lru = lru_.begin();
      bytes_ += *loaded;
      ref = entry.ref;
      doomed = EvictUnused();
    }
  }
  loaded_cv_.notify_all();
  for (const std::string& dir : doomed) {
    Status s = RemoveTree(dir);
    if (!s.ok()) log::Warn("cannot remove an evicted bundle").Str("error", s.ToString());
  }
  if (!loaded.ok()) return loaded.status();
  return ref;
}

Result<uint64_t> BundleCache::Load(const std::string& digest, const std::string& function_id,
                                   const std::string& version, std::string_view traceparent) {
  auto bytes = source_.FetchBundle(function_id, version, traceparent);
  if (!bytes.ok()) return bytes.status();
  if (HexEncode(Sha256(*bytes)) != digest) {
    return Status::Internal("the bundle of " + function_id + "@" + version +
                            " does not hash to its digest " + digest);
  }
  std::string staging;
  {
    std::lock_guard<std::mutex> lock(mu_);
    staging = options_.dir + "/.staging-" + std::to_string(++serial_);
  }
  if (::mkdir(staging.c_str(), 0755) != 0) {
    return Status::Internal("cannot make " + staging + ": " + std::strerror(errno));
  }
  auto size = UnpackBundle(*bytes, staging, options_.limits);
  if (size.ok() && ::rename(staging.c_str(), (options_.dir + "/" + digest).c_str()) != 0) {
    size =
        Status::Internal("cannot move the bundle into place: " + std::string(std::strerror(errno)));
  }
  if (!size.ok()) {
    Status removed = RemoveTree(staging);
    if (!removed.ok()) log::Warn("cannot remove a failed bundle").Str("error", removed.ToString());
    return size.status();
  }
  return size->bytes;
}

std::vector<std::string> BundleCache::EvictUnused() {
  std::vector<std::string> doomed;
  for (auto it = lru_.end(); bytes_ > options_.max_bytes && it != lru_.begin();) {
    --it;
    Entry& entry = entries_.at(*it);
    // The cache's own reference is the only one: no worker shows it, and none can get it
    // without mu_.
    if (entry.ref.use_count() > 1) continue;
    // Renamed now, removed later: a miss of the same digest may unpack it again meanwhile.
    std::string trash = options_.dir + "/.evicted-" + std::to_string(++serial_);
    if (::rename(entry.ref->dir.c_str(), trash.c_str()) != 0) {
      log::Warn("cannot evict a bundle").Str("digest", *it).Str("error", std::strerror(errno));
      continue;
    }
    doomed.push_back(std::move(trash));
    bytes_ -= entry.bytes;
    entries_.erase(*it);
    it = lru_.erase(it);
  }
  return doomed;
}

BundleCache::~BundleCache() {
  if (lock_fd_ >= 0) ::close(lock_fd_);
}

uint64_t BundleCache::bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return bytes_;
}

size_t BundleCache::count() const {
  std::lock_guard<std::mutex> lock(mu_);
  return lru_.size();
}

}  // namespace toolgate::executor
