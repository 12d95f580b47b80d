// Control groups: one per sandbox, so a sandbox's limits and accounts cover all of its
// processes together, not each process alone.
//
// A CgroupTree is this executor's part of the host's cgroup hierarchy: a directory
// "toolgate-sandboxes" under the executor's own cgroup, in each controller the sandboxes need.
// Under it, one group per tenant ("org-<hash>", and "spare" for workers no organization has taken
// yet) and, in a group, one leaf Cgroup per sandbox:
//
//   <executor's cgroup>/toolgate-sandboxes/org-3f2a.../s17
//
// The tenant level is what makes CPU fair: each group gets the same CPU weight whatever number
// of sandboxes it runs, and at most group_cpus of CPU time (a quota), so one organization's
// spinning handlers leave the rest of the machine to the others. A leaf holds one sandbox: its
// memory limit (page cache and tmpfs pages included, no swap), its process limit and its CPU
// quota, and it accounts the sandbox's CPU time, peak memory and OOM kills.
//
// Both hierarchies are supported:
// - cgroup v2 (the unified hierarchy) where it has the memory, pids and cpu controllers: current
//   distributions and Kubernetes nodes. The executor moves itself into a leaf of its own cgroup
//   first ("no internal processes"), then enables the controllers below it.
// - cgroup v1, with the memory, pids, cpu, cpuacct and freezer controllers mounted separately or
//   together (cpu,cpuacct).
// Open picks v2 when it has the controllers, else v1; a host with neither cannot isolate
// sandboxes, and the executor refuses to start there unless told --insecure-no-cgroups.
//
// Thread safety: CgroupTree is thread-safe. A Cgroup is used by one thread at a time (its
// worker's); destroying it kills whatever still runs in it and removes its directories.
// Failures are Status values; nothing here throws.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "toolgate/base/status.h"

namespace toolgate::executor {

enum class CgroupVersion { kV1, kV2 };

struct CgroupLimits {
  uint64_t memory_bytes = 0;  // 0: unlimited
  uint64_t pids = 0;          // processes and threads together; 0: unlimited
  double cpus = 0;            // CPU time per wall time (1.5: one and a half cores); 0: unlimited
};

// Where each controller's hierarchy is mounted and where this process sits in it, as read from
// /proc/self/mountinfo and /proc/self/cgroup. Pure: see ParseCgroupMounts.
struct CgroupMounts {
  // v1: controller ("memory", "pids", "cpu", "cpuacct", "freezer") -> the directory of this
  // process's cgroup in that controller's hierarchy (mount point + path).
  std::map<std::string, std::string, std::less<>> v1;
  // v2: the directory of this process's cgroup in the unified hierarchy ("" when unmounted),
  // and the hierarchy's mount point (its root cgroup).
  std::string v2;
  std::string v2_mount;
};

// Reads mountinfo and self_cgroup (the texts of /proc/self/mountinfo and /proc/self/cgroup).
// Mount points are taken as the kernel writes them (octal escapes decoded).
CgroupMounts ParseCgroupMounts(std::string_view mountinfo, std::string_view self_cgroup);

// Whether a cgroup.controllers (or cgroup.subtree_control) text names memory, pids and cpu.
bool HasV2Controllers(std::string_view controllers);

// Makes memory, pids and cpu available in own (a directory below the cgroup2 mount point
// `mount`): writes "+memory +pids +cpu" to the cgroup.subtree_control of every cgroup from the
// root down to own's parent that does not already hand all three down. The executor calls it
// when its own cgroup lacks them. Fails (leaving what it enabled) where the kernel refuses, e.g.
// at a cgroup that holds processes itself.
Status DelegateV2Controllers(const std::string& mount, const std::string& own);

class CgroupTree;

// One sandbox's cgroup (a leaf). Owned by the worker whose sandbox it holds.
class Cgroup {
 public:
  // Kills every process still in it, then removes its directories (retried by the tree later
  // when the kernel has not finished with them).
  ~Cgroup();
  Cgroup(const Cgroup&) = delete;
  Cgroup& operator=(const Cgroup&) = delete;

  // Moves process pid (with all its threads) into this cgroup. Before the process runs anything
  // untrusted: its descendants are born here.
  Status Adopt(pid_t pid);
  // Moves this sandbox into tenant group (a spare taken by an organization): a new leaf there
  // with the same limits, every process moved, the old leaf removed. Its accounts restart.
  Status MoveTo(std::string_view group);

