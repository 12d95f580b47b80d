// The floor of the invoke path's bus designs, for bench/invoke.sh: what an HTTP request costs
// when the edge hands it to other processes over NATS and does nothing else. Same Pistache, same
// thread count, same Bus and ReplyMux as the edge, and stages that forward the body unchanged,
// the way the invoke chain forwards a job (one-way, the edge's reply subject riding along).
//
// Two designs on the same no-op hops, the batched one with two kinds of stage:
//
//   bench_bus_chain front PORT THREADS NATS_URL   # per message: POST /echo -> bench.hop.1 ->
//   bench_bus_chain stage NATS_URL I HOPS         # ... -> bench.hop.HOPS -> the front's reply
//
// One message per request per hop; each stage handles each message on the client library's
// delivery thread (libs/bus as the services use it).
//
//   bench_bus_chain batch-front PORT THREADS NATS_URL   # batched: bench.batch.1 -> ...
//   bench_bus_chain batch-stage NATS_URL I HOPS
//
// Batched: the front sends the requests that queued while its previous batch was in flight as
// one message (a lone request goes at once: no timer) and gets one answer per batch; a stage
// forwards, as one message, everything that piled up in its subscription by the time it has
// handled what it holds (natsSubscription_GetPending reaches 0), so a batch is what the load
// made of it. The last stage answers each reply subject once per batch.
//
//   bench_bus_chain loop-stage NATS_URL I HOPS   # batched, read and forwarded on one thread
//
// The same batched stage, with the connection driven by an epoll loop of its own
// (natsOptions_SetEventLoop) and each message taken on that loop thread as the client library
// parses it, through the library's message filter (exported by libnats, declared only in its
// private conn.h, hence the declaration below): one read of the socket is one batch, and no
// message crosses to a delivery thread. Its fronts are batch-front.
//
// With HOPS stages a request is HOPS + 1 bus hops. The warm invoke path of the batched design
// is edge -> billing (hold) -> executor -> billing (settlement) -> edge: HOPS=3, without any of
// its work (no key lookup, no Redis, no PostgreSQL, no worker).
#include <nats/nats.h>
#include <pistache/endpoint.h>
#include <pistache/http.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "reply_mux.h"
#include "toolgate/bus/bus.h"

using namespace Pistache;
using toolgate::Result;
using toolgate::bus::Bus;
using toolgate::bus::BusOptions;
using toolgate::bus::Message;
using toolgate::edge::ReplyMux;

namespace {

// Bounds of one batch message: well under NATS's default 1 MiB payload.
constexpr size_t kMaxBatchRequests = 1024;
constexpr size_t kMaxBatchBytes = 512 * 1024;

std::string HopSubject(int i) {
  return "bench.hop." + std::to_string(i);
}

std::string BatchSubject(int i) {
  return "bench.batch." + std::to_string(i);
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

// --- The batch wire format -------------------------------------------------------------------
// A job batch is a sequence of entries, [u16 reply length][reply][u32 body length][body]: each
// request carries the subject its answer goes to, so the concatenation of two batches is a batch
// and a stage can forward what it received from several fronts as one message. An answer batch
// is [u32 length][body] per request, in the order of the job batch. Lengths are in host byte
// order: every process of the bench runs on one machine.

template <typename T>
void PutInt(std::string& out, T value) {
  out.append(reinterpret_cast<const char*>(&value), sizeof value);
}

template <typename T>
bool TakeInt(std::string_view& in, T* value) {
  if (in.size() < sizeof(T)) return false;
  std::memcpy(value, in.data(), sizeof(T));
  in.remove_prefix(sizeof(T));
  return true;
}

bool TakeBytes(std::string_view& in, size_t n, std::string_view* bytes) {
  if (in.size() < n) return false;
  *bytes = in.substr(0, n);
  in.remove_prefix(n);
  return true;
}

void AppendJob(std::string& batch, std::string_view reply, std::string_view body) {
  PutInt(batch, static_cast<uint16_t>(reply.size()));
  batch.append(reply);
  PutInt(batch, static_cast<uint32_t>(body.size()));
  batch.append(body);
}

// Calls f(reply, body) for each entry; false when the batch is malformed.
template <typename F>
bool ForEachJob(std::string_view batch, F&& f) {
  while (!batch.empty()) {
    uint16_t reply_len;
    uint32_t body_len;
    std::string_view reply, body;
    if (!TakeInt(batch, &reply_len) || !TakeBytes(batch, reply_len, &reply) ||
        !TakeInt(batch, &body_len) || !TakeBytes(batch, body_len, &body)) {
      return false;
    }
    f(reply, body);
  }
  return true;
}

// --- Per message -----------------------------------------------------------------------------

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

// --- Batched ---------------------------------------------------------------------------------

// The front's queue: requests wait here while a batch is in flight; the batch's answer sends
// the next one. Thread-safe: Pistache's reactor threads submit, the bus delivery thread (or
// ReplyMux's timer thread) completes.
class BatchingFront : public std::enable_shared_from_this<BatchingFront> {
 public:
  // Keeps references to bus and mux; owned by a shared_ptr, which each awaited answer holds.
  BatchingFront(Bus& bus, ReplyMux& mux) : bus_(bus), mux_(mux) {}

  // Sends no further batch: answers that complete after this (ReplyMux failing what is pending
  // as it is destroyed) answer their own requests only.
  void Stop() {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }

  void Submit(std::string body, Http::ResponseWriter writer) {
    std::vector<Waiting> batch;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopping_) return;
      queue_.push_back(
          {std::move(body), std::make_shared<Http::ResponseWriter>(std::move(writer))});
      if (in_flight_) return;
      in_flight_ = true;
      batch = TakeBatchLocked();
    }
    Send(std::move(batch));
  }

