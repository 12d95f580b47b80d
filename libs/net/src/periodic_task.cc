#include "toolgate/net/periodic_task.h"

namespace toolgate::net {

PeriodicTask::PeriodicTask(std::chrono::milliseconds interval, std::function<void()> tick)
    : interval_(interval), tick_(std::move(tick)), thread_([this] { Loop(); }) {}

PeriodicTask::~PeriodicTask() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  stop_cv_.notify_all();
  thread_.join();
}

void PeriodicTask::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_cv_.wait_for(lock, interval_, [this] { return stopping_; })) {
    lock.unlock();
    tick_();
    lock.lock();
  }
}

}  // namespace toolgate::net
