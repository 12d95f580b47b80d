// What recent calls of each version cost in compute, for the expected compute that MCP
// tools/list shows beside a tool's price (docs/mcp.md, "Prices").
//
// RecentComputeCharges keeps, per (function, version), the compute charges of the latest
// kSamplesPerVersion charged executions this billing replica settled, for at most
// kMaxVersions versions (the least recently charged forgotten first). It is a sample, not the
// ledger: each replica keeps what it settled, and a replica that just started knows nothing
// yet (the median's samples is then 0). The ledger has no index for "the latest executions of a
// version", and one would cost every settlement a write; a sample in memory costs nothing.
//
// Served on tg.billing.compute_medians (queue "billing"):
//   ComputeMediansRequest{versions} -> ComputeMediansReply{medians}: one per version asked,
//   in order, with the compute its whole timeout costs at billing's rates; bad_request for a
//   request that does not parse or asks about more than kMaxMedianVersions.
// Thread-safe: the settler records from its thread while requests are answered on others.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "toolgate/base/bounded_ttl_cache.h"
#include "toolgate/base/status.h"
#include "toolgate/bus/service.h"
#include "toolgate/core/cost.h"
#include "toolgate/v1/toolgate.pb.h"

namespace toolgate::billing {

inline constexpr size_t kSamplesPerVersion = 51;
inline constexpr size_t kMaxVersions = 20'000;
// The most versions one request may ask about: a workspace's tools/list.
inline constexpr size_t kMaxMedianVersions = 1'000;

struct ComputeMedianValue {
  int64_t median_micro_usd = 0;
  int samples = 0;  // 0: no charged call seen; the median is then 0
};

class RecentComputeCharges {
 public:
  // now_ms: the clock entries expire by (a version not charged for a week is forgotten).
  RecentComputeCharges();

  // A charged execution's compute charge.
  void Record(const std::string& function_id, const std::string& version, int64_t compute_micro_usd,
              int64_t now_ms);
  // The median of the samples kept for the version (the upper median of an even count).
  ComputeMedianValue Median(const std::string& function_id, const std::string& version,
                            int64_t now_ms);

 private:
  // The latest samples of one version, oldest overwritten first.
  struct Samples {
    std::mutex mu;
    std::array<int64_t, kSamplesPerVersion> values{};  // guarded by mu
    size_t count = 0;                                  // guarded by mu
    size_t next = 0;                                   // guarded by mu
  };
  static std::string KeyOf(const std::string& function_id, const std::string& version);

  BoundedTtlCache<std::string, std::shared_ptr<Samples>> versions_;
};

// The answer to the ComputeMediansRequest in data.
v1::ComputeMediansReply AnswerComputeMedians(RecentComputeCharges& charges,
                                             const core::Rates& rates, std::string_view data,
                                             int64_t now_ms);

// Subscribes to tg.billing.compute_medians; service, charges and rates must outlive the
// subscription.
Status ServeComputeMedians(bus::Service& service, RecentComputeCharges& charges,
                           const core::Rates& rates);

}  // namespace toolgate::billing