 private:
  struct Waiting {
    std::string body;
    std::shared_ptr<Http::ResponseWriter> writer;
  };

  // The oldest queued requests, within the batch bounds (at least one).
  std::vector<Waiting> TakeBatchLocked() {
    std::vector<Waiting> batch;
    size_t bytes = 0;
    size_t n = 0;
    while (n < queue_.size() && n < kMaxBatchRequests &&
           (n == 0 || bytes + queue_[n].body.size() <= kMaxBatchBytes)) {
      bytes += queue_[n].body.size();
      ++n;
    }
    batch.assign(std::make_move_iterator(queue_.begin()),
                 std::make_move_iterator(queue_.begin() + static_cast<std::ptrdiff_t>(n)));
    queue_.erase(queue_.begin(), queue_.begin() + static_cast<std::ptrdiff_t>(n));
    return batch;
  }

  void Send(std::vector<Waiting> batch) {
    auto waiting = std::make_shared<std::vector<Waiting>>(std::move(batch));
    auto self = shared_from_this();
    std::string reply = mux_.Expect(15000, [self, waiting](Result<Message> answer) {
      Answer(*waiting, answer);
      std::vector<Waiting> next;
      {
        std::lock_guard<std::mutex> lock(self->mu_);
        if (self->queue_.empty() || self->stopping_) {
          self->in_flight_ = false;
          return;
        }
        next = self->TakeBatchLocked();
      }
      self->Send(std::move(next));
    });
    std::string message;
    for (const Waiting& w : *waiting) AppendJob(message, reply, w.body);
    if (!bus_.Publish(BatchSubject(1), message).ok()) {
      mux_.Cancel(reply, toolgate::Status::Unavailable("publish failed"));
    }
  }

  static void Answer(const std::vector<Waiting>& batch, const Result<Message>& answer) {
    std::string_view rest = answer.ok() ? std::string_view(answer->data) : std::string_view();
    for (const Waiting& w : batch) {
      uint32_t len;
      std::string_view body;
      if (answer.ok() && TakeInt(rest, &len) && TakeBytes(rest, len, &body)) {
        w.writer->send(Http::Code::Ok, std::string(body));
      } else {
        w.writer->send(Http::Code::Gateway_Timeout,
                       answer.ok() ? "short answer batch" : answer.status().ToString());
      }
    }
  }

  Bus& bus_;
  ReplyMux& mux_;
  std::mutex mu_;
  std::vector<Waiting> queue_;  // guarded by mu_
  bool in_flight_ = false;      // guarded by mu_: a batch's answer is awaited
  bool stopping_ = false;       // guarded by mu_
};

class BatchHandler : public Http::Handler {
 public:
  HTTP_PROTOTYPE(BatchHandler)
  explicit BatchHandler(BatchingFront* front) : front_(front) {}
  void onRequest(const Http::Request& request, Http::ResponseWriter writer) override {
    front_->Submit(request.body(), std::move(writer));
  }

 private:
  BatchingFront* front_;
};

