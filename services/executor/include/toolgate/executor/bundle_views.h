// BundleViews: a bundle shown in a worker's sandbox after the worker has started.
//
// Spares (worker_pool.h) are started before their version is known, so their sandboxes cannot
// bind a bundle when they are built. Instead every worker's sandbox binds a directory of its own
// at /bundle, a view: a fresh, empty directory under <dir>, which is a shared mount. The sandbox
// makes its mounts slaves of the executor's (sandbox.cc), so a mount the executor later puts on
// the view propagates into that one sandbox. Show() mounts the unpacked bundle there as a
// read-only, nosuid, nodev, noexec clone (open_tree, mount_setattr, move_mount: the flags are
// set before the mount is attached, so the copy that propagates has them, and in the sandbox's
// user namespace they are locked). A view is never reused: a worker started in a slot another
// worker just left binds a new directory, so it can never see the bundle of the one before.
//
// The executor must be root in its mount namespace (it is: the sandboxes need it).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "toolgate/base/status.h"
#include "toolgate/executor/runtime.h"

namespace toolgate::executor {

class BundleViews;

// One worker's /bundle. Destroy it after the worker's process is gone: it unmounts the bundle
// and removes the directory. Not thread-safe (one worker's).
class BundleView {
 public:
  ~BundleView();
  BundleView(const BundleView&) = delete;
  BundleView& operator=(const BundleView&) = delete;

  // The host directory the worker's sandbox binds at /bundle.
  const std::string& dir() const { return dir_; }
  // Mounts bundle's files on the view, read-only, and keeps bundle (its files stay on disk)
  // until the view is destroyed. Internal when the mount fails; InvalidArgument when a bundle is
  // shown already.
  Status Show(BundleRef bundle);

 private:
  friend class BundleViews;
  explicit BundleView(std::string dir) : dir_(std::move(dir)) {}
  std::string dir_;
  BundleRef bundle_;
  bool mounted_ = false;
};

class BundleViews {
 public:
  // Views under dir (created when missing): unmounts what an earlier executor left there,
  // empties it, and makes it a shared mount of its own. Internal when that fails (not root, or
  // no mount namespace of its own to change).
  static Result<std::unique_ptr<BundleViews>> Open(const std::string& dir);
  // Unmounts dir. Every view must be gone.
  ~BundleViews();
  BundleViews(const BundleViews&) = delete;
  BundleViews& operator=(const BundleViews&) = delete;

  // A new, empty view. Internal when its directory cannot be made. Thread-safe.
  Result<std::unique_ptr<BundleView>> NewView();

 private:
  explicit BundleViews(std::string dir) : dir_(std::move(dir)) {}
  const std::string dir_;
  std::mutex mu_;
  uint64_t serial_ = 0;  // guarded by mu_
};

// Unmounts every mount at or below dir (deepest first, detached), as /proc/self/mountinfo lists
// them. Ok when there is none.
Status UnmountBelow(const std::string& dir);

}  // namespace toolgate::executor
