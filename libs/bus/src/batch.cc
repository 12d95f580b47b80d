#include "toolgate/bus/batch.h"

#include "toolgate/base/log.h"

namespace toolgate::bus {

Batch::~Batch() {
  if (count_ == 0) return;
  Status s = Send();
  if (!s.ok()) log::Error("batch not published").Str("error", s.ToString());
}

void Batch::Add(const std::string& destination, Outgoing m) {
  auto [it, fresh] = by_destination_.try_emplace(destination);
  if (fresh) order_.push_back(destination);
  it->second.push_back(std::move(m));
  ++count_;
}

Status Batch::Send() {
  Status first = Status::Ok();
  for (const std::string& destination : order_) {
    Status s = bus_.PublishBatch(destination, std::move(by_destination_[destination]));
    if (!s.ok() && first.ok()) first = s;
  }
  order_.clear();
  by_destination_.clear();
  count_ = 0;
  return first;
}

}  // namespace toolgate::bus
