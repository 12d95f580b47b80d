#include "toolgate/executor/settler.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdlib>

#include "toolgate/base/log.h"
#include "toolgate/base/time.h"

namespace toolgate::executor {

uint64_t PendingSettlements::Add(Attempt attempt, int64_t now_ms) {
  uint64_t id = next_id_++;
  attempt.id = id;
  items_.emplace(id, Item{std::move(attempt), now_ms + timing_.ack_timeout_ms,
                          timing_.first_backoff_ms, true});
  return id;
}

bool PendingSettlements::Ack(uint64_t id) {
  return items_.erase(id) != 0;
}

size_t PendingSettlements::Ack(const v1::SettleAcks& acks) {
  size_t acked = 0;
  for (const std::string& attempt : acks.attempts()) {
    uint64_t id = 0;
    auto [end, ec] = std::from_chars(attempt.data(), attempt.data() + attempt.size(), id);
    if (ec == std::errc() && end == attempt.data() + attempt.size() && Ack(id)) ++acked;
  }
  return acked;
}

bool PendingSettlements::Fail(uint64_t id, int64_t now_ms) {
  auto it = items_.find(id);
  if (it == items_.end() || !it->second.in_flight) return false;
  Item& item = it->second;
  item.in_flight = false;
  item.due_ms = now_ms + item.backoff_ms;
  item.backoff_ms = std::min(item.backoff_ms * 2, timing_.max_backoff_ms);
  return true;
}

std::vector<PendingSettlements::Attempt> PendingSettlements::TakeDue(int64_t now_ms) {
  std::vector<Attempt> due;
  for (auto& [id, item] : items_) {
    if (item.due_ms > now_ms) continue;
    item.in_flight = true;
    item.due_ms = now_ms + timing_.ack_timeout_ms;
    due.push_back(item.attempt);
  }
  return due;
}

std::optional<int64_t> PendingSettlements::next_due_ms() const {
  std::optional<int64_t> next;
  for (const auto& [id, item] : items_) {
    if (!next || item.due_ms < *next) next = item.due_ms;
  }
  return next;
}

std::vector<std::string> PendingSettlements::execution_ids() const {
  std::vector<std::string> out;
  for (const auto& [id, item] : items_) out.push_back(item.attempt.execution_id);
  return out;
}

std::string PendingSettlements::execution_id(uint64_t id) const {
  auto it = items_.find(id);
  return it == items_.end() ? std::string() : it->second.attempt.execution_id;
}

namespace {
int64_t NowMs() {
  return MonotonicUs() / 1000;
}
}  // namespace

Result<std::unique_ptr<Settler>> Settler::Start(const bus::BusOptions& options,
                                                SettleTiming timing) {
  auto bus = bus::Bus::Connect(options);
  if (!bus.ok()) return bus.status();
  std::unique_ptr<Settler> settler(new Settler(std::move(bus).value(), timing));
  Settler* self = settler.get();
  // Acks only update the pending table: handled on the thread that reads them.
  Status s = self->bus_->Subscribe(
      self->prefix_ + "*", "", [self](bus::Message&& m) { self->OnReply(std::move(m)); },
      bus::Delivery::kReaderThread);
  if (!s.ok()) return s;
  return settler;
}

Settler::Settler(std::unique_ptr<bus::Bus> bus, SettleTiming timing)
    : bus_(std::move(bus)),
      prefix_(bus_->NewInbox() + "."),
      timing_(timing),
      pending_(timing),
      held_(timing.hold_us) {
  retry_thread_ = std::thread([this] { Loop(); });
}

Settler::~Settler() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  wake_cv_.notify_one();
  retry_thread_.join();
  Send(held_.Take());  // no other thread is left to take them
  bus_->Drain(1000);   // no reply callback runs after this
  for (const std::string& id : pending_.execution_ids()) {
    log::Error("abandoned a result billing never acknowledged").Str("execution_id", id);
  }
}

void Settler::Settle(const std::string& subject, const v1::ExecutionResult& result,
                     const std::string& traceparent) {
  Send(Add(subject, result, traceparent, /*hold=*/false));
}

void Settler::SettleSoon(const std::string& subject, const v1::ExecutionResult& result,
                         const std::string& traceparent) {
  std::vector<PendingSettlements::Attempt> now = Add(subject, result, traceparent, /*hold=*/true);
  if (!now.empty()) Send(std::move(now));
}