  // CPU time of every process of the sandbox, living or gone, in microseconds; -1 when unknown.
  int64_t CpuUsageUs();
  // Starts a new peak for PeakMemoryBytes. On v2 kernels older than 6.12 the peak cannot be
  // reset and stays the sandbox's lifetime peak.
  void ResetPeakMemory();
  // The largest memory use (resident, page cache and tmpfs) since ResetPeakMemory; 0 unknown.
  uint64_t PeakMemoryBytes();
  // How many times the kernel's OOM killer has killed a process of this cgroup so far.
  uint64_t OomKills();
  // The processes (not threads) in it now.
  std::vector<pid_t> Processes();
  // The tasks (threads, of every process) in it now, from the pids controller's counter: one
  // read of a kept descriptor, where Processes opens and lists. -1 when unknown.
  int64_t Tasks();
  // Kills every process in it except keep (0: all), with the group frozen so that none can fork
  // meanwhile (freezer on v1, cgroup.freeze on v2); returns how many it killed. The killed die
  // when the group thaws, before this returns on v2, moments after on v1.
  size_t KillAllExcept(pid_t keep);

  const std::string& group() const { return group_; }

 private:
  friend class CgroupTree;
  Cgroup(CgroupTree& tree, std::string group, std::string leaf, CgroupLimits limits);
  // The leaf's directory in each hierarchy it lives in.
  std::vector<std::string> Dirs() const;
  std::string Dir(std::string_view controller) const;
  bool Freeze(bool frozen);

  CgroupTree& tree_;
  std::string group_;
  std::string leaf_;
  CgroupLimits limits_;
  int cpu_fd_ = -1;    // cpuacct.usage (v1) or cpu.stat (v2)
  int peak_fd_ = -1;   // memory.max_usage_in_bytes (v1) or memory.peak (v2)
  int oom_fd_ = -1;    // memory.oom_control (v1) or memory.events (v2)
  int tasks_fd_ = -1;  // pids.current
};

class CgroupTree {
 public:
  struct Options {
    std::string name = "toolgate-sandboxes";  // the directory under the executor's cgroup
    double group_cpus = 0;  // CPU quota of each tenant group; 0: no quota (weights only)
    // Trees beside this one named "<stale_prefix><pid>" whose pid no longer runs are removed
    // on Open (those of executors killed before they could clean up); "" keeps them.
    std::string stale_prefix;
  };
  // Finds the hierarchy and creates the tree's directory. Unavailable, naming what is missing,
  // when neither v2 with memory, pids and cpu nor v1 with memory, pids, cpuacct and freezer can
  // be used (not root, read-only /sys/fs/cgroup, controllers absent).
  static Result<std::unique_ptr<CgroupTree>> Open(const Options& options);
  // Same, on explicit mounts (tests).
  static Result<std::unique_ptr<CgroupTree>> Open(const Options& options,
                                                  const CgroupMounts& mounts);
  // Kills whatever is left in the tree and removes it. Every Cgroup must be gone.
  ~CgroupTree();
  CgroupTree(const CgroupTree&) = delete;
  CgroupTree& operator=(const CgroupTree&) = delete;

  // A new leaf under group ("spare", or an organization's GroupFor), with limits. Internal when
  // the kernel refuses a directory or a limit. Thread-safe.
  Result<std::unique_ptr<Cgroup>> Create(std::string_view group, const CgroupLimits& limits);

  // The group of an organization: "org-" and a hash of its id (ids are not path-safe).
  static std::string GroupFor(std::string_view org_id);

  CgroupVersion version() const { return version_; }
  // The tree's directory: on v2 its only one; on v1 the freezer hierarchy's (every hierarchy
  // holds the same groups).
  const std::string& root() const {
    return roots_.count("freezer") ? roots_.at("freezer") : roots_.begin()->second;
  }
  // "v1 (memory, pids, cpu, cpuacct, freezer)" or "v2", for the start-up log line.
  std::string Describe() const;

 private:
  friend class Cgroup;
  CgroupTree(Options options, CgroupVersion version, std::map<std::string, std::string> roots);
  // Creates group's directories (and its CPU settings) on its first leaf; counts its leaves.
  Status Enter(const std::string& group);
  // Removes group's directories once its last leaf has gone.
  void Leave(const std::string& group);
  // Removes dir, or keeps it to retry at the next Create (the kernel may still hold it).
  void Remove(const std::string& dir);
  void RetryRemovals();  // requires mu_

  const Options options_;
  const CgroupVersion version_;
  // controller (v1) or "" (v2) -> the tree's root directory in that hierarchy; several
  // controllers may share one (cpu,cpuacct).
  const std::map<std::string, std::string> roots_;
  std::mutex mu_;
  std::map<std::string, size_t> groups_;  // guarded by mu_: leaves per group
  std::vector<std::string> leftovers_;    // guarded by mu_: directories rmdir refused
  uint64_t next_leaf_ = 0;                // guarded by mu_
};

}  // namespace toolgate::executor
