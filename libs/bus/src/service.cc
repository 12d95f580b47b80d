#include "toolgate/bus/service.h"

#include <signal.h>

#include <cstring>

#include "toolgate/base/log.h"

namespace toolgate::bus {

Service::Service(std::string name, Bus& bus, size_t worker_threads)
    : name_(std::move(name)), bus_(bus), pool_(std::make_unique<ThreadPool>(worker_threads)) {}

Status Service::Handle(const std::string& subject, const std::string& queue, Bus::Handler handler) {
  auto shared = std::make_shared<Bus::Handler>(std::move(handler));
  // Only a hand-off to the pool: done on the reader thread, it saves the delivery thread's.
  return bus_.Subscribe(
      subject, queue,
      [this, shared](Message&& m) {
        pool_->Submit([shared, m = std::move(m)]() mutable { (*shared)(std::move(m)); });
      },
      Delivery::kReaderThread);
}

Status Service::HandleInline(const std::string& subject, const std::string& queue,
                             Bus::Handler handler) {
  return bus_.Subscribe(subject, queue, std::move(handler), Delivery::kReaderThread);
}

int Service::Run() {
  Status s = bus_.Subscribe("tg.health." + name_, "health", [this](Message&& m) {
    if (!m.reply.empty()) bus_.Publish(m.reply, "ok");
  });
  if (!s.ok()) {
    log::Error("cannot subscribe to health subject").Str("error", s.ToString());
    return 1;
  }
  log::Info("ready");
  int sig = WaitForShutdownSignal();
  log::Info("draining").Str("signal", strsignal(sig));
  bus_.Drain(10000);
  pool_->WaitIdle();
  bus_.Drain(1000);  // flushes what the last handlers published
  log::Info("stopped");
  return 0;
}

}  // namespace toolgate::bus
