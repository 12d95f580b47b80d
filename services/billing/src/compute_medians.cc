#include "toolgate/billing/compute_medians.h"

#include <algorithm>
#include <vector>

#include "toolgate/base/log.h"
#include "toolgate/base/time.h"
#include "toolgate/core/problem.h"
#include "toolgate/core/subjects.h"

namespace toolgate::billing {
namespace {

constexpr int64_t kForgetAfterMs = 7LL * 24 * 3600 * 1000;

}  // namespace

RecentComputeCharges::RecentComputeCharges() : versions_(kMaxVersions) {}

std::string RecentComputeCharges::KeyOf(const std::string& function_id,
                                        const std::string& version) {
  // A function id is a UUID and holds no newline.
  return function_id + "\n" + version;
}

void RecentComputeCharges::Record(const std::string& function_id, const std::string& version,
                                  int64_t compute_micro_usd, int64_t now_ms) {
  const std::string key = KeyOf(function_id, version);
  std::shared_ptr<Samples> samples = versions_.Get(key, now_ms).value_or(nullptr);
  if (!samples) samples = std::make_shared<Samples>();
  {
    std::lock_guard<std::mutex> lock(samples->mu);
    samples->values[samples->next] = compute_micro_usd;
    samples->next = (samples->next + 1) % kSamplesPerVersion;
    samples->count = std::min(samples->count + 1, kSamplesPerVersion);
  }
  // Put again to push the expiry on: a version charged this week is kept.
  versions_.Put(key, std::move(samples), now_ms + kForgetAfterMs, versions_.generation());
}

ComputeMedianValue RecentComputeCharges::Median(const std::string& function_id,
                                                const std::string& version, int64_t now_ms) {
  std::shared_ptr<Samples> samples =
      versions_.Get(KeyOf(function_id, version), now_ms).value_or(nullptr);
  if (!samples) return {};
  std::vector<int64_t> values;
  {
    std::lock_guard<std::mutex> lock(samples->mu);
    values.assign(samples->values.begin(),
                  samples->values.begin() + static_cast<std::ptrdiff_t>(samples->count));
  }
  if (values.empty()) return {};
  auto middle = values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2);
  std::nth_element(values.begin(), middle, values.end());
  return {*middle, static_cast<int>(values.size())};
}

v1::ComputeMediansReply AnswerComputeMedians(RecentComputeCharges& charges,
                                             const core::Rates& rates, std::string_view data,
                                             int64_t now_ms) {
  v1::ComputeMediansReply reply;
  v1::ComputeMediansRequest request;
  if (!request.ParseFromArray(data.data(), static_cast<int>(data.size()))) {
    *reply.mutable_problem() = core::MakeProblem("bad_request", "Malformed ComputeMediansRequest.");
    return reply;
  }
  if (static_cast<size_t>(request.versions_size()) > kMaxMedianVersions) {
    *reply.mutable_problem() =
        core::MakeProblem("bad_request", "At most " + std::to_string(kMaxMedianVersions) +
                                             " versions may be asked about at once.");
    return reply;
  }
  for (const v1::VersionRef& ref : request.versions()) {
    ComputeMedianValue value = charges.Median(ref.function_id(), ref.version(), now_ms);
    v1::ComputeMedian* median = reply.add_medians();
    median->set_function_id(ref.function_id());
    median->set_version(ref.version());
    median->set_median_compute_micro_usd(value.median_micro_usd);
    median->set_samples(value.samples);
    median->set_max_compute_micro_usd(
        core::HoldAmount(rates, ref.compute_type() == v1::COMPUTE_TYPE_GPU,
                         std::max(0, ref.timeout_ms()), std::max(0, ref.memory_mb()), 0));
  }
  return reply;
}

Status ServeComputeMedians(bus::Service& service, RecentComputeCharges& charges,
                           const core::Rates& rates) {
  return service.Handle(
      core::kComputeMediansSubject, "billing", [&service, &charges, &rates](bus::Message&& m) {
        if (m.reply.empty()) return;  // nobody to tell
        v1::ComputeMediansReply reply = AnswerComputeMedians(charges, rates, m.data, NowMs());
        Status s = service.bus().Publish(m.reply, reply.SerializeAsString());
        if (!s.ok()) {
          log::Warn("compute medians reply not sent").Str("error", s.ToString());
        }
      });
}

}  // namespace toolgate::billing
