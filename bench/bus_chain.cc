// The architecture's floor, for bench/invoke.sh: what an HTTP request costs when the edge hands it
// to other processes over NATS and does nothing else. Same Pistache, same thread count, same Bus
// and ReplyMux as the edge, and stages that forward the body unchanged, the way the invoke chain
// forwards a job (one-way, the edge's reply subject riding along).
//
//   bench_bus_chain front PORT THREADS NATS_URL   # POST /echo -> bench.hop.1 -> ... -> reply
//   bench_bus_chain stage NATS_URL I HOPS         # bench.hop.I: forward to I+1, or reply if last
//
// With HOPS stages a request is HOPS + 1 bus messages; the invoke path of a Lua echo tool is 6
// (auth, registry, billing, executor, billing, then the answer), so HOPS=5 is its shape without
// any of its work: no key lookup, no Redis, no PostgreSQL, no worker.
#include <pistache/endpoint.h>
#include <pistache/http.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "reply_mux.h"
#include "toolgate/bus/bus.h"

using namespace Pistache;
using toolgate::Result;
using toolgate::bus::Bus;
using toolgate::bus::BusOptions;
using toolgate::bus::Message;
using toolgate::edge::ReplyMux;

namespace {

std::string HopSubject(int i) {
  return "bench.hop." + std::to_string(i);
}

std::unique_ptr<Bus> ConnectOrDie(const std::string& url, const std::string& name) {
  BusOptions options;
  options.url = url;
  options.name = name;
  auto bus = Bus::Connect(options);
  if (!bus.ok()) {
    std::fprintf(stderr, "%s: %s\n", name.c_str(), bus.status().ToString().c_str());
    std::exit(1);
  }
  return std::move(*bus);
}

void WaitForSignal(const sigset_t& set) {
  int sig;
  sigwait(&set, &sig);
}

class ChainHandler : public Http::Handler {
 public:
  HTTP_PROTOTYPE(ChainHandler)
  ChainHandler(Bus* bus, ReplyMux* mux) : bus_(bus), mux_(mux) {}
  void onRequest(const Http::Request& request, Http::ResponseWriter writer) override {
    auto shared = std::make_shared<Http::ResponseWriter>(std::move(writer));
    std::string reply = mux_->Expect(15000, [shared](Result<Message> answer) {
      if (answer.ok()) {
        shared->send(Http::Code::Ok, answer->data);
      } else {
        shared->send(Http::Code::Gateway_Timeout, answer.status().ToString());
      }
    });
    if (!bus_->Publish(HopSubject(1), request.body(), reply).ok()) {
      mux_->Cancel(reply, toolgate::Status::Unavailable("publish failed"));
    }
  }

 private:
  Bus* bus_;
  ReplyMux* mux_;
};

int Front(int port, int threads, const std::string& url, const sigset_t& signals) {
  auto bus = ConnectOrDie(url, "bench-front");
  ReplyMux mux(*bus);
  if (!mux.Start().ok()) return 1;
  Http::Endpoint endpoint(Address("127.0.0.1", Port(static_cast<uint16_t>(port))));
  endpoint.init(Http::Endpoint::options().threads(threads).flags(Tcp::Options::ReuseAddr));
  endpoint.setHandler(std::make_shared<ChainHandler>(bus.get(), &mux));
  endpoint.serveThreaded();
  std::printf("bus chain front on %d\n", port);
  std::fflush(stdout);
  WaitForSignal(signals);
  endpoint.shutdown();
  return 0;
}

int Stage(const std::string& url, int index, int hops, const sigset_t& signals) {
  auto bus = ConnectOrDie(url, "bench-stage-" + std::to_string(index));
  Bus* b = bus.get();
  const std::string next = index < hops ? HopSubject(index + 1) : "";
  toolgate::Status s = bus->Subscribe(HopSubject(index), "bench", [b, next](Message&& m) {
    b->Publish(next.empty() ? m.reply : next, m.data, next.empty() ? "" : m.reply);
  });
  if (!s.ok()) return 1;
  std::printf("stage %d ready\n", index);
  std::fflush(stdout);
  WaitForSignal(signals);
  bus->Drain(1000);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "front" && argc == 5)
    return Front(std::atoi(argv[2]), std::atoi(argv[3]), argv[4], signals);
  if (mode == "stage" && argc == 5) {
    return Stage(argv[2], std::atoi(argv[3]), std::atoi(argv[4]), signals);
  }
  std::fprintf(stderr,
               "usage: bench_bus_chain front PORT THREADS NATS_URL\n"
               "       bench_bus_chain stage NATS_URL I HOPS\n");
  return 2;
}
