// A webhook receiver on the loopback for the integration tests: what a tenant's endpoint would
// be. It records each request's Standard Webhooks headers and body, and answers 500 to the first
// `failures` requests and 200 after them. One request per connection, served on a thread of its
// own. Thread-safe.
#pragma once

#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace toolgate::testing {

// One request the receiver took.
struct Delivery {
  std::string id, timestamp, signature, body;
};

class WebhookReceiver {
 public:
  // Listens on a free loopback port; aborts the test binary when it cannot.
  explicit WebhookReceiver(int failures = 0);
  ~WebhookReceiver();
  WebhookReceiver(const WebhookReceiver&) = delete;
  WebhookReceiver& operator=(const WebhookReceiver&) = delete;

  int port() const { return port_; }
  // "<scheme>://<host>:<port>/hooks/toolgate"
  std::string Url(const std::string& host = "127.0.0.1", const std::string& scheme = "http") const;
  std::vector<Delivery> Deliveries();

 private:
  void Loop();
  void Serve(int conn);

  int fd_ = -1;
  int port_ = 0;
  std::mutex mu_;
  std::vector<Delivery> deliveries_;  // guarded by mu_
  int failures_left_ = 0;             // guarded by mu_
  std::thread thread_;
};

}  // namespace toolgate::testing
