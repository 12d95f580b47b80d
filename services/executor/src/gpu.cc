#include "toolgate/executor/gpu.h"

#include <dirent.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <set>

#include "toolgate/base/strings.h"
#include "toolgate/base/time.h"

namespace toolgate::executor {
namespace {

// The non-negative decimal number that is all of text, or -1.
int Index(std::string_view text) {
  int value = -1;
  if (text.empty() || text.size() > 6) return -1;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < 0) return -1;
  return value;
}

}  // namespace

std::vector<int> ParseNvidiaSmiList(std::string_view output) {
  std::set<int> found;
  while (!output.empty()) {
    size_t eol = output.find('\n');
    std::string_view line = Trim(output.substr(0, eol), kBlanks, " \t\r");
    output.remove_prefix(eol == std::string_view::npos ? output.size() : eol + 1);
    if (line.rfind("GPU ", 0) != 0) continue;
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    int index = Index(line.substr(4, colon - 4));
    if (index >= 0) found.insert(index);
  }
  return {found.begin(), found.end()};
}

std::vector<int> ParseDeviceNodeNames(const std::vector<std::string>& names) {
  std::set<int> found;
  for (const std::string& name : names) {
    if (name.rfind("nvidia", 0) != 0) continue;
    int index = Index(std::string_view(name).substr(6));
    if (index >= 0) found.insert(index);
  }
  return {found.begin(), found.end()};
}

Result<std::vector<int>> ParseGpuDeviceList(std::string_view text) {
  std::vector<int> devices;
  while (!text.empty()) {
    size_t comma = text.find(',');
    int index = Index(Trim(text.substr(0, comma), kBlanks, " \t\r"));
    if (index < 0) {
      return Status::InvalidArgument("GPU devices are comma-separated indices, such as 0,1");
    }
    if (std::find(devices.begin(), devices.end(), index) != devices.end()) {
      return Status::InvalidArgument("GPU device " + std::to_string(index) + " is listed twice");
    }
    devices.push_back(index);
    text.remove_prefix(comma == std::string_view::npos ? text.size() : comma + 1);
  }
  if (devices.empty()) return Status::InvalidArgument("no GPU device listed");
  return devices;
}

std::vector<int> DiscoverGpus() {
  if (FILE* p = ::popen("nvidia-smi -L 2>/dev/null", "r")) {
    std::string output;
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) output.append(buf, n);
    int rc = ::pclose(p);
    std::vector<int> devices = ParseNvidiaSmiList(output);
    if (rc == 0 && !devices.empty()) return devices;
  }
  std::vector<std::string> names;
  if (DIR* dir = ::opendir("/dev")) {
    while (dirent* e = ::readdir(dir)) names.emplace_back(e->d_name);
    ::closedir(dir);
  }
  return ParseDeviceNodeNames(names);
}

std::vector<std::string> GpuDeviceNodes(int device) {
  return {"/dev/nvidia" + std::to_string(device), "/dev/nvidiactl", "/dev/nvidia-uvm",
          "/dev/nvidia-uvm-tools"};
}

GpuSlots::GpuSlots(std::vector<int> devices, int calls_per_gpu)
    : devices_(std::move(devices)),
      calls_per_gpu_(std::max(1, calls_per_gpu)),
      in_use_(devices_.size(), 0) {}

GpuSlots::Slot::~Slot() {
  if (slots_ != nullptr) slots_->Release(device_);
}

std::optional<GpuSlots::Slot> GpuSlots::Acquire(int64_t deadline_us) {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    size_t best = devices_.size();
    for (size_t i = 0; i < devices_.size(); ++i) {
      if (in_use_[i] >= calls_per_gpu_) continue;
      if (best == devices_.size() || in_use_[i] < in_use_[best]) best = i;
    }
    if (best < devices_.size()) {
      ++in_use_[best];
      return Slot(this, devices_[best]);
    }
    int64_t left_us = deadline_us - MonotonicUs();
    if (left_us <= 0) return std::nullopt;
    freed_cv_.wait_for(lock, std::chrono::microseconds(left_us));
  }
}

int GpuSlots::in_use(int device) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (size_t i = 0; i < devices_.size(); ++i) {
    if (devices_[i] == device) return in_use_[i];
  }
  return 0;
}

void GpuSlots::Release(int device) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (size_t i = 0; i < devices_.size(); ++i) {
      if (devices_[i] == device) --in_use_[i];
    }
  }
  freed_cv_.notify_one();
}

}  // namespace toolgate::executor
