// AdminServer: a service's operator port, apart from any public one.
//
//   GET /metrics  the process's metrics::Registry in the Prometheus text format 0.0.4
//   GET /healthz  200 while the process runs (liveness)
//   GET /readyz   200 when every readiness check passes, else 503 naming the failing ones
//
// It listens on loopback unless told otherwise: metrics name functions and organizations' traffic,
// which is the operator's to see, not the internet's. One thread accepts and answers one
// connection at a time (a scraper and a probe, not traffic); each connection has two seconds to
// send its request head.
//
// Readiness checks are registered by whoever owns what they look at, with a ReadinessCheck
// whose lifetime bounds the registration: a check never runs after its owner is gone.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "toolgate/base/status.h"

namespace toolgate::core {

// The longest a readiness check of a store should take: below a probe's usual timeout, so that
// a store that does not answer reads as "not ready", not as a probe that failed.
inline constexpr std::chrono::milliseconds kReadinessTimeout{1000};

// Registers a named readiness check for as long as it lives. The check runs on the admin thread
// on each GET /readyz and should answer within a few seconds (a store's own timeout bounds it).
// Thread-safe; the destructor waits for a check that is running.
class ReadinessCheck {
 public:
  ReadinessCheck(std::string name, std::function<Status()> check);
  ~ReadinessCheck();
  ReadinessCheck(const ReadinessCheck&) = delete;
  ReadinessCheck& operator=(const ReadinessCheck&) = delete;

  // Runs every registered check, in registration order: (name, status) each.
  static std::vector<std::pair<std::string, Status>> RunAll();

 private:
  uint64_t id_;
};

// Marks the process as draining: /readyz answers 503 from now on, so a balancer stops sending
// work while in-flight work finishes. Thread-safe, idempotent.
void MarkDraining();
bool Draining();

// A minimal HTTP/1.1 request head: method and path (query string removed).
struct AdminRequest {
  std::string method;
  std::string path;
};
struct AdminResponse {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
};
// Parses a request head ("GET /metrics HTTP/1.1\r\n..."); InvalidArgument when it is not HTTP/1.
Result<AdminRequest> ParseAdminRequest(std::string_view head);
// Answers one request from the global registry and readiness checks (pure apart from those).
AdminResponse AnswerAdmin(const AdminRequest& request);

class AdminServer {
 public:
  // Binds address:port (port 0: a free one) and starts the accept thread. InvalidArgument for
  // an address that is not an IPv4 literal, Unavailable when the bind fails.
  static Result<std::unique_ptr<AdminServer>> Start(const std::string& address, int port);
  // Stops accepting, finishes the connection being answered, joins the thread.
  ~AdminServer();
  AdminServer(const AdminServer&) = delete;
  AdminServer& operator=(const AdminServer&) = delete;

  int port() const { return port_; }
  // "http://<address>:<port>", the port as bound.
  const std::string& url() const { return url_; }

 private:
  AdminServer(int fd, int stop_fd, int port, std::string url);
  void Loop();
  void Serve(int conn);

  int fd_;
  int stop_fd_;  // eventfd: written by the destructor to wake the loop
  int port_;
  std::string url_;
  std::thread thread_;
};

}  // namespace toolgate::core