// A stage of the batched design on NATS.c directly: libs/bus does not expose how many messages
// wait behind the one being handled, which is what ends a batch here. Not thread-safe: one
// thread (the subscription's delivery thread, or the loop's) adds and flushes.
class BatchStage {
 public:
  BatchStage(int index, int hops) : next_(index < hops ? BatchSubject(index + 1) : "") {}

  // Takes one job batch in; Flush sends what was taken in since the last Flush.
  void Add(std::string_view data) {
    if (!next_.empty()) {
      forward_.append(data);  // a concatenation of batches is a batch
      return;
    }
    ForEachJob(data, [this](std::string_view reply, std::string_view body) {
      std::string& answer = answers_[std::string(reply)];
      PutInt(answer, static_cast<uint32_t>(body.size()));
      answer.append(body);
      answer_bytes_ += body.size();
    });
  }
  bool Full() const { return forward_.size() >= kMaxBatchBytes || answer_bytes_ >= kMaxBatchBytes; }

  // Publishes the forwarded batch, or (the last stage) one answer per reply subject.
  void Flush(natsConnection* nc) {
    if (!forward_.empty()) {
      natsConnection_Publish(nc, next_.c_str(), forward_.data(), static_cast<int>(forward_.size()));
      forward_.clear();
    }
    for (const auto& [reply, answer] : answers_) {
      natsConnection_Publish(nc, reply.c_str(), answer.data(), static_cast<int>(answer.size()));
    }
    answers_.clear();
    answer_bytes_ = 0;
  }

  // natsMsgHandler for the async design: a batch ends when nothing waits behind this message.
  static void OnMessage(natsConnection* nc, natsSubscription* sub, natsMsg* msg, void* closure) {
    auto* self = static_cast<BatchStage*>(closure);
    self->Add({natsMsg_GetData(msg), static_cast<size_t>(natsMsg_GetDataLength(msg))});
    natsMsg_Destroy(msg);
    int msgs = 0, bytes = 0;
    natsSubscription_GetPending(sub, &msgs, &bytes);
    if (msgs == 0 || self->Full()) self->Flush(nc);
  }

 private:
  const std::string next_;  // empty: the last stage, which answers
  std::string forward_;
  std::map<std::string, std::string> answers_;  // reply subject -> answer batch
  size_t answer_bytes_ = 0;
};

// Options shared by both batched stages: as Bus::Connect, no 1 ms coalescing delay in the
// client's flusher, and a server that may still be starting (without a callback, Connect
// blocks until it is up: every 100 ms, 300 times).
natsStatus BatchStageOptions(const std::string& url, natsOptions** opts) {
  natsStatus s = natsOptions_Create(opts);
  if (s == NATS_OK) s = natsOptions_SetURL(*opts, url.c_str());
  if (s == NATS_OK) s = natsOptions_SetSendAsap(*opts, true);
  if (s == NATS_OK) s = natsOptions_SetMaxReconnect(*opts, 300);
  if (s == NATS_OK) s = natsOptions_SetReconnectWait(*opts, 100);
  if (s == NATS_OK) s = natsOptions_SetRetryOnFailedConnect(*opts, true, nullptr, nullptr);
  return s;
}

int BatchStageMain(const std::string& url, int index, int hops, const sigset_t& signals) {
  natsOptions* opts = nullptr;
  natsConnection* nc = nullptr;
  natsSubscription* sub = nullptr;
  BatchStage stage(index, hops);
  natsStatus s = BatchStageOptions(url, &opts);
  if (s == NATS_OK) s = natsConnection_Connect(&nc, opts);
  // A subscription's default limit (65,536 messages) is far above what one front keeps queued.
  if (s == NATS_OK) {
    s = natsConnection_QueueSubscribe(&sub, nc, BatchSubject(index).c_str(), "bench",
                                      &BatchStage::OnMessage, &stage);
  }
  if (s != NATS_OK) {
    std::fprintf(stderr, "batch stage %d: %s\n", index, natsStatus_GetText(s));
    return 1;
  }
  std::printf("batch stage %d ready\n", index);
  std::fflush(stdout);
  WaitForSignal(signals);
  natsSubscription_Unsubscribe(sub);
  natsSubscription_Destroy(sub);
  natsConnection_Destroy(nc);
  natsOptions_Destroy(opts);
  return 0;
}

}  // namespace

