#include "toolgate/executor/cgroup.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "toolgate/base/crypto.h"
#include "toolgate/base/log.h"

namespace toolgate::executor {
namespace {

// The v1 controllers a sandbox needs, and the one it uses when present (CPU quota and weight).
constexpr const char* kV1Required[] = {"memory", "pids", "cpuacct", "freezer"};
constexpr const char* kV1Optional[] = {"cpu"};
constexpr const char* kV2Controllers = "+memory +pids +cpu";
constexpr int64_t kCpuPeriodUs = 100000;
// How long a freeze may take before the kill goes ahead anyway (SIGKILL needs no freeze; the
// freeze only stops forks between reading the list and killing it).
constexpr int kFreezeTries = 200;

Status WriteFile(const std::string& path, std::string_view text) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return Status::Internal("cannot open " + path + ": " + std::strerror(errno));
  ssize_t n = ::write(fd, text.data(), text.size());
  int err = errno;
  ::close(fd);
  if (n != static_cast<ssize_t>(text.size())) {
    return Status::Internal("cannot write '" + std::string(text) + "' to " + path + ": " +
                            std::strerror(err));
  }
  return Status::Ok();
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

bool Exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

Status MakeDir(const std::string& path) {
  if (::mkdir(path.c_str(), 0755) == 0 || errno == EEXIST) return Status::Ok();
  return Status::Internal("cannot create " + path + ": " + std::strerror(errno));
}

// The whole text of an open cgroup file, from its start.
std::string ReadFd(int fd) {
  if (fd < 0) return "";
  char buf[4096];
  ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

// The number after "<key> " in a flat-keyed cgroup file ("oom_kill 3\n"); -1 when absent.
int64_t KeyedValue(std::string_view text, std::string_view key) {
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(at, end - at);
    if (line.size() > key.size() && line.substr(0, key.size()) == key && line[key.size()] == ' ') {
      return std::strtoll(std::string(line.substr(key.size() + 1)).c_str(), nullptr, 10);
    }
    at = end + 1;
  }
  return -1;
}

// Mount points escape space, tab, newline and backslash as \ooo.
std::string Unescape(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size()) {
      bool octal = true;
      int v = 0;
      for (size_t k = 1; k <= 3 && octal; ++k) {
        octal = i + k < s.size() && s[i + k] >= '0' && s[i + k] <= '7';
        if (octal) v = v * 8 + (s[i + k] - '0');
      }
      if (octal) {
        out.push_back(static_cast<char>(v));
        i += 3;
        continue;
      }
    }
    out.push_back(s[i]);
  }
  return out;
}

std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  size_t at = 0;
  while (at <= s.size()) {
    size_t end = s.find(sep, at);
    if (end == std::string_view::npos) end = s.size();
    parts.push_back(s.substr(at, end - at));
    at = end + 1;
  }
  return parts;
}

// path below mount_root, as a path below the mount point: "" when path is the root itself.
std::string Below(const std::string& path, const std::string& mount_root) {
  if (mount_root == "/") return path == "/" ? "" : path;
  if (path.compare(0, mount_root.size(), mount_root) == 0) {
    std::string rest = path.substr(mount_root.size());
    return rest == "/" ? "" : rest;
  }
  return path == "/" ? "" : path;  // outside the mounted subtree: take it as given
}

// Removes dir and the directories below it, deepest first (a cgroup directory goes only once
// it has no children and no processes). Best effort: what the kernel still holds stays.
void RemoveTree(const std::string& dir, int depth = 0) {
  if (depth > 4) return;
  if (DIR* d = ::opendir(dir.c_str())) {
    std::vector<std::string> children;
    while (dirent* e = ::readdir(d)) {
      if (e->d_type == DT_DIR && e->d_name[0] != '.') children.push_back(dir + "/" + e->d_name);
    }
    ::closedir(d);
    for (const std::string& child : children) RemoveTree(child, depth + 1);
  }
  ::rmdir(dir.c_str());
}

// Removes the trees of executors that are gone: "<prefix><pid>" beside ours whose pid no
// longer runs (an executor killed with SIGKILL cannot clean up after itself).
void RemoveStaleTrees(const std::string& parent, const std::string& prefix) {
  DIR* d = ::opendir(parent.c_str());
  if (d == nullptr) return;
  std::vector<std::string> stale;
  while (dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) continue;
    std::string pid = name.substr(prefix.size());
    if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
    if (::kill(static_cast<pid_t>(std::atol(pid.c_str())), 0) != 0 && errno == ESRCH) {
      stale.push_back(parent + "/" + name);
    }
  }
  ::closedir(d);
  for (const std::string& dir : stale) RemoveTree(dir);
}

