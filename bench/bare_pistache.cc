// The peer for bench/invoke.sh: the same Pistache version and thread count as the edge, with
// one route that echoes the request body, i.e. the cost of HTTP alone.
#include <pistache/endpoint.h>
#include <pistache/http.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>

using namespace Pistache;

class EchoHandler : public Http::Handler {
 public:
  HTTP_PROTOTYPE(EchoHandler)
  void onRequest(const Http::Request& request, Http::ResponseWriter writer) override {
    writer.send(Http::Code::Ok, request.body());
  }
};

int main(int argc, char** argv) {
  int port = argc > 1 ? std::atoi(argv[1]) : 18081;
  int threads = argc > 2 ? std::atoi(argv[2]) : 2;
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  Http::Endpoint endpoint(Address("127.0.0.1", Port(static_cast<uint16_t>(port))));
  endpoint.init(Http::Endpoint::options().threads(threads).flags(Tcp::Options::ReuseAddr));
  endpoint.setHandler(Http::make_handler<EchoHandler>());
  endpoint.serveThreaded();
  std::printf("bare pistache on %d\n", port);
  std::fflush(stdout);
  int sig;
  sigwait(&set, &sig);
  endpoint.shutdown();
  return 0;
}
