// FunctionNames: the names of an organization's functions, for its earnings statement. Functions
// live in the registry; the ledger keeps only their ids.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "toolgate/bus/bus.h"

namespace toolgate::billing {

class FunctionNames {
 public:
  virtual ~FunctionNames() = default;
  // The names of those of function_ids (each once) that owner_org_id owns and the registry still
  // has; an id it cannot name (deleted, another's, the registry not answering) is left out, so a
  // statement never waits on or fails for a name. Thread-safe.
  virtual std::map<std::string, std::string> Names(
      const std::string& owner_org_id, const std::vector<std::string>& function_ids) = 0;
};

// Asks the registry on tg.registry.function_view (FunctionViewRequest, as the owner) about each
// id in turn (its cache answers in well under a millisecond), all of them within timeout_ms
// together; at most kMaxNamedFunctions ids are asked about. Blocks: call it off the bus's reader
// thread (HTTP handlers run on the worker pool). bus must outlive this object. Thread-safe.
class BusFunctionNames : public FunctionNames {
 public:
  static constexpr size_t kMaxNamedFunctions = 200;

  BusFunctionNames(bus::Bus& bus, int timeout_ms) : bus_(bus), timeout_ms_(timeout_ms) {}
  std::map<std::string, std::string> Names(const std::string& owner_org_id,
                                           const std::vector<std::string>& function_ids) override;

 private:
  bus::Bus& bus_;
  const int timeout_ms_;
};

}  // namespace toolgate::billing