void Pause() {
  timespec ts{0, 500 * 1000};  // the kernel finishes a freeze in microseconds
  ::nanosleep(&ts, nullptr);
}

}  // namespace

CgroupMounts ParseCgroupMounts(std::string_view mountinfo, std::string_view self_cgroup) {
  // Where this process is in each hierarchy: "4:memory:/a/b", "2:cpu,cpuacct:/", "0::/x".
  std::map<std::string, std::string> v1_paths;  // controller -> path
  std::string v2_path;
  bool have_v2 = false;
  for (std::string_view line : Split(self_cgroup, '\n')) {
    size_t first = line.find(':');
    size_t second = first == std::string_view::npos ? first : line.find(':', first + 1);
    if (second == std::string_view::npos) continue;
    std::string_view controllers = line.substr(first + 1, second - first - 1);
    std::string path(line.substr(second + 1));
    if (controllers.empty()) {
      v2_path = path;
      have_v2 = true;
      continue;
    }
    for (std::string_view c : Split(controllers, ',')) v1_paths[std::string(c)] = path;
  }

  CgroupMounts out;
  for (std::string_view line : Split(mountinfo, '\n')) {
    size_t dash = line.find(" - ");
    if (dash == std::string_view::npos) continue;
    std::vector<std::string_view> left = Split(line.substr(0, dash), ' ');
    std::vector<std::string_view> right = Split(line.substr(dash + 3), ' ');
    if (left.size() < 5 || right.size() < 3) continue;
    const std::string root = Unescape(left[3]);
    const std::string point = Unescape(left[4]);
    std::string_view fstype = right[0];
    if (fstype == "cgroup2") {
      if (have_v2 && out.v2.empty()) {
        out.v2 = point + Below(v2_path, root);
        out.v2_mount = point;
      }
    } else if (fstype == "cgroup") {
      for (std::string_view option : Split(right[2], ',')) {
        auto it = v1_paths.find(std::string(option));
        if (it == v1_paths.end()) continue;
        out.v1.emplace(it->first, point + Below(it->second, root));
      }
    }
  }
  return out;
}

bool HasV2Controllers(std::string_view controllers) {
  bool memory = false, pids = false, cpu = false;
  for (std::string_view c : Split(controllers, ' ')) {
    while (!c.empty() && (c.back() == '\n' || c.back() == ' ')) c.remove_suffix(1);
    memory |= c == "memory";
    pids |= c == "pids";
    cpu |= c == "cpu";
  }
  return memory && pids && cpu;
}

Status DelegateV2Controllers(const std::string& mount, const std::string& own) {
  if (own.size() <= mount.size() || own.compare(0, mount.size(), mount) != 0 ||
      own[mount.size()] != '/') {
    return Status::InvalidArgument(own + " is not below " + mount);
  }
  // Every cgroup from the root down to own's parent hands the controllers to its children.
  std::string dir = mount;
  for (size_t at = mount.size() + 1; at <= own.size();) {
    if (!HasV2Controllers(ReadFile(dir + "/cgroup.subtree_control"))) {
      Status s = WriteFile(dir + "/cgroup.subtree_control", kV2Controllers);
      if (!s.ok()) return s;
    }
    size_t slash = std::min(own.find('/', at), own.size());
    dir = own.substr(0, slash);
    at = slash + 1;
  }
  return Status::Ok();
}

// ---------------------------------------------------------------------------------------------
// CgroupTree

Result<std::unique_ptr<CgroupTree>> CgroupTree::Open(const Options& options) {
  return Open(options,
              ParseCgroupMounts(ReadFile("/proc/self/mountinfo"), ReadFile("/proc/self/cgroup")));
}

