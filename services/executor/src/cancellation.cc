#include "toolgate/executor/cancellation.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include "toolgate/base/time.h"

namespace toolgate::executor {

CancelSignal::CancelSignal() : fd_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {}

CancelSignal::~CancelSignal() {
  if (fd_ >= 0) ::close(fd_);
}

void CancelSignal::Cancel() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (cancelled_) return;
    cancelled_ = true;
  }
  // Never read: the fd stays readable, so every later poll sees it too.
  if (fd_ >= 0) {
    const uint64_t one = 1;
    [[maybe_unused]] ssize_t n = ::write(fd_, &one, sizeof one);
  }
}

bool CancelSignal::cancelled() const {
  std::lock_guard<std::mutex> lock(mu_);
  return cancelled_;
}

std::shared_ptr<CancelSignal> RunningCalls::Begin(const std::string& execution_id) {
  auto signal = std::make_shared<CancelSignal>();
  if (early_.Get(execution_id, MonotonicUs() / 1000)) signal->Cancel();
  std::lock_guard<std::mutex> lock(mu_);
  running_[execution_id] = signal;
  return signal;
}

void RunningCalls::End(const std::string& execution_id) {
  std::lock_guard<std::mutex> lock(mu_);
  running_.erase(execution_id);
}

bool RunningCalls::Cancel(const std::string& execution_id) {
  std::shared_ptr<CancelSignal> signal;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = running_.find(execution_id);
    if (it != running_.end()) signal = it->second;
  }
  if (!signal) {
    early_.Put(execution_id, true, MonotonicUs() / 1000 + kEarlyCancelMemoryMs,
               early_.generation());
    return false;
  }
  signal->Cancel();
  return true;
}

}  // namespace toolgate::executor
