// GPUs for the GPU pool: finding the machine's NVIDIA devices, and sharing them between calls.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "toolgate/base/status.h"

namespace toolgate::executor {

// The device indices in `nvidia-smi -L` output ("GPU 0: NVIDIA H100 80GB HBM3 (UUID: ...)").
std::vector<int> ParseNvidiaSmiList(std::string_view output);
// The device indices among /dev entry names: "nvidia0", "nvidia1"... (not "nvidiactl" or
// "nvidia-uvm"). Sorted.
std::vector<int> ParseDeviceNodeNames(const std::vector<std::string>& names);
// "0,1" (the --gpu-devices flag): distinct non-negative indices. InvalidArgument otherwise.
Result<std::vector<int>> ParseGpuDeviceList(std::string_view text);
// The machine's GPUs: from `nvidia-smi -L` when it runs, else from /dev/nvidia<N>. Empty when
// there are none.
std::vector<int> DiscoverGpus();
// The device nodes a worker on device needs: /dev/nvidia<device> and the driver's shared nodes
// (/dev/nvidiactl, /dev/nvidia-uvm, /dev/nvidia-uvm-tools). The sandbox skips absent ones, so
// a fake device list works on a machine without GPUs.
std::vector<std::string> GpuDeviceNodes(int device);

// At most calls_per_gpu calls at once on each device. Thread-safe.
class GpuSlots {
 public:
  // A call's hold on a device, released when destroyed. Movable.
  class Slot {
   public:
    Slot(Slot&& other) noexcept : slots_(other.slots_), device_(other.device_) {
      other.slots_ = nullptr;
    }
    Slot& operator=(Slot&&) = delete;
    ~Slot();
    int device() const { return device_; }

   private:
    friend class GpuSlots;
    Slot(GpuSlots* slots, int device) : slots_(slots), device_(device) {}
    GpuSlots* slots_;
    int device_;
  };

  // devices must not be empty; calls_per_gpu at least 1.
  GpuSlots(std::vector<int> devices, int calls_per_gpu);

  // A slot on the device with the most free slots, the first listed on a tie (so an idle
  // executor keeps using its first device, where the warm workers are), waiting for one until
  // deadline_us (MonotonicUs); nullopt past it.
  std::optional<Slot> Acquire(int64_t deadline_us);
  // Calls on device now.
  int in_use(int device) const;
  const std::vector<int>& devices() const { return devices_; }

 private:
  void Release(int device);

  const std::vector<int> devices_;
  const int calls_per_gpu_;
  mutable std::mutex mu_;
  std::condition_variable freed_cv_;
  std::vector<int> in_use_;  // guarded by mu_; parallel to devices_
};

}  // namespace toolgate::executor
