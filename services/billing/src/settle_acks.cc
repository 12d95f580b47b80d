#include "toolgate/billing/settle_acks.h"

#include <utility>

#include "toolgate/metrics/metrics.h"

namespace toolgate::billing {

BatchAcks GroupAcks(const std::vector<std::string>& replies) {
  BatchAcks out;
  for (const std::string& reply : replies) {
    size_t dot = reply.rfind('.');
    if (reply.empty()) continue;
    if (dot == std::string::npos || dot == 0 || dot + 1 == reply.size()) {
      out.singles.push_back(reply);
      continue;
    }
    out.batches[reply.substr(0, dot + 1) + "acks"].add_attempts(reply.substr(dot + 1));
  }
  return out;
}

SettleAcks::SettleAcks(Publish publish, std::chrono::milliseconds linger, size_t byte_bound)
    : publish_(std::move(publish)),
      byte_bound_(byte_bound),
      queue_(
          4096,
          [this](std::vector<std::vector<std::string>> batches) {
            lingering_bytes_.store(0, std::memory_order_relaxed);
            Send(batches);
          },
          /*max_queue=*/0, linger) {}

void SettleAcks::Add(std::vector<std::string> replies, size_t result_bytes) {
  if (replies.empty()) return;
  if (!queue_.Push(std::move(replies))) return;
  if (lingering_bytes_.fetch_add(result_bytes, std::memory_order_relaxed) + result_bytes >=
      byte_bound_) {
    queue_.Hurry();
  }
}

void SettleAcks::Send(const std::vector<std::vector<std::string>>& batches) {
  static auto& messages = metrics::Registry::Global()
                              .Counter("toolgate_billing_settle_ack_messages_total",
                                       "Messages that acked executors' recorded results.")
                              .With({});
  static auto& acked =
      metrics::Registry::Global()
          .Counter("toolgate_billing_settle_acks_total", "Executors' results acked as recorded.")
          .With({});
  std::vector<std::string> replies;
  for (const auto& batch : batches) replies.insert(replies.end(), batch.begin(), batch.end());
  BatchAcks acks = GroupAcks(replies);
  messages.Inc(acks.batches.size() + acks.singles.size());
  acked.Inc(replies.size());
  for (const auto& [subject, attempts] : acks.batches) {
    publish_(subject, attempts.SerializeAsString());
  }
  v1::SettleAck ok;
  ok.set_ok(true);
  const std::string single = ok.SerializeAsString();
  for (const std::string& reply : acks.singles) publish_(reply, single);
}

}  // namespace toolgate::billing
