// SettleAcks: how billing tells executors that their results are recorded.
//
// An executor sends each ExecutionResult as a request on "<inbox>.<attempt>" and keeps it, to
// send again, until it is acked. An ack is off the answer path: the edge was answered when the
// batch committed, and an executor waits 5 s before it sends a result again. So the acks of the
// batches recorded while a linger runs travel together, one v1::SettleAcks per executor inbox on
// "<inbox>.acks": under load one message per linger instead of one per settlement batch, which
// spares nats-server and every executor's reader a wake-up per batch. The first acks after a
// quiet spell leave at once, and a linger ends early once the results it acks pass a byte bound,
// since an executor keeps each result in memory until its ack arrives.
//
// No I/O of its own: messages leave through the Publish function, on the sender's thread.
// Thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "toolgate/base/batch_queue.h"
#include "toolgate/v1/toolgate.pb.h"

namespace toolgate::billing {

// The acks of some recorded results, by destination. Attempts sharing an inbox are acked in one
// v1::SettleAcks on "<inbox>.acks" (batches); a reply subject of any other form gets its own
// SettleAck (singles). An empty reply needs no ack.
struct BatchAcks {
  std::map<std::string, v1::SettleAcks> batches;
  std::vector<std::string> singles;
};
BatchAcks GroupAcks(const std::vector<std::string>& replies);

class SettleAcks {
 public:
  // Sends one message; called on the sender's thread only.
  using Publish = std::function<void(const std::string& subject, const std::string& data)>;

  // linger: how long acks gather after a message (0: none); byte_bound: the recorded results'
  // bytes past which a linger ends early. Starts the sender thread.
  SettleAcks(Publish publish, std::chrono::milliseconds linger, size_t byte_bound);
  // Stop().
  ~SettleAcks() { Stop(); }
  SettleAcks(const SettleAcks&) = delete;
  SettleAcks& operator=(const SettleAcks&) = delete;

  // Acks the results that replies name, durably recorded; result_bytes: their size. Never
  // waits. Refused (unacked, so the executors send them again) once Stop() has begun.
  void Add(std::vector<std::string> replies, size_t result_bytes);

  // Sends every ack added so far, then stops the sender thread.
  void Stop() { queue_.Stop(); }

 private:
  void Send(const std::vector<std::vector<std::string>>& batches);

  Publish publish_;
  const size_t byte_bound_;
  std::atomic<size_t> lingering_bytes_{0};
  BatchQueue<std::vector<std::string>> queue_;  // last: its thread calls Send
};

}  // namespace toolgate::billing
