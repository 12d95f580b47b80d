// OrganizationDirectory: what billing asks auth before it records an operator's credit grant:
// whether the organization exists, and the granting operator's email for the ledger.
// Organizations live in auth; billing only knows ids it has ledger rows for, so a grant to a
// mistyped id must be refused by the service that knows, not recorded as money nobody can use.
#pragma once

#include <string>

#include "toolgate/base/status.h"
#include "toolgate/bus/bus.h"

namespace toolgate::billing {

struct OrganizationInfo {
  bool found = false;
  std::string name;        // the organization's; empty when not found
  std::string user_email;  // the asked user's; empty when not asked or unknown
};

class OrganizationDirectory {
 public:
  virtual ~OrganizationDirectory() = default;
  // Looks up org_id and, when user_id is not empty, that user's email. Unavailable or Timeout
  // when the directory cannot answer (nothing may be granted then). Thread-safe.
  virtual Result<OrganizationInfo> Lookup(const std::string& org_id,
                                          const std::string& user_id) = 0;
};

// Asks auth on tg.auth.organization_lookup (OrganizationLookupRequest). Blocks for one bus round
// trip, up to timeout_ms: call it off the bus's reader thread (HTTP handlers run on the worker
// pool). bus must outlive this object. Thread-safe.
class BusOrganizationDirectory : public OrganizationDirectory {
 public:
  BusOrganizationDirectory(bus::Bus& bus, int timeout_ms) : bus_(bus), timeout_ms_(timeout_ms) {}
  Result<OrganizationInfo> Lookup(const std::string& org_id, const std::string& user_id) override;

 private:
  bus::Bus& bus_;
  const int timeout_ms_;
};

}  // namespace toolgate::billing
