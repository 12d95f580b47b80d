#include "toolgate/executor/gpu.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "toolgate/base/time.h"
#include "toolgate/executor/process_runtime.h"

namespace toolgate::executor {
namespace {

TEST(GpuTest, ParsesNvidiaSmiList) {
  EXPECT_EQ(ParseNvidiaSmiList("GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-1234)\n"
                               "GPU 1: NVIDIA H100 80GB HBM3 (UUID: GPU-5678)\n"),
            (std::vector<int>{0, 1}));
  EXPECT_EQ(ParseNvidiaSmiList("  MIG 1g.10gb Device 0: (UUID: MIG-1)\nGPU 3: A100\r\n"),
            (std::vector<int>{3}));
  EXPECT_TRUE(ParseNvidiaSmiList("").empty());
  EXPECT_TRUE(ParseNvidiaSmiList("No devices were found\n").empty());
  EXPECT_TRUE(ParseNvidiaSmiList("GPU x: broken\n").empty());
}

TEST(GpuTest, ParsesDeviceNodeNames) {
  EXPECT_EQ(ParseDeviceNodeNames({"nvidia1", "nvidiactl", "nvidia-uvm", "null", "nvidia0",
                                  "nvidia-uvm-tools", "nvidia-modeset", "nvidia10"}),
            (std::vector<int>{0, 1, 10}));
  EXPECT_TRUE(ParseDeviceNodeNames({"nvidiactl", "tty0"}).empty());
}

TEST(GpuTest, ParsesTheDeviceListFlag) {
  EXPECT_EQ(ParseGpuDeviceList("0").value(), (std::vector<int>{0}));
  EXPECT_EQ(ParseGpuDeviceList("0, 1,3").value(), (std::vector<int>{0, 1, 3}));
  EXPECT_FALSE(ParseGpuDeviceList("").ok());
  EXPECT_FALSE(ParseGpuDeviceList("a").ok());
  EXPECT_FALSE(ParseGpuDeviceList("0,,1").ok());
  EXPECT_FALSE(ParseGpuDeviceList("-1").ok());
  EXPECT_FALSE(ParseGpuDeviceList("1,1").ok());
}

TEST(GpuTest, EachWorkerGetsItsOwnDevice) {
  ProcessRuntimeConfig config;
  config.runtime_dir = "/tmp";
  config.gpu = true;
  SandboxSpec spec = WorkerSandboxSpec(Language::kPython, config, 4096, 0, 7);
  EXPECT_EQ(spec.devices, (std::vector<std::string>{"/dev/nvidia7", "/dev/nvidiactl",
                                                    "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools"}));
  EXPECT_NE(std::find(spec.env.begin(), spec.env.end(), "CUDA_VISIBLE_DEVICES=7"), spec.env.end());
  // The CUDA driver maps huge ranges: no address space or data limit on a GPU worker.
  EXPECT_EQ(spec.limits.address_space_bytes, 0u);
  EXPECT_EQ(spec.limits.data_bytes, 0u);
  config.gpu = false;
  spec = WorkerSandboxSpec(Language::kPython, config, 256, 0, -1);
  EXPECT_TRUE(spec.devices.empty());
  for (const std::string& e : spec.env) EXPECT_NE(e.rfind("CUDA_", 0), 0u) << e;
}

TEST(GpuTest, SlotsSpreadCallsAndCapEachDevice) {
  GpuSlots slots({0, 1}, 2);
  const int64_t soon = MonotonicUs() + 1000000;
  auto a = slots.Acquire(soon);
  auto b = slots.Acquire(soon);
  auto c = slots.Acquire(soon);
  auto d = slots.Acquire(soon);
  ASSERT_TRUE(a && b && c && d);
  EXPECT_EQ(a->device(), 0);  // the first device on a tie...
  EXPECT_EQ(b->device(), 1);  // ...then the less loaded one
  EXPECT_EQ(slots.in_use(0), 2);
  EXPECT_EQ(slots.in_use(1), 2);
  // Full: no slot before the deadline.
  EXPECT_FALSE(slots.Acquire(MonotonicUs()));
  { auto gone = std::move(*c); }
  auto e = slots.Acquire(MonotonicUs());
  ASSERT_TRUE(e);
  EXPECT_EQ(e->device(), 0);
}

TEST(GpuTest, OneCallPerGpuByDefaultAndAWaiterGetsTheFreedSlot) {
  GpuSlots slots({4}, 1);
  auto held = slots.Acquire(MonotonicUs() + 1000000);
  ASSERT_TRUE(held);
  EXPECT_EQ(held->device(), 4);
  EXPECT_FALSE(slots.Acquire(MonotonicUs()));
  std::atomic<int> got{-1};
  std::thread waiter([&] {
    auto slot = slots.Acquire(MonotonicUs() + 60000000);
    if (slot) got = slot->device();
  });
  { auto released = std::move(*held); }
  waiter.join();
  EXPECT_EQ(got, 4);
  EXPECT_EQ(slots.in_use(4), 0);
}

}  // namespace
}  // namespace toolgate::executor