Result<std::unique_ptr<CgroupTree>> CgroupTree::Open(const Options& options,
                                                     const CgroupMounts& mounts) {
  std::string why_not_v2 = "no cgroup2 mount";
  if (!mounts.v2.empty()) {
    if (!HasV2Controllers(ReadFile(mounts.v2 + "/cgroup.controllers"))) {
      // A host whose parent cgroups hand down fewer controllers than the hierarchy has (a VM's
      // or a service manager's layout: "/process_api" delegating only memory): enable ours
      // on the way down, which the kernel allows where no process sits.
      (void)DelegateV2Controllers(mounts.v2_mount, mounts.v2);
    }
    if (HasV2Controllers(ReadFile(mounts.v2 + "/cgroup.controllers"))) {
      // "No internal processes": a cgroup that hands controllers to its children may hold no
      // process itself, so whatever runs in ours moves to a leaf beside the sandboxes first.
      // A process that opened a tree before already sits in that leaf: the tree's home is the
      // leaf's parent, where earlier trees (and stale ones) live.
      std::string own = mounts.v2;
      const size_t leaf = own.rfind('/');
      if (own != mounts.v2_mount && own.compare(leaf + 1, std::string::npos, "executor") == 0 &&
          leaf >= mounts.v2_mount.size() &&
          HasV2Controllers(ReadFile(own.substr(0, leaf) + "/cgroup.subtree_control"))) {
        own = own.substr(0, leaf);
      }
      // The root cgroup is exempt from the rule (and its processes are the whole host's).
      std::string procs = own == mounts.v2_mount ? "" : ReadFile(own + "/cgroup.procs");
      if (!procs.empty()) {
        Status made = MakeDir(own + "/executor");
        if (!made.ok()) return Status::Unavailable("cgroup v2: " + made.message());
        for (std::string_view pid : Split(procs, '\n')) {
          if (pid.empty()) continue;
          Status moved = WriteFile(own + "/executor/cgroup.procs", pid);
          if (!moved.ok()) return Status::Unavailable("cgroup v2: " + moved.message());
        }
      }
      Status s = WriteFile(own + "/cgroup.subtree_control", kV2Controllers);
      const std::string root = own + "/" + options.name;
      if (!options.stale_prefix.empty()) RemoveStaleTrees(own, options.stale_prefix);
      if (s.ok()) s = MakeDir(root);
      if (s.ok()) s = WriteFile(root + "/cgroup.subtree_control", kV2Controllers);
      if (!s.ok()) return Status::Unavailable("cgroup v2: " + s.message());
      return std::unique_ptr<CgroupTree>(new CgroupTree(options, CgroupVersion::kV2, {{"", root}}));
    }
    why_not_v2 = "the cgroup2 hierarchy lacks the memory, pids or cpu controller";
  }

  std::map<std::string, std::string> roots;
  std::string missing;
  for (const char* c : kV1Required) {
    auto it = mounts.v1.find(c);
    if (it == mounts.v1.end()) {
      missing += missing.empty() ? c : std::string(", ") + c;
      continue;
    }
    roots[c] = it->second + "/" + options.name;
  }
  if (!missing.empty()) {
    return Status::Unavailable(why_not_v2 + ", and no cgroup v1 controller " + missing);
  }
  for (const char* c : kV1Optional) {
    auto it = mounts.v1.find(c);
    if (it != mounts.v1.end()) roots[c] = it->second + "/" + options.name;
  }
  for (const auto& [controller, dir] : roots) {
    if (!options.stale_prefix.empty()) {
      RemoveStaleTrees(dir.substr(0, dir.rfind('/')), options.stale_prefix);
    }
    Status s = MakeDir(dir);
    if (!s.ok()) return Status::Unavailable("cgroup v1 " + controller + ": " + s.message());
  }
  // Hierarchical memory accounting, so a tenant group's limit covers its leaves (the default on
  // current kernels; older ones let it be switched off).
  (void)WriteFile(roots["memory"] + "/memory.use_hierarchy", "1");
  return std::unique_ptr<CgroupTree>(new CgroupTree(options, CgroupVersion::kV1, roots));
}

CgroupTree::CgroupTree(Options options, CgroupVersion version,
                       std::map<std::string, std::string> roots)
    : options_(std::move(options)), version_(version), roots_(std::move(roots)) {}

CgroupTree::~CgroupTree() {
  std::lock_guard<std::mutex> lock(mu_);
  RetryRemovals();
  for (const auto& [group, leaves] : groups_) {
    for (const auto& [c, root] : roots_) ::rmdir((root + "/" + group).c_str());
  }
  for (const auto& [c, root] : roots_) ::rmdir(root.c_str());
}

std::string CgroupTree::GroupFor(std::string_view org_id) {
  // Short and path-safe; ids only need to stay apart, not be read back.
  return "org-" + HexEncode(Sha256(org_id)).substr(0, 24);
}

std::string CgroupTree::Describe() const {
  if (version_ == CgroupVersion::kV2) return "v2";
  std::string out = "v1 (";
  bool first = true;
  for (const auto& [c, root] : roots_) {
    out += (first ? "" : ", ") + c;
    first = false;
  }
  return out + ")";
}