// libnats's message filter (src/conn.h, src/natsp.h): called on the thread that parses the
// socket's bytes, for every message, before any subscription sees it; a filter that sets *msg
// to NULL keeps the message (and must destroy it).
extern "C" {
typedef void (*natsMsgFilter)(natsConnection* nc, natsMsg** msg, void* closure);
void natsConn_setFilterWithClosure(natsConnection* nc, natsMsgFilter f, void* closure);
}

namespace {

// One epoll loop for one NATS connection, as natsOptions_SetEventLoop wants it: the library
// says which of read and write to poll for; the loop calls ProcessReadEvent and
// ProcessWriteEvent. The callbacks come from the library's threads (connect, reconnect, the
// ping timer), hence the mutex.
class EpollLoop {
 public:
  EpollLoop() : epoll_(epoll_create1(EPOLL_CLOEXEC)) {}
  ~EpollLoop() { close(epoll_); }
  EpollLoop(const EpollLoop&) = delete;
  EpollLoop& operator=(const EpollLoop&) = delete;

  natsStatus Install(natsOptions* opts) {
    return natsOptions_SetEventLoop(opts, this, &EpollLoop::Attach, &EpollLoop::Read,
                                    &EpollLoop::Write, &EpollLoop::Detach);
  }

  // Runs until one of signals arrives; after_read runs after each read of the socket.
  template <typename AfterRead>
  void Run(const sigset_t& signals, AfterRead&& after_read) {
    int sfd = signalfd(-1, &signals, SFD_CLOEXEC);
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = sfd;
    epoll_ctl(epoll_, EPOLL_CTL_ADD, sfd, &ev);
    epoll_event events[4];
    for (;;) {
      int n = epoll_wait(epoll_, events, 4, -1);
      for (int i = 0; i < n; ++i) {
        if (events[i].data.fd == sfd) {
          close(sfd);
          return;
        }
        natsConnection* nc;
        {
          std::lock_guard<std::mutex> lock(mu_);
          nc = nc_;
        }
        if (nc == nullptr) continue;
        if (events[i].events & (EPOLLIN | EPOLLERR | EPOLLHUP)) {
          natsConnection_ProcessReadEvent(nc);
          after_read(nc);
        }
        if (events[i].events & EPOLLOUT) natsConnection_ProcessWriteEvent(nc);
      }
    }
  }

 private:
  static natsStatus Attach(void** user, void* loop, natsConnection* nc, natsSock fd) {
    auto* self = static_cast<EpollLoop*>(loop);
    std::lock_guard<std::mutex> lock(self->mu_);
    if (self->fd_ >= 0) epoll_ctl(self->epoll_, EPOLL_CTL_DEL, self->fd_, nullptr);  // reconnect
    self->nc_ = nc;
    self->fd_ = fd;
    self->events_ = EPOLLIN;
    epoll_event ev{};
    ev.events = self->events_;
    ev.data.fd = fd;
    *user = self;
    return epoll_ctl(self->epoll_, EPOLL_CTL_ADD, fd, &ev) == 0 ? NATS_OK : NATS_SYS_ERROR;
  }
  static natsStatus Read(void* user, bool add) {
    return static_cast<EpollLoop*>(user)->Poll(EPOLLIN, add);
  }
  static natsStatus Write(void* user, bool add) {
    return static_cast<EpollLoop*>(user)->Poll(EPOLLOUT, add);
  }
  static natsStatus Detach(void* user) {
    auto* self = static_cast<EpollLoop*>(user);
    std::lock_guard<std::mutex> lock(self->mu_);
    if (self->fd_ >= 0) epoll_ctl(self->epoll_, EPOLL_CTL_DEL, self->fd_, nullptr);
    self->fd_ = -1;
    self->nc_ = nullptr;
    return NATS_OK;
  }
  natsStatus Poll(uint32_t event, bool add) {
    std::lock_guard<std::mutex> lock(mu_);
    events_ = add ? (events_ | event) : (events_ & ~event);
    if (fd_ < 0) return NATS_OK;
    epoll_event ev{};
    ev.events = events_;
    ev.data.fd = fd_;
    return epoll_ctl(epoll_, EPOLL_CTL_MOD, fd_, &ev) == 0 ? NATS_OK : NATS_SYS_ERROR;
  }

