#include "reply_mux.h"

#include <charconv>

#include "toolgate/base/time.h"

namespace toolgate::edge {

ReplyMux::ReplyMux(bus::Bus& bus) : bus_(bus), prefix_(bus.NewInbox() + ".") {}

ReplyMux::~ReplyMux() {
  std::unordered_map<uint64_t, Pending> left;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    left.swap(pending_);
    deadlines_.clear();
  }
  cv_.notify_all();
  if (timer_.joinable()) timer_.join();
  for (auto& [id, p] : left) p.callback(Status::Unavailable("edge shutting down"));
}

Status ReplyMux::Start() {
  timer_ = std::thread([this] { TimerLoop(); });
  // Answers are routed on the thread that reads them: OnReply only finds the waiting callback.
  return bus_.Subscribe(
      prefix_ + "*", "", [this](bus::Message&& m) { OnReply(std::move(m)); },
      bus::Delivery::kReaderThread);
}

std::string ReplyMux::Expect(int timeout_ms, Callback callback, Interim interim) {
  int64_t deadline = MonotonicUs() + int64_t{timeout_ms} * 1000;
  uint64_t id;
  bool earliest;
  {
    std::lock_guard<std::mutex> lock(mu_);
    id = next_id_++;
    pending_.emplace(id, Pending{std::move(callback), std::move(interim), deadline});
    auto it = deadlines_.emplace(deadline, id);
    earliest = it == deadlines_.begin();
  }
  if (earliest) cv_.notify_one();
  return prefix_ + std::to_string(id);
}

ReplyMux::Callback ReplyMux::Take(uint64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = pending_.find(id);
  if (it == pending_.end()) return {};
  Callback cb = std::move(it->second.callback);
  auto range = deadlines_.equal_range(it->second.deadline_us);
  for (auto d = range.first; d != range.second; ++d) {
    if (d->second == id) {
      deadlines_.erase(d);
      break;
    }
  }
  pending_.erase(it);
  return cb;
}

bool ReplyMux::Extend(uint64_t id, int timeout_ms) {
  int64_t deadline = MonotonicUs() + int64_t{timeout_ms} * 1000;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = pending_.find(id);
    if (it == pending_.end()) return false;
    auto range = deadlines_.equal_range(it->second.deadline_us);
    for (auto d = range.first; d != range.second; ++d) {
      if (d->second == id) {
        deadlines_.erase(d);
        break;
      }
    }
    it->second.deadline_us = deadline;
    deadlines_.emplace(deadline, id);
  }
  cv_.notify_one();
  return true;
}

void ReplyMux::Cancel(const std::string& reply_subject, const Status& status) {
  uint64_t id = 0;
  std::string_view tail = std::string_view(reply_subject).substr(prefix_.size());
  std::from_chars(tail.data(), tail.data() + tail.size(), id);
  if (Callback cb = Take(id)) cb(status);
}

void ReplyMux::Request(const std::string& subject, const std::string& data,
                       const std::string& traceparent, int timeout_ms, Callback callback) {
  std::string reply = Expect(timeout_ms, std::move(callback));
  Status s = bus_.Publish(subject, data, reply, traceparent);
  if (!s.ok()) Cancel(reply, s);
}

bool ReplyMux::Owns(const std::string& reply_subject) const {
  return reply_subject.size() > prefix_.size() && reply_subject.starts_with(prefix_);
}

void ReplyMux::Deliver(const std::string& reply_subject, std::string data) {
  if (!Owns(reply_subject)) return;
  bus::Message m;
  m.subject = reply_subject;
  m.data = std::move(data);
  OnReply(std::move(m));
}

void ReplyMux::OnReply(bus::Message&& m) {
  if (m.subject.size() <= prefix_.size()) return;
  uint64_t id = 0;
  const char* begin = m.subject.data() + prefix_.size();
  auto [ptr, ec] = std::from_chars(begin, m.subject.data() + m.subject.size(), id);
  if (ec != std::errc()) return;
  if (!m.no_responders) {
    Interim interim;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = pending_.find(id);
      if (it == pending_.end()) return;  // late answer after a timeout: dropped
      interim = it->second.interim;
    }
    // An answer that overtakes its interim notice simply completes the request; the notice then
    // finds nothing pending and is dropped.
    if (interim) {
      if (int extend_ms = interim(m); extend_ms > 0) {
        Extend(id, extend_ms);
        return;
      }
    }
  }
  Callback cb = Take(id);
  if (!cb) return;  // late answer after a timeout: dropped
  if (m.no_responders) {
    cb(Status::Unavailable("no responders"));
  } else {
    cb(std::move(m));
  }
}

void ReplyMux::TimerLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    if (deadlines_.empty()) {
      cv_.wait(lock);
      continue;
    }
    int64_t now = MonotonicUs();
    auto first = deadlines_.begin();
    if (first->first > now) {
      cv_.wait_for(lock, std::chrono::microseconds(first->first - now));
      continue;
    }
    uint64_t id = first->second;
    deadlines_.erase(first);
    auto it = pending_.find(id);
    Callback cb = std::move(it->second.callback);
    pending_.erase(it);
    lock.unlock();
    cb(Status::Timeout("no reply in time"));
    lock.lock();
  }
}

}  // namespace toolgate::edge
