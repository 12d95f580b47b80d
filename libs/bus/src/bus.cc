#include "toolgate/bus/bus.h"

#include <chrono>
#include <thread>

#include "toolgate/base/log.h"
#include "toolgate/base/time.h"
#include "toolgate/metrics/metrics.h"
#include "toolgate/v1/toolgate.pb.h"

// libnats's message filter (declared in its private src/conn.h; the build checks the symbol):
// called on the thread that parses the socket, for every message, with no lock held; a filter
// that sets *msg to NULL has taken the message (and destroys it).
extern "C" {
typedef void (*natsMsgFilter)(natsConnection* nc, natsMsg** msg, void* closure);
void natsConn_setFilterWithClosure(natsConnection* nc, natsMsgFilter f, void* closure);
}

namespace toolgate::bus {

Bus::Sub::~Sub() {
  if (sub) natsSubscription_Destroy(sub);
}

namespace {

constexpr const char* kTraceHeader = "traceparent";
// Marks a NATS message whose data is a v1::BusBatch.
constexpr const char* kBatchHeader = "Tg-Batch";
// An envelope's bounds; a lone message over the byte bound travels alone.
constexpr size_t kMaxBatchEntries = 256;
constexpr size_t kMaxBatchBytes = 1 << 20;
// Envelope reply subjects remembered for their "no responders" notice.
constexpr size_t kEnvelopesRemembered = 4096;

metrics::Counter& Published() {
  static metrics::Counter& c =
      metrics::Registry::Global()
          .Counter("toolgate_nats_messages_published_total",
                   "Messages this process published to NATS (requests included).")
          .With({});
  return c;
}
metrics::Counter& Received() {
  static metrics::Counter& c =
      metrics::Registry::Global()
          .Counter("toolgate_nats_messages_received_total",
                   "Messages NATS delivered to this process (subscriptions and request replies).")
          .With({});
  return c;
}
metrics::Counter& BatchedEntries() {
  static metrics::Counter& c =
      metrics::Registry::Global()
          .Counter("toolgate_nats_batched_messages_total",
                   "Messages this process sent inside batch envelopes (each envelope is also "
                   "counted once in toolgate_nats_messages_published_total).")
          .With({});
  return c;
}
metrics::Counter& ReadInline() {
  static metrics::Counter& c =
      metrics::Registry::Global()
          .Counter("toolgate_nats_messages_read_inline_total",
                   "Messages handled on the thread that read them (no delivery thread hand-off).")
          .With({});
  return c;
}
metrics::Counter& CoalescedFailures() {
  static metrics::Counter& c = metrics::Registry::Global()
                                   .Counter("toolgate_nats_coalesced_failures_total",
                                            "Queued messages whose batch could not be published.")
                                   .With({});
  return c;
}
metrics::Counter& Reconnects() {
  static metrics::Counter& c = metrics::Registry::Global()
                                   .Counter("toolgate_nats_reconnects_total",
                                            "Times a NATS connection of this process came back.")
                                   .With({});
  return c;
}
metrics::Gauge& ConnectedGauge(const std::string& name) {
  return metrics::Registry::Global()
      .Gauge("toolgate_nats_connected",
             "1 while the named NATS connection is up and not draining, else 0.", {"connection"},
             64)
      .With({name});
}
void OnError(natsConnection*, natsSubscription* sub, natsStatus err, void*) {
  const char* subject = "";
  if (sub) subject = natsSubscription_GetSubject(sub);
  log::Error("nats error").Str("error", natsStatus_GetText(err)).Str("subject", subject);
}

Status FromNats(natsStatus s, std::string_view what) {
  if (s == NATS_OK) return Status::Ok();
  std::string msg = std::string(what) + ": " + natsStatus_GetText(s);
  if (s == NATS_TIMEOUT) return Status::Timeout(msg);
  return Status::Unavailable(msg);
}

}  // namespace

std::string SiblingDestination(std::string_view subject) {
  size_t dot = subject.rfind('.');
  if (dot == std::string_view::npos) return std::string(subject);
  std::string out(subject.substr(0, dot));
  out += "._b";
  return out;
}

std::string HealthSubject(std::string_view service) {
  return "tg.health." + std::string(service);
}

bool SubjectMatches(std::string_view pattern, std::string_view subject) {
  for (;;) {
    size_t pd = pattern.find('.');
    size_t sd = subject.find('.');
    std::string_view pt = pattern.substr(0, pd);
    std::string_view st = subject.substr(0, sd);
    if (st.empty()) return false;
    if (pt == ">") return true;
    if (pt != "*" && pt != st) return false;
    if (pd == std::string_view::npos || sd == std::string_view::npos) {
      return pd == std::string_view::npos && sd == std::string_view::npos;
    }
    pattern.remove_prefix(pd + 1);
    subject.remove_prefix(sd + 1);
  }
}

const metrics::Gauge& ConnectionGauge(const std::string& name) {
  return ConnectedGauge(name);
}

void Bus::OnDisconnected(natsConnection*, void* closure) {
  auto* bus = static_cast<Bus*>(closure);
  bus->connected_->Set(0);
  if (!bus->closing_.load()) log::Warn("nats disconnected; reconnecting");
}

void Bus::OnReconnected(natsConnection*, void* closure) {
  auto* bus = static_cast<Bus*>(closure);
  if (!bus->closing_.load()) bus->connected_->Set(1);
  bus->reconnects_.fetch_add(1, std::memory_order_release);
  Reconnects().Inc();
  log::Info("nats reconnected");
}

Result<std::unique_ptr<Bus>> Bus::Connect(const BusOptions& options) {
  Reconnects();  // registered at 0, so that a scrape shows it before the first reconnection
  natsOptions* opts = nullptr;
  if (natsOptions_Create(&opts) != NATS_OK) return Status::Internal("natsOptions_Create failed");
  std::unique_ptr<natsOptions, decltype(&natsOptions_Destroy)> guard(opts, natsOptions_Destroy);

  // A comma-separated URL list becomes the server pool.
  std::vector<std::string> urls;
  size_t start = 0;
  while (start <= options.url.size()) {
    size_t comma = options.url.find(',', start);
    if (comma == std::string::npos) comma = options.url.size();
    if (comma > start) urls.push_back(options.url.substr(start, comma - start));
    start = comma + 1;
  }
  std::vector<const char*> servers;
  for (auto& u : urls) servers.push_back(u.c_str());
  natsStatus s = natsOptions_SetServers(opts, servers.data(), static_cast<int>(servers.size()));
  if (s == NATS_OK && !options.name.empty()) s = natsOptions_SetName(opts, options.name.c_str());
  if (s == NATS_OK) s = natsOptions_SetMaxReconnect(opts, -1);
  if (s == NATS_OK) s = natsOptions_SetReconnectWait(opts, 100);
  if (s == NATS_OK) s = natsOptions_SetReconnectJitter(opts, 50, 50);
  if (s == NATS_OK) s = natsOptions_SetSendAsap(opts, true);
  if (s == NATS_OK) s = natsOptions_SetPingInterval(opts, options.ping_interval_ms);
  if (s == NATS_OK) s = natsOptions_SetMaxPingsOut(opts, options.max_pings_out);
  if (s == NATS_OK) s = natsOptions_SetReconnectBufSize(opts, 64 * 1024 * 1024);
  if (s == NATS_OK && !options.user.empty()) {
    s = natsOptions_SetUserInfo(opts, options.user.c_str(), options.password.c_str());
  }
  if (s == NATS_OK && options.inbox_prefix != "_INBOX") {
    s = natsOptions_SetCustomInboxPrefix(opts, options.inbox_prefix.c_str());
  }
  // The Bus exists before the connection so the callbacks can see whether it is closing.
  std::unique_ptr<Bus> bus(new Bus());
  bus->inbox_prefix_ = options.inbox_prefix;
  bus->connected_ = &ConnectedGauge(options.name);
  if (s == NATS_OK) s = natsOptions_SetDisconnectedCB(opts, OnDisconnected, bus.get());
  if (s == NATS_OK) s = natsOptions_SetReconnectedCB(opts, OnReconnected, bus.get());
  if (s == NATS_OK) s = natsOptions_SetErrorHandler(opts, OnError, nullptr);
  if (s != NATS_OK) return FromNats(s, "nats options");

  int64_t deadline = MonotonicUs() + int64_t{options.connect_timeout_ms} * 1000;
  for (;;) {
    natsConnection* nc = nullptr;
    s = natsConnection_Connect(&nc, opts);
    if (s == NATS_OK) {
      bus->nc_ = nc;
      bus->connected_->Set(1);
      natsConn_setFilterWithClosure(nc, &Bus::OnReaderThread, bus.get());
      return bus;
    }
    // Wrong credentials will not become right by retrying.
    if (s == NATS_CONNECTION_AUTH_FAILED || s == NATS_NOT_PERMITTED || MonotonicUs() > deadline) {
      return FromNats(s, "connect to " + options.url);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // server not up yet
  }
}

Bus::~Bus() {
  closing_ = true;
  draining_ = true;
  connected_->Set(0);
  // Closing joins the library's reader thread, so no reader-thread handler is still running
  // with a subscription about to be destroyed.
  natsConnection_Close(nc_);
  {
    std::lock_guard<std::mutex> lock(mu_);
    subs_.clear();
  }
  natsConnection_Destroy(nc_);
  std::lock_guard<std::mutex> lock(graveyard_mu_);
  for (natsMsg* m : graveyard_) natsMsg_Destroy(m);
  graveyard_.clear();
}

void Bus::Bury(natsMsg* msg) {
  const size_t bytes = static_cast<size_t>(natsMsg_GetDataLength(msg));
  if (bytes >= kGraveyardBytes) {
    natsMsg_Destroy(msg);
    return;
  }
  std::vector<natsMsg*> group;
  {
    std::lock_guard<std::mutex> lock(graveyard_mu_);
    graveyard_.push_back(msg);
    graveyard_bytes_ += bytes;
    if (graveyard_.size() < kGraveyardMessages && graveyard_bytes_ < kGraveyardBytes) return;
    group.swap(graveyard_);
    graveyard_bytes_ = 0;
  }
  for (natsMsg* m : group) natsMsg_Destroy(m);
}

Status Bus::Publish(std::string_view subject, std::string_view data, std::string_view reply,
                    std::string_view traceparent) {
  std::string subj(subject), rep(reply);
  natsMsg* msg = nullptr;
  natsStatus s = natsMsg_Create(&msg, subj.c_str(), rep.empty() ? nullptr : rep.c_str(),
                                data.data(), static_cast<int>(data.size()));
  if (s == NATS_OK && !traceparent.empty()) {
    s = natsMsgHeader_Set(msg, kTraceHeader, std::string(traceparent).c_str());
  }
  if (s == NATS_OK) s = natsConnection_PublishMsg(nc_, msg);
  if (msg != nullptr) Bury(msg);
  if (s == NATS_OK) Published().Inc();
  return FromNats(s, "publish " + subj);
}

Status Bus::PublishBatch(std::string_view destination, std::vector<Outgoing> messages) {
  Status first = Status::Ok();
  auto begin = messages.begin();
  while (begin != messages.end()) {
    auto end = begin;
    size_t bytes = 0;
    while (end != messages.end() && end - begin < static_cast<ptrdiff_t>(kMaxBatchEntries) &&
           (end == begin || bytes + end->data.size() <= kMaxBatchBytes)) {
      bytes += end->data.size();
      ++end;
    }
    Status s = end - begin == 1
                   ? Publish(begin->subject, begin->data, begin->reply, begin->traceparent)
                   : PublishEnvelope(destination, begin, end);
    if (!s.ok() && first.ok()) first = s;
    begin = end;
  }
  return first;
}

Status Bus::PublishEnvelope(std::string_view destination, std::vector<Outgoing>::iterator first,
                            std::vector<Outgoing>::iterator last) {
  v1::BusBatch batch;
  // The envelope gets a reply subject only when every entry's reply lives under one prefix: the
  // server's "no responders" notice then lands on a subscription that also receives the
  // entries' replies, and is fanned out to them (FanOutNoResponders).
  std::string reply_prefix;
  bool shared_prefix = true;
  std::vector<std::string> replies;
  for (auto it = first; it != last; ++it) {
    v1::BusEntry* e = batch.add_entries();
    e->set_subject(std::move(it->subject));
    e->set_data(std::move(it->data));
    e->set_traceparent(std::move(it->traceparent));
    if (shared_prefix) {
      size_t dot = it->reply.rfind('.');
      std::string_view prefix = dot == std::string::npos
                                    ? std::string_view()
                                    : std::string_view(it->reply).substr(0, dot);
      if (prefix.empty() || (it != first && prefix != reply_prefix)) {
        shared_prefix = false;
      } else {
        reply_prefix = prefix;
        replies.push_back(it->reply);
      }
    }
    e->set_reply(std::move(it->reply));
  }
  std::string reply;
  if (shared_prefix) {
    std::lock_guard<std::mutex> lock(envelopes_mu_);
    reply = reply_prefix + "._b" + std::to_string(next_envelope_++);
    envelope_order_.push_back(reply);
    envelope_replies_[reply] = std::move(replies);
    while (envelope_order_.size() > kEnvelopesRemembered) {
      envelope_replies_.erase(envelope_order_.front());
      envelope_order_.pop_front();
    }
  }
  const std::string data = batch.SerializeAsString();
  const std::string subj(destination);
  natsMsg* msg = nullptr;
  natsStatus s = natsMsg_Create(&msg, subj.c_str(), reply.empty() ? nullptr : reply.c_str(),
                                data.data(), static_cast<int>(data.size()));
  if (s == NATS_OK) s = natsMsgHeader_Set(msg, kBatchHeader, "1");
  if (s == NATS_OK) s = natsConnection_PublishMsg(nc_, msg);
  if (msg != nullptr) Bury(msg);
  if (s == NATS_OK) {
    Published().Inc();
    BatchedEntries().Inc(static_cast<uint64_t>(batch.entries_size()));
  }
  return FromNats(s, "publish batch " + subj);
}

Status Bus::PublishCoalesced(std::string destination, Outgoing m) {
  {
    std::lock_guard<std::mutex> lock(coalesce_mu_);
    if (coalescing_ || coalesce_held_) {
      coalesce_queue_.emplace_back(std::move(destination), std::move(m));
      return Status::Ok();
    }
    coalescing_ = true;
  }
  Status sent = Publish(m.subject, m.data, m.reply, m.traceparent);
  SendQueuedCoalesced();
  return sent;
}

void Bus::HoldCoalesced() {
  std::lock_guard<std::mutex> lock(coalesce_mu_);
  coalesce_held_ = true;
}

void Bus::SendCoalesced() {
  {
    std::lock_guard<std::mutex> lock(coalesce_mu_);
    coalesce_held_ = false;
    if (coalescing_ || coalesce_queue_.empty()) return;  // a writer sends it, or nothing to send
    coalescing_ = true;
  }
  SendQueuedCoalesced();
}

void Bus::SendQueuedCoalesced() {
  for (;;) {
    std::vector<std::pair<std::string, Outgoing>> queued;
    {
      std::lock_guard<std::mutex> lock(coalesce_mu_);
      if (coalesce_queue_.empty()) {
        coalescing_ = false;
        return;
      }
      queued.swap(coalesce_queue_);
    }
    // One batch per destination, each in the order its messages queued.
    std::unordered_map<std::string, std::vector<Outgoing>> by_destination;
    std::vector<std::string> order;
    for (auto& [dest, out] : queued) {
      auto [it, fresh] = by_destination.try_emplace(dest);
      if (fresh) order.push_back(dest);
      it->second.push_back(std::move(out));
    }
    for (const std::string& dest : order) {
      std::vector<Outgoing>& messages = by_destination[dest];
      const size_t count = messages.size();
      std::vector<std::function<void(const Status&)>> unsent;
      for (Outgoing& m : messages) {
        if (m.unsent) unsent.push_back(std::move(m.unsent));
      }
      Status s = PublishBatch(dest, std::move(messages));
      if (!s.ok()) {
        CoalescedFailures().Inc(count);
        log::Error("coalesced messages not published")
            .Str("destination", dest)
            .Int("count", static_cast<int64_t>(count))
            .Str("error", s.ToString());
        for (auto& report : unsent) report(s);
      }
    }
  }
}

Result<Message> Bus::Request(std::string_view subject, std::string_view data, int timeout_ms,
                             std::string_view traceparent) {
  std::string subj(subject);
  natsMsg* msg = nullptr;
  natsStatus s =
      natsMsg_Create(&msg, subj.c_str(), nullptr, data.data(), static_cast<int>(data.size()));
  if (s == NATS_OK && !traceparent.empty()) {
    s = natsMsgHeader_Set(msg, kTraceHeader, std::string(traceparent).c_str());
  }
  natsMsg* reply = nullptr;
  if (s == NATS_OK) {
    Published().Inc();  // sent, whatever comes back
    s = natsConnection_RequestMsg(&reply, nc_, msg, timeout_ms);
  }
  natsMsg_Destroy(msg);
  if (s == NATS_NO_RESPONDERS) return Status::Unavailable("no responders on " + subj);
  if (s != NATS_OK) return FromNats(s, "request " + subj);
  Received().Inc();
  Message out = ToMessage(reply);
  natsMsg_Destroy(reply);
  return out;
}

Message Bus::ToMessage(natsMsg* msg) {
  Message m;
  m.subject = natsMsg_GetSubject(msg);
  if (const char* r = natsMsg_GetReply(msg)) m.reply = r;
  if (const char* d = natsMsg_GetData(msg)) m.data.assign(d, natsMsg_GetDataLength(msg));
  const char* tp = nullptr;
  if (natsMsgHeader_Get(msg, kTraceHeader, &tp) == NATS_OK && tp) m.traceparent = tp;
  m.no_responders = natsMsg_IsNoResponders(msg);
  return m;
}

void Bus::OnMessage(natsConnection*, natsSubscription*, natsMsg* msg, void* closure) {
  auto* sub = static_cast<Sub*>(closure);
  Received().Inc();
  const char* batch = nullptr;
  if (natsMsgHeader_Get(msg, kBatchHeader, &batch) == NATS_OK) {
    sub->bus->DeliverBatch(*sub, msg);
    sub->bus->Bury(msg);
    return;
  }
  Message m = ToMessage(msg);
  sub->bus->Bury(msg);
  if (m.no_responders && sub->bus->FanOutNoResponders(*sub, m.subject)) return;
  sub->handler(std::move(m));
}

void Bus::OnReaderThread(natsConnection* nc, natsMsg** msg, void* closure) {
  auto* bus = static_cast<Bus*>(closure);
  if (bus->draining_.load(std::memory_order_relaxed)) return;
  const char* subject = natsMsg_GetSubject(*msg);
  Sub* target = nullptr;
  {
    std::lock_guard<std::mutex> lock(bus->mu_);
    for (const auto& sub : bus->subs_) {
      if (!SubjectMatches(sub->pattern, subject)) continue;
      if (target != nullptr) return;  // the server sent one copy per subscription: let it route
      target = sub.get();
    }
  }
  if (target == nullptr || target->delivery != Delivery::kReaderThread) return;
  ReadInline().Inc();
  natsMsg* taken = *msg;
  *msg = nullptr;
  OnMessage(nc, target->sub, taken, target);  // destroys taken
}

void Bus::DeliverBatch(Sub& sub, natsMsg* msg) {
  v1::BusBatch batch;
  const char* data = natsMsg_GetData(msg);
  if (!batch.ParseFromArray(data, natsMsg_GetDataLength(msg))) {
    log::Error("malformed batch dropped").Str("subject", natsMsg_GetSubject(msg));
    return;
  }
  for (v1::BusEntry& e : *batch.mutable_entries()) {
    if (!SubjectMatches(sub.pattern, e.subject())) {
      log::Error("batch entry outside its subscription dropped")
          .Str("subscription", sub.pattern)
          .Str("subject", e.subject());
      continue;
    }
    Message m;
    m.subject = std::move(*e.mutable_subject());
    m.reply = std::move(*e.mutable_reply());
    m.data = std::move(*e.mutable_data());
    m.traceparent = std::move(*e.mutable_traceparent());
    sub.handler(std::move(m));
  }
}

bool Bus::FanOutNoResponders(Sub& sub, const std::string& subject) {
  std::vector<std::string> replies;
  {
    std::lock_guard<std::mutex> lock(envelopes_mu_);
    auto it = envelope_replies_.find(subject);
    if (it == envelope_replies_.end()) return false;
    replies = std::move(it->second);
    envelope_replies_.erase(it);  // its envelope_order_ entry goes when it reaches the front
  }
  for (std::string& reply : replies) {
    Message m;
    m.subject = std::move(reply);
    m.no_responders = true;
    sub.handler(std::move(m));
  }
  return true;
}

Status Bus::Subscribe(const std::string& subject, const std::string& queue, Handler handler,
                      Delivery delivery) {
  auto sub = std::make_unique<Sub>();
  sub->bus = this;
  sub->delivery = delivery;
  sub->pattern = subject;
  sub->handler = std::move(handler);
  natsStatus s = queue.empty() ? natsConnection_Subscribe(&sub->sub, nc_, subject.c_str(),
                                                          OnMessage, sub.get())
                               : natsConnection_QueueSubscribe(&sub->sub, nc_, subject.c_str(),
                                                               queue.c_str(), OnMessage, sub.get());
  // A burst must queue, not be dropped as a slow consumer.
  if (s == NATS_OK) s = natsSubscription_SetPendingLimits(sub->sub, 1 << 20, 1 << 30);
  if (s != NATS_OK) return FromNats(s, "subscribe " + subject);
  std::lock_guard<std::mutex> lock(mu_);
  subs_.push_back(std::move(sub));
  return Status::Ok();
}

std::string Bus::NewInbox() {
  natsInbox* inbox = nullptr;
  natsInbox_Create(&inbox);
  std::string out = inbox;  // "_INBOX.<nuid>"
  natsInbox_Destroy(inbox);
  return inbox_prefix_ + out.substr(out.find('.'));
}

Status Bus::Flush(int timeout_ms) {
  natsStatus s = natsConnection_FlushTimeout(nc_, timeout_ms);
  if (s == NATS_OK) return Status::Ok();
  if (s == NATS_TIMEOUT) return Status::Timeout("the NATS server did not answer the flush in time");
  return Status::Unavailable(std::string("cannot flush to NATS: ") + natsStatus_GetText(s));
}

void Bus::Drain(int timeout_ms) {
  // Draining is the start of shutdown: readiness turns false before the work stops. From here
  // every message takes the library's path, which knows how to drain a subscription.
  connected_->Set(0);
  draining_ = true;
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& sub : subs_) natsSubscription_Drain(sub->sub);
  for (auto& sub : subs_) natsSubscription_WaitForDrainCompletion(sub->sub, timeout_ms);
  natsConnection_FlushTimeout(nc_, timeout_ms);
}

bool Bus::connected() const {
  return natsConnection_Status(nc_) == NATS_CONN_STATUS_CONNECTED;
}

}  // namespace toolgate::bus
