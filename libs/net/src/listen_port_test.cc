#include "toolgate/net/listen_port.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <set>
#include <vector>

namespace toolgate::net {
namespace {

int EphemeralLow() {
  std::ifstream range("/proc/sys/net/ipv4/ip_local_port_range");
  int low = 32768;
  range >> low;
  return low;
}

// A listener on 127.0.0.1:port; -1 when the port cannot be bound.
int Listen(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd, 1) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// The ports come from below the range outgoing connections take source ports from, so a
// connection opened between the choice and the bind can never hold one.
TEST(PickListenPort, ComesFromBelowTheEphemeralRangeAndCanBeListenedOn) {
  const int low = EphemeralLow();
  ASSERT_GT(low, 11000) << "this machine leaves no room below its ephemeral range";
  for (int i = 0; i < 20; ++i) {
    Result<int> port = PickListenPort();
    ASSERT_TRUE(port.ok()) << port.status().ToString();
    EXPECT_GE(*port, 10000);
    EXPECT_LT(*port, low);
    int fd = Listen(*port);
    EXPECT_GE(fd, 0) << "port " << *port << " was handed out but cannot be listened on";
    if (fd >= 0) ::close(fd);
  }
}

TEST(PickListenPort, NeverHandsOutAPortTwice) {
  std::set<int> seen;
  for (int i = 0; i < 300; ++i) {
    Result<int> port = PickListenPort();
    ASSERT_TRUE(port.ok()) << port.status().ToString();
    EXPECT_TRUE(seen.insert(*port).second) << "port " << *port << " handed out twice";
  }
}

// A port someone listens on is never handed out.
TEST(PickListenPort, SkipsAPortInUse) {
  // Occupy many ports of the range, then pick: none of the occupied may come back.
  std::set<int> occupied;
  std::vector<int> fds;
  for (int port = 20000; port < 20200; ++port) {
    int fd = Listen(port);
    if (fd >= 0) {
      fds.push_back(fd);
      occupied.insert(port);
    }
  }
  for (int i = 0; i < 500; ++i) {
    Result<int> port = PickListenPort();
    ASSERT_TRUE(port.ok());
    EXPECT_EQ(occupied.count(*port), 0u) << "port " << *port << " is in use";
  }
  for (int fd : fds) ::close(fd);
}

}  // namespace
}  // namespace toolgate::net
