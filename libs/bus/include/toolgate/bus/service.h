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
  // worker pool (handed over by the connection's reader thread).
  Status Handle(const std::string& subject, const std::string& queue, Bus::Handler handler);
  // Like Handle, but runs handler on the thread that reads the connection
  // (Delivery::kReaderThread): for handlers that only touch memory or queue work, where a thread
  // hop would cost more than the work. Such a handler must not block nor call Bus::Request().
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
