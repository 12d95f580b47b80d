#include "toolgate/executor/bundle_views.h"

#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "toolgate/base/log.h"
#include "toolgate/executor/bundle_unpack.h"

namespace toolgate::executor {
namespace {

Status Errno(const std::string& what) {
  return Status::Internal(what + ": " + std::strerror(errno));
}

// A mount point as /proc/self/mountinfo writes it: octal escapes for space, tab, newline, '\'.
std::string Unescape(const std::string& field) {
  std::string out;
  for (size_t i = 0; i < field.size(); ++i) {
    if (field[i] == '\\' && i + 3 < field.size()) {
      out.push_back(static_cast<char>(std::stoi(field.substr(i + 1, 3), nullptr, 8)));
      i += 3;
    } else {
      out.push_back(field[i]);
    }
  }
  return out;
}

}  // namespace

Status UnmountBelow(const std::string& dir) {
  std::ifstream in("/proc/self/mountinfo");
  std::vector<std::string> points;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string id, parent, device, root, point;
    fields >> id >> parent >> device >> root >> point;
    point = Unescape(point);
    if (point == dir || point.rfind(dir + "/", 0) == 0) points.push_back(point);
  }
  // Deepest first; a point listed twice (stacked mounts) is unmounted as often.
  std::sort(points.begin(), points.end(),
            [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
  for (const std::string& point : points) {
    if (::umount2(point.c_str(), MNT_DETACH) != 0 && errno != EINVAL && errno != ENOENT) {
      return Errno("cannot unmount " + point);
    }
  }
  return Status::Ok();
}

Result<std::unique_ptr<BundleViews>> BundleViews::Open(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(dir).parent_path(), ec);
  Status s = UnmountBelow(dir);
  if (!s.ok()) return s;
  s = RemoveTree(dir);
  if (!s.ok()) return s;
  if (::mkdir(dir.c_str(), 0711) != 0) return Errno("cannot make " + dir);
  // A mount of its own, private first so that nothing of ours propagates to the host's peers,
  // then shared: the peer group every sandbox's /bundle is a slave of.
  if (::mount(dir.c_str(), dir.c_str(), nullptr, MS_BIND, nullptr) != 0 ||
      ::mount(nullptr, dir.c_str(), nullptr, MS_PRIVATE, nullptr) != 0 ||
      ::mount(nullptr, dir.c_str(), nullptr, MS_SHARED, nullptr) != 0) {
    Status failed = Errno("cannot make " + dir + " a shared mount");
    UnmountBelow(dir);
    return failed;
  }
  return std::unique_ptr<BundleViews>(new BundleViews(dir));
}

BundleViews::~BundleViews() {
  Status s = UnmountBelow(dir_);
  if (!s.ok()) log::Warn("cannot unmount the bundle views").Str("error", s.ToString());
}

Result<std::unique_ptr<BundleView>> BundleViews::NewView() {
  std::string dir;
  {
    std::lock_guard<std::mutex> lock(mu_);
    dir = dir_ + "/" + std::to_string(++serial_);
  }
  // 0755: the sandbox's root (an unprivileged uid) binds it.
  if (::mkdir(dir.c_str(), 0755) != 0) return Errno("cannot make " + dir);
  return std::unique_ptr<BundleView>(new BundleView(std::move(dir)));
}

Status BundleView::Show(BundleRef bundle) {
  if (mounted_) return Status::InvalidArgument("a bundle is shown in " + dir_ + " already");
  int tree = static_cast<int>(
      ::open_tree(AT_FDCWD, bundle->dir.c_str(), OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC));
  if (tree < 0) return Errno("open_tree " + bundle->dir);
  struct mount_attr attr {};
  attr.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC;
  Status s = Status::Ok();
  if (::mount_setattr(tree, "", AT_EMPTY_PATH, &attr, sizeof attr) != 0) {
    s = Errno("mount_setattr " + bundle->dir);
  } else if (::move_mount(tree, "", AT_FDCWD, dir_.c_str(), MOVE_MOUNT_F_EMPTY_PATH) != 0) {
    s = Errno("move_mount " + bundle->dir + " to " + dir_);
  }
  ::close(tree);
  if (!s.ok()) return s;
  mounted_ = true;
  bundle_ = std::move(bundle);
  return Status::Ok();
}

BundleView::~BundleView() {
  if (mounted_ && ::umount2(dir_.c_str(), MNT_DETACH) != 0) {
    log::Warn("cannot unmount a bundle view").Str("dir", dir_).Str("error", std::strerror(errno));
  }
  if (::rmdir(dir_.c_str()) != 0) {
    log::Warn("cannot remove a bundle view").Str("dir", dir_).Str("error", std::strerror(errno));
  }
}

}  // namespace toolgate::executor