Status CgroupTree::Enter(const std::string& group) {
  std::lock_guard<std::mutex> lock(mu_);
  RetryRemovals();
  size_t& leaves = groups_[group];
  if (leaves++ > 0) return Status::Ok();
  Status s = Status::Ok();
  for (const auto& [c, root] : roots_) {
    if (s.ok()) s = MakeDir(root + "/" + group);
  }
  const int64_t quota = options_.group_cpus > 0
                            ? static_cast<int64_t>(std::ceil(options_.group_cpus * kCpuPeriodUs))
                            : -1;
  if (s.ok() && version_ == CgroupVersion::kV2) {
    const std::string dir = roots_.at("") + "/" + group;
    s = WriteFile(dir + "/cgroup.subtree_control", kV2Controllers);
    if (s.ok() && quota > 0) {
      s = WriteFile(dir + "/cpu.max", std::to_string(quota) + " " + std::to_string(kCpuPeriodUs));
    }
  } else if (s.ok() && quota > 0 && roots_.count("cpu")) {
    const std::string dir = roots_.at("cpu") + "/" + group;
    s = WriteFile(dir + "/cpu.cfs_period_us", std::to_string(kCpuPeriodUs));
    if (s.ok()) s = WriteFile(dir + "/cpu.cfs_quota_us", std::to_string(quota));
  }
  if (!s.ok()) {
    --leaves;
    if (leaves == 0) groups_.erase(group);
  }
  return s;
}

void CgroupTree::Leave(const std::string& group) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = groups_.find(group);
  if (it == groups_.end() || --it->second > 0) return;
  groups_.erase(it);
  for (const auto& [c, root] : roots_) {
    std::string dir = root + "/" + group;
    if (::rmdir(dir.c_str()) != 0 && errno == EBUSY) leftovers_.push_back(dir);
  }
}

void CgroupTree::Remove(const std::string& dir) {
  if (::rmdir(dir.c_str()) == 0 || errno == ENOENT) return;
  std::lock_guard<std::mutex> lock(mu_);
  leftovers_.push_back(dir);
}

void CgroupTree::RetryRemovals() {
  // Leaves before their groups: a group's directory goes once its leaves have.
  std::vector<std::string> still;
  for (const std::string& dir : leftovers_) {
    if (::rmdir(dir.c_str()) != 0 && errno == EBUSY) still.push_back(dir);
  }
  leftovers_ = std::move(still);
}

