#include "webhook_receiver.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>

namespace toolgate::testing {
namespace {

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

}  // namespace

WebhookReceiver::WebhookReceiver(int failures) : failures_left_(failures) {
  fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd_, 64) != 0 ||
      ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    std::perror("webhook receiver");
    std::abort();
  }
  port_ = ntohs(addr.sin_port);
  thread_ = std::thread([this] { Loop(); });
}

WebhookReceiver::~WebhookReceiver() {
  ::shutdown(fd_, SHUT_RDWR);  // wakes accept()
  thread_.join();
  ::close(fd_);
}

std::string WebhookReceiver::Url(const std::string& host, const std::string& scheme) const {
  return scheme + "://" + host + ":" + std::to_string(port_) + "/hooks/toolgate";
}

std::vector<Delivery> WebhookReceiver::Deliveries() {
  std::lock_guard<std::mutex> lock(mu_);
  return deliveries_;
}

void WebhookReceiver::Loop() {
  for (;;) {
    const int conn = ::accept(fd_, nullptr, nullptr);
    if (conn < 0) return;
    Serve(conn);
    ::close(conn);
  }
}

void WebhookReceiver::Serve(int conn) {
  std::string data;
  char buf[8192];
  size_t head_end = std::string::npos;
  size_t length = 0;
  std::map<std::string, std::string> headers;
  for (;;) {
    if (head_end != std::string::npos && data.size() >= head_end + 4 + length) break;
    const ssize_t n = ::read(conn, buf, sizeof buf);
    if (n <= 0) return;
    data.append(buf, static_cast<size_t>(n));
    if (head_end == std::string::npos && (head_end = data.find("\r\n\r\n")) != std::string::npos) {
      size_t pos = data.find("\r\n") + 2;
      while (pos < head_end) {
        const size_t end = data.find("\r\n", pos);
        const std::string line = data.substr(pos, end - pos);
        const size_t colon = line.find(':');
        if (colon != std::string::npos) {
          std::string value = line.substr(colon + 1);
          value.erase(0, value.find_first_not_of(' '));
          headers[Lower(line.substr(0, colon))] = value;
        }
        pos = end + 2;
      }
      if (headers.count("content-length")) length = std::stoul(headers["content-length"]);
    }
  }
  Delivery d{headers["webhook-id"], headers["webhook-timestamp"], headers["webhook-signature"],
             data.substr(head_end + 4, length)};
  bool fail = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    deliveries_.push_back(std::move(d));
    if (failures_left_ > 0) {
      --failures_left_;
      fail = true;
    }
  }
  const std::string answer =
      fail ? "HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
           : "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
  (void)!::write(conn, answer.data(), answer.size());
}

}  // namespace toolgate::testing