std::vector<PendingSettlements::Attempt> Settler::Add(const std::string& subject,
                                                      const v1::ExecutionResult& result,
                                                      const std::string& traceparent, bool hold) {
  PendingSettlements::Attempt attempt{0, subject, result.SerializeAsString(), traceparent,
                                      result.job().execution_id()};
  std::lock_guard<std::mutex> lock(mu_);
  const int64_t now_us = MonotonicUs();
  attempt.id = pending_.Add(attempt, now_us / 1000);
  int64_t look_by_us = now_us + timing_.ack_timeout_ms * 1000;
  bool send_held = !hold;
  if (hold) {
    send_held = held_.Hold(std::move(attempt), now_us);
    held_since_look_ = true;
    look_by_us = now_us + timing_.hold_us;
  }
  // The retry thread sleeps past look_by only when it was not looking every hold_us
  // already.
  if (look_by_us < wake_at_us_) wake_cv_.notify_one();
  if (!send_held) return {};
  std::vector<PendingSettlements::Attempt> out = held_.Take();
  if (!hold) out.push_back(std::move(attempt));
  return out;
}

void Settler::Send(std::vector<PendingSettlements::Attempt> attempts) {
  if (attempts.empty()) return;
  // Results go to tg.billing.settle.<id>, which billing receives as tg.billing.settle.*: many
  // travel as one envelope on its sibling subject.
  std::string destination = bus::SiblingDestination(attempts.front().subject);
  std::vector<bus::Outgoing> messages;
  messages.reserve(attempts.size());
  for (const PendingSettlements::Attempt& a : attempts) {
    messages.emplace_back(a.subject, a.payload, prefix_ + std::to_string(a.id), a.traceparent);
  }
  Status s = bus_->PublishBatch(destination, std::move(messages));
  if (s.ok()) return;
  // Which entries left is unknown when one of several messages failed: each is retried after
  // its backoff (billing acks a duplicate like the first).
  for (const PendingSettlements::Attempt& a : attempts) Failed(a.id, s.ToString());
}

void Settler::OnReply(bus::Message&& m) {
  if (std::string_view(m.subject).substr(prefix_.size()) == kBatchAckToken) {
    v1::SettleAcks acks;
    if (!acks.ParseFromString(m.data)) {
      log::Warn("malformed settle acks dropped");  // the attempts time out and are sent again
      return;
    }
    std::lock_guard<std::mutex> lock(mu_);
    if (pending_.Ack(acks) > 0 && pending_.size() == 0) drained_cv_.notify_all();
    return;
  }
  uint64_t id = std::strtoull(m.subject.c_str() + prefix_.size(), nullptr, 10);
  if (m.no_responders) {
    Failed(id, "no billing replica is running");
    return;
  }
  v1::SettleAck ack;
  if (!ack.ParseFromString(m.data) || !ack.ok()) {
    Failed(id, "billing did not acknowledge the result");
    return;
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (pending_.Ack(id) && pending_.size() == 0) drained_cv_.notify_all();
}

void Settler::Failed(uint64_t id, const std::string& why) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!pending_.Fail(id, NowMs())) return;  // already acked, or an older attempt's answer
  std::string execution_id = pending_.execution_id(id);
  log::Warn("settle attempt failed; retrying").Str("execution_id", execution_id).Str("error", why);
  wake_cv_.notify_one();
}

void Settler::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    const int64_t now_us = MonotonicUs();
    const int64_t now = now_us / 1000;
    std::vector<PendingSettlements::Attempt> due = pending_.TakeDue(now);
    if (held_.Due(now_us)) {
      // Held past hold_us: no result finished to take them along. Their pending entries
      // are in flight already; TakeDue did not return them unless their ack timed out too.
      for (PendingSettlements::Attempt& a : held_.Take()) {
        bool retried =
            std::any_of(due.begin(), due.end(),
                        [&](const PendingSettlements::Attempt& d) { return d.id == a.id; });
        if (!retried) due.push_back(std::move(a));
      }
    }
    if (!due.empty()) {
      lock.unlock();
      Send(std::move(due));
      lock.lock();
      continue;
    }
    // With nothing pending it looks again one ack timeout from now anyway: a result added
    // meanwhile is due no earlier than that, so Settle need not wake this thread for it (at low
    // load that was one wake-up per call). While results are being held it looks every
    // hold_us, so SettleSoon need not wake it either.
    wake_at_us_ = pending_.next_due_ms().value_or(now + timing_.ack_timeout_ms) * 1000;
    if (held_since_look_ || held_.size() > 0) {
      wake_at_us_ = std::min(wake_at_us_, held_.due_us().value_or(now_us + timing_.hold_us));
    }
    held_since_look_ = false;
    wake_cv_.wait_for(lock, std::chrono::microseconds(std::max<int64_t>(0, wake_at_us_ - now_us)));
    wake_at_us_ = INT64_MAX;
  }
}

size_t Settler::Drain(int timeout_ms) {
  std::unique_lock<std::mutex> lock(mu_);
  drained_cv_.wait_for(lock, std::chrono::milliseconds(timeout_ms),
                       [this] { return pending_.size() == 0; });
  return pending_.size();
}

}  // namespace toolgate::executor