Result<std::unique_ptr<Cgroup>> CgroupTree::Create(std::string_view group,
                                                   const CgroupLimits& limits) {
  const std::string g(group);
  if (g.empty() || g.find('/') != std::string::npos || g[0] == '.') {
    return Status::InvalidArgument("not a cgroup group name: " + g);
  }
  Status entered = Enter(g);
  if (!entered.ok()) return entered;
  std::string leaf;
  {
    std::lock_guard<std::mutex> lock(mu_);
    leaf = "s" + std::to_string(next_leaf_++);
  }
  std::unique_ptr<Cgroup> cg(new Cgroup(*this, g, leaf, limits));  // its destructor cleans up
  for (const std::string& dir : cg->Dirs()) {
    Status made = MakeDir(dir);
    if (!made.ok()) return made;
  }
  Status s = Status::Ok();
  if (version_ == CgroupVersion::kV2) {
    const std::string dir = cg->Dir("");
    if (limits.memory_bytes > 0) {
      s = WriteFile(dir + "/memory.max", std::to_string(limits.memory_bytes));
      // No swap: a sandbox at its limit is stopped, not slowed down on the host's disk.
      if (s.ok() && Exists(dir + "/memory.swap.max")) s = WriteFile(dir + "/memory.swap.max", "0");
    }
    if (s.ok() && limits.pids > 0) s = WriteFile(dir + "/pids.max", std::to_string(limits.pids));
    if (s.ok() && limits.cpus > 0) {
      int64_t quota = static_cast<int64_t>(std::ceil(limits.cpus * kCpuPeriodUs));
      s = WriteFile(dir + "/cpu.max", std::to_string(quota) + " " + std::to_string(kCpuPeriodUs));
    }
    cg->cpu_fd_ = ::open((dir + "/cpu.stat").c_str(), O_RDONLY | O_CLOEXEC);
    cg->peak_fd_ = ::open((dir + "/memory.peak").c_str(), O_RDWR | O_CLOEXEC);
    cg->oom_fd_ = ::open((dir + "/memory.events").c_str(), O_RDONLY | O_CLOEXEC);
    cg->tasks_fd_ = ::open((dir + "/pids.current").c_str(), O_RDONLY | O_CLOEXEC);
  } else {
    const std::string memory = cg->Dir("memory");
    if (limits.memory_bytes > 0) {
      s = WriteFile(memory + "/memory.limit_in_bytes", std::to_string(limits.memory_bytes));
      if (s.ok() && Exists(memory + "/memory.memsw.limit_in_bytes")) {
        s = WriteFile(memory + "/memory.memsw.limit_in_bytes", std::to_string(limits.memory_bytes));
      }
    }
    if (s.ok() && limits.pids > 0) {
      s = WriteFile(cg->Dir("pids") + "/pids.max", std::to_string(limits.pids));
    }
    if (s.ok() && limits.cpus > 0 && roots_.count("cpu")) {
      int64_t quota = static_cast<int64_t>(std::ceil(limits.cpus * kCpuPeriodUs));
      s = WriteFile(cg->Dir("cpu") + "/cpu.cfs_period_us", std::to_string(kCpuPeriodUs));
      if (s.ok()) s = WriteFile(cg->Dir("cpu") + "/cpu.cfs_quota_us", std::to_string(quota));
    }
    cg->cpu_fd_ = ::open((cg->Dir("cpuacct") + "/cpuacct.usage").c_str(), O_RDONLY | O_CLOEXEC);
    cg->peak_fd_ = ::open((memory + "/memory.max_usage_in_bytes").c_str(), O_RDWR | O_CLOEXEC);
    cg->oom_fd_ = ::open((memory + "/memory.oom_control").c_str(), O_RDONLY | O_CLOEXEC);
    if (!cg->Dir("pids").empty()) {
      cg->tasks_fd_ = ::open((cg->Dir("pids") + "/pids.current").c_str(), O_RDONLY | O_CLOEXEC);
    }
  }
  if (!s.ok()) return s;
  if (cg->cpu_fd_ < 0 || cg->oom_fd_ < 0) {
    return Status::Internal("cannot open the accounts of cgroup " + g + "/" + leaf);
  }
  return cg;
}

// ---------------------------------------------------------------------------------------------
// Cgroup

Cgroup::Cgroup(CgroupTree& tree, std::string group, std::string leaf, CgroupLimits limits)
    : tree_(tree), group_(std::move(group)), leaf_(std::move(leaf)), limits_(limits) {}

Cgroup::~Cgroup() {
  for (int fd : {cpu_fd_, peak_fd_, oom_fd_, tasks_fd_}) {
    if (fd >= 0) ::close(fd);
  }
  KillAllExcept(0);
  for (const std::string& dir : Dirs()) tree_.Remove(dir);
  tree_.Leave(group_);
}

std::string Cgroup::Dir(std::string_view controller) const {
  auto it = tree_.roots_.find(std::string(controller));
  if (it == tree_.roots_.end()) return "";
  return it->second + "/" + group_ + "/" + leaf_;
}

std::vector<std::string> Cgroup::Dirs() const {
  std::vector<std::string> dirs;
  for (const auto& [c, root] : tree_.roots_) {
    std::string dir = root + "/" + group_ + "/" + leaf_;
    if (std::find(dirs.begin(), dirs.end(), dir) == dirs.end()) dirs.push_back(dir);
  }
  return dirs;
}

Status Cgroup::Adopt(pid_t pid) {
  const std::string text = std::to_string(pid);
  for (const std::string& dir : Dirs()) {
    Status s = WriteFile(dir + "/cgroup.procs", text);
    if (!s.ok()) return s;
  }
  return Status::Ok();
}

Status Cgroup::MoveTo(std::string_view group) {
  if (group == group_) return Status::Ok();
  auto next = tree_.Create(group, limits_);
  if (!next.ok()) return next.status();
  for (pid_t pid : Processes()) {
    Status s = (*next)->Adopt(pid);
    if (!s.ok()) return s;  // next's destructor kills what it adopted: the worker fails whole
  }
  // Swap identities: this object now stands for the new leaf, *next for the old one, which it
  // removes (empty now) as it goes.
  std::swap(group_, (*next)->group_);
  std::swap(leaf_, (*next)->leaf_);
  std::swap(cpu_fd_, (*next)->cpu_fd_);
  std::swap(peak_fd_, (*next)->peak_fd_);
  std::swap(oom_fd_, (*next)->oom_fd_);
  std::swap(tasks_fd_, (*next)->tasks_fd_);
  return Status::Ok();
}