  const int epoll_;
  std::mutex mu_;
  natsConnection* nc_ = nullptr;  // guarded by mu_
  int fd_ = -1;                   // guarded by mu_
  uint32_t events_ = 0;           // guarded by mu_
};

void TakeInline(natsConnection*, natsMsg** msg, void* closure) {
  static_cast<BatchStage*>(closure)->Add(
      {natsMsg_GetData(*msg), static_cast<size_t>(natsMsg_GetDataLength(*msg))});
  natsMsg_Destroy(*msg);
  *msg = nullptr;
}

int LoopStageMain(const std::string& url, int index, int hops, const sigset_t& signals) {
  natsOptions* opts = nullptr;
  natsConnection* nc = nullptr;
  natsSubscription* sub = nullptr;
  EpollLoop loop;
  BatchStage stage(index, hops);
  natsStatus s = BatchStageOptions(url, &opts);
  if (s == NATS_OK) s = loop.Install(opts);
  if (s == NATS_OK) s = natsConnection_Connect(&nc, opts);
  if (s == NATS_OK) natsConn_setFilterWithClosure(nc, &TakeInline, &stage);
  // The subscription tells the server what to send; the filter takes every message before it.
  if (s == NATS_OK) {
    s = natsConnection_QueueSubscribe(
        &sub, nc, BatchSubject(index).c_str(), "bench",
        [](natsConnection*, natsSubscription*, natsMsg* msg, void*) { natsMsg_Destroy(msg); },
        nullptr);
  }
  if (s != NATS_OK) {
    std::fprintf(stderr, "loop stage %d: %s\n", index, natsStatus_GetText(s));
    return 1;
  }
  std::printf("loop stage %d ready\n", index);
  std::fflush(stdout);
  loop.Run(signals, [&stage](natsConnection* c) { stage.Flush(c); });
  natsConn_setFilterWithClosure(nc, nullptr, nullptr);
  natsSubscription_Destroy(sub);
  natsConnection_Destroy(nc);
  natsOptions_Destroy(opts);
  return 0;
}

// --- Fronts ----------------------------------------------------------------------------------

// Serves handler on 127.0.0.1:port with the edge's Pistache options until SIGTERM or SIGINT.
void Serve(int port, int threads, std::shared_ptr<Http::Handler> handler, const sigset_t& signals) {
  Http::Endpoint endpoint(Address("127.0.0.1", Port(static_cast<uint16_t>(port))));
  endpoint.init(Http::Endpoint::options().threads(threads).flags(Tcp::Options::ReuseAddr));
  endpoint.setHandler(std::move(handler));
  endpoint.serveThreaded();
  std::printf("bus chain front on %d\n", port);
  std::fflush(stdout);
  WaitForSignal(signals);
  endpoint.shutdown();
}

int Front(int port, int threads, const std::string& url, const sigset_t& signals) {
  auto bus = ConnectOrDie(url, "bench-front");
  ReplyMux mux(*bus);
  if (!mux.Start().ok()) return 1;
  Serve(port, threads, std::make_shared<ChainHandler>(bus.get(), &mux), signals);
  return 0;
}

int BatchFront(int port, int threads, const std::string& url, const sigset_t& signals) {
  auto bus = ConnectOrDie(url, "bench-batch-front");
  ReplyMux mux(*bus);
  if (!mux.Start().ok()) return 1;
  auto front = std::make_shared<BatchingFront>(*bus, mux);
  Serve(port, threads, std::make_shared<BatchHandler>(front.get()), signals);
  front->Stop();
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
  if (mode == "front" && argc == 5) {
    return Front(std::atoi(argv[2]), std::atoi(argv[3]), argv[4], signals);
  }
  if (mode == "batch-front" && argc == 5) {
    return BatchFront(std::atoi(argv[2]), std::atoi(argv[3]), argv[4], signals);
  }
  if (mode == "stage" && argc == 5) {
    return Stage(argv[2], std::atoi(argv[3]), std::atoi(argv[4]), signals);
  }
  if (mode == "batch-stage" && argc == 5) {
    return BatchStageMain(argv[2], std::atoi(argv[3]), std::atoi(argv[4]), signals);
  }
  if (mode == "loop-stage" && argc == 5) {
    return LoopStageMain(argv[2], std::atoi(argv[3]), std::atoi(argv[4]), signals);
  }
  std::fprintf(stderr,
               "usage: bench_bus_chain front|batch-front PORT THREADS NATS_URL\n"
               "       bench_bus_chain stage|batch-stage|loop-stage NATS_URL I HOPS\n");
  return 2;
}
