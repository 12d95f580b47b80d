#include "toolgate/net/listen_port.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <mutex>
#include <random>
#include <set>

namespace toolgate::net {
namespace {

// The lowest port the kernel uses as a source port; 32768 (Linux's default) when unreadable.
int EphemeralLow() {
  std::ifstream range("/proc/sys/net/ipv4/ip_local_port_range");
  int low = 0;
  int high = 0;
  if (range >> low >> high && low > 0) return low;
  return 32768;
}

// Binds 127.0.0.1:port (0: any) without SO_REUSEADDR; the bound port, or 0 when it is taken.
int TryBind(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return 0;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  socklen_t len = sizeof addr;
  int bound = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    bound = ntohs(addr.sin_port);
  }
  ::close(fd);
  return bound;
}

}  // namespace

Result<int> PickListenPort() {
  // Below the ephemeral range and above the ports well-known services are configured on.
  constexpr int kLowest = 10000;
  static std::mutex mu;
  static std::set<int> handed_out;
  static std::mt19937 random{std::random_device{}()};
  std::lock_guard lock(mu);
  const int high = EphemeralLow() - 1;
  const bool room_below = high - kLowest >= 1000;
  std::uniform_int_distribution<int> pick(kLowest, room_below ? high : kLowest);
  for (int attempt = 0; attempt < 256; ++attempt) {
    int port = TryBind(room_below ? pick(random) : 0);
    if (port != 0 && handed_out.insert(port).second) return port;
  }
  return Status::Unavailable("no free loopback port found in 256 tries");
}

}  // namespace toolgate::net