int64_t Cgroup::CpuUsageUs() {
  std::string text = ReadFd(cpu_fd_);
  if (text.empty()) return -1;
  if (tree_.version_ == CgroupVersion::kV2) return KeyedValue(text, "usage_usec");
  return std::strtoll(text.c_str(), nullptr, 10) / 1000;  // cpuacct.usage: nanoseconds
}

void Cgroup::ResetPeakMemory() {
  if (peak_fd_ < 0) return;
  // v1: writing 0 resets max_usage_in_bytes. v2 (6.12+): any write resets the peak this file
  // descriptor reports; older kernels refuse it, and the lifetime peak stands.
  const char* text = tree_.version_ == CgroupVersion::kV2 ? "reset\n" : "0";
  (void)!::pwrite(peak_fd_, text, std::strlen(text), 0);
}

uint64_t Cgroup::PeakMemoryBytes() {
  std::string text = ReadFd(peak_fd_);
  return text.empty() ? 0 : std::strtoull(text.c_str(), nullptr, 10);
}

uint64_t Cgroup::OomKills() {
  int64_t n = KeyedValue(ReadFd(oom_fd_), "oom_kill");
  return n > 0 ? static_cast<uint64_t>(n) : 0;
}

std::vector<pid_t> Cgroup::Processes() {
  const std::vector<std::string> dirs = Dirs();
  std::vector<pid_t> pids;
  if (dirs.empty()) return pids;
  // The freezer's (v1) or the only (v2) list: every hierarchy holds the same processes. Opened
  // anew each time: a v1 descriptor kept open goes on serving the pid list it loaded first
  // (cgroup_pidlist_start), which would hide processes started since.
  std::string dir = tree_.version_ == CgroupVersion::kV2 ? Dir("") : Dir("freezer");
  std::string text = ReadFile(dir + "/cgroup.procs");
  for (std::string_view line : Split(text, '\n')) {
    if (!line.empty()) pids.push_back(static_cast<pid_t>(std::atol(std::string(line).c_str())));
  }
  return pids;
}

int64_t Cgroup::Tasks() {
  if (tasks_fd_ < 0) return -1;
  std::string text = ReadFd(tasks_fd_);
  return text.empty() ? -1 : std::strtoll(text.c_str(), nullptr, 10);
}

bool Cgroup::Freeze(bool frozen) {
  if (tree_.version_ == CgroupVersion::kV2) {
    const std::string dir = Dir("");
    if (!WriteFile(dir + "/cgroup.freeze", frozen ? "1" : "0").ok()) return false;
    if (!frozen) return true;
    for (int i = 0; i < kFreezeTries; ++i) {
      if (KeyedValue(ReadFile(dir + "/cgroup.events"), "frozen") == 1) return true;
      Pause();
    }
    return false;
  }
  const std::string state = Dir("freezer") + "/freezer.state";
  if (!WriteFile(state, frozen ? "FROZEN" : "THAWED").ok()) return false;
  if (!frozen) return true;
  for (int i = 0; i < kFreezeTries; ++i) {
    if (ReadFile(state).rfind("FROZEN", 0) == 0) return true;
    Pause();
  }
  return false;
}

size_t Cgroup::KillAllExcept(pid_t keep) {
  std::vector<pid_t> pids = Processes();
  bool others = false;
  for (pid_t pid : pids) others = others || pid != keep;
  if (!others) return 0;
  if (keep == 0 && tree_.version_ == CgroupVersion::kV2 && Exists(Dir("") + "/cgroup.kill")) {
    (void)WriteFile(Dir("") + "/cgroup.kill", "1");
    return pids.size();
  }
  // Frozen, nothing in the group can fork between the list and the kill. A process forked
  // while the freeze was settling shows up in the next list: a few passes catch it.
  std::vector<pid_t> killed;
  for (int pass = 0; pass < 4; ++pass) {
    Freeze(true);
    bool more = false;
    for (pid_t pid : Processes()) {
      if (pid == keep || std::find(killed.begin(), killed.end(), pid) != killed.end()) continue;
      if (::kill(pid, SIGKILL) == 0) killed.push_back(pid);
      more = true;
    }
    Freeze(false);
    if (!more) break;
  }
  return killed.size();
}

}  // namespace toolgate::executor
