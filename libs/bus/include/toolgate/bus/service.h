// Service: the common skeleton of a Toolgate service process.
//
// It answers its health subject (tg.health.<name>), runs message handlers on a worker pool so a
// slow handler never stalls a subscription, and on SIGTERM or SIGINT stops taking messages, lets
// in-flight work finish, flushes, and returns. Construct after BlockShutdownSignals().
#pragma once

#include <memory>
#include <string>

#include "toolgate/base/process.h"
#include "toolgate/bus/bus.h"

namespace toolgate::bus {

class Service {
 public:
  // bus must outlive the Service.
  Service(std::string name, Bus& bus, size_t worker_threads);

  // Delivers each message of subject (queue group `queue`, empty for broadcast) to handler on the
  // worker pool.
  Status Handle(const std::string& subject, const std::string& queue, Bus::Handler handler);
  // Like Handle, but runs handler on the subscription's delivery thread: for handlers that only
  // touch memory, where a pool hop would cost more than the work.
  Status HandleInline(const std::string& subject, const std::string& queue, Bus::Handler handler);

  // Logs "ready", blocks until SIGTERM or SIGINT, then drains and waits for in-flight handlers.
  // Returns the process exit code.
  int Run();

  ThreadPool& pool() { return *pool_; }
  Bus& bus() { return bus_; }
  const std::string& name() const { return name_; }

 private:
  std::string name_;
  Bus& bus_;
  std::unique_ptr<ThreadPool> pool_;
};

}  // namespace toolgate::bus
