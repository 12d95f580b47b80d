// Batch: the messages one unit of work produces, sent as one NATS message per subscriber.
//
// A stage that handles many jobs at once (one pipelined hold, one settlement transaction) adds
// each job's outgoing message with the destination of its subscriber, then sends: every
// destination gets one Bus::PublishBatch, so N jobs cost one NATS message per hop, not N.
//
//   bus::Batch out(bus);
//   for (auto& job : jobs) out.Add(job.exec_subject, {job.exec_subject, job.bytes, reply, tp});
//   out.Add(bus::SiblingDestination(edge_reply), {edge_reply, answer});
//   Status s = out.Send();
//
// Not thread-safe: one Batch belongs to the thread doing the unit of work.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "toolgate/bus/bus.h"

namespace toolgate::bus {

class Batch {
 public:
  // bus must outlive the Batch.
  explicit Batch(Bus& bus) : bus_(bus) {}
  // Sends whatever was added and not sent (a failure is logged): nothing added is lost on an
  // early return.
  ~Batch();
  Batch(const Batch&) = delete;
  Batch& operator=(const Batch&) = delete;

  // Queues m for the subscription that receives destination (m.subject itself for a plain
  // subscription; SiblingDestination(m.subject) for one on "<prefix>.*").
  void Add(const std::string& destination, Outgoing m);
  // Sends everything added, one PublishBatch per destination, in the order destinations were
  // first added; returns the first failure. The Batch is empty afterwards.
  Status Send();
  size_t size() const { return count_; }

 private:
  Bus& bus_;
  std::vector<std::string> order_;
  std::unordered_map<std::string, std::vector<Outgoing>> by_destination_;
  size_t count_ = 0;
};

}  // namespace toolgate::bus
