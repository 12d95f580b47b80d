#include "toolgate/billing/charge.h"

#include <algorithm>
#include <cctype>

#include "toolgate/base/crypto.h"
#include "toolgate/base/json_writer.h"
#include "toolgate/core/problem.h"
#include "toolgate/core/runtime_names.h"
#include "toolgate/trace/trace.h"

namespace toolgate::billing {
namespace {

// The length of the valid UTF-8 sequence at the start of s (RFC 3629: no overlong forms, no
// surrogates, nothing above U+10FFFF), or 0 when it is not one.
size_t Utf8SequenceLength(std::string_view s) {
  auto byte = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  auto continuation = [&](size_t i) { return i < s.size() && (byte(i) & 0xC0) == 0x80; };
  unsigned char b0 = byte(0);
  if (b0 < 0x80) return 1;
  if (b0 >= 0xC2 && b0 <= 0xDF) return continuation(1) ? 2 : 0;
  if (b0 >= 0xE0 && b0 <= 0xEF) {
    if (!continuation(1) || !continuation(2)) return 0;
    if (b0 == 0xE0 && byte(1) < 0xA0) return 0;   // overlong
    if (b0 == 0xED && byte(1) >= 0xA0) return 0;  // surrogate
    return 3;
  }
  if (b0 >= 0xF0 && b0 <= 0xF4) {
    if (!continuation(1) || !continuation(2) || !continuation(3)) return 0;
    if (b0 == 0xF0 && byte(1) < 0x90) return 0;   // overlong
    if (b0 == 0xF4 && byte(1) >= 0x90) return 0;  // above U+10FFFF
    return 4;
  }
  return 0;
}

}  // namespace

bool CallerOwnsFunction(const v1::InvokeJob& job) {
  return job.principal().org_id() == job.function().owner_org_id();
}

bool RunsOnGpu(const v1::FunctionVersion& function) {
  return function.compute_type() == v1::COMPUTE_TYPE_GPU;
}

int64_t FeeFor(const v1::InvokeJob& job) {
  return core::FunctionFee(job.function().price_micro_usd(), CallerOwnsFunction(job));
}

int64_t HoldAmountFor(const core::Rates& rates, const v1::InvokeJob& job) {
  const v1::FunctionVersion& f = job.function();
  return core::HoldAmount(rates, RunsOnGpu(f), f.timeout_ms(), f.memory_mb(), FeeFor(job));
}

namespace {

// Wall time, or the sandbox's CPU time when its threads and processes together used more:
// parallel work is not free. Never past the timeout, which the hold covered.
int64_t BilledMs(const v1::FunctionVersion& f, int64_t runtime_ms, int64_t cpu_ms) {
  return std::min<int64_t>(std::max(runtime_ms, cpu_ms), f.timeout_ms());
}

}  // namespace

Charge ChargeFor(const core::Rates& rates, const v1::InvokeJob& job, int64_t runtime_ms,
                 int64_t cpu_ms) {
  const v1::FunctionVersion& f = job.function();
  Charge c;
  int64_t billed_ms = BilledMs(f, runtime_ms, cpu_ms);
  c.compute_micro_usd = core::ComputeCost(rates, RunsOnGpu(f), billed_ms, f.memory_mb());
  c.function_micro_usd = FeeFor(job);
  c.total_micro_usd = c.compute_micro_usd + c.function_micro_usd;
  c.owner_revenue_micro_usd = core::OwnerRevenue(rates, c.function_micro_usd);
  return c;
}

int64_t UnchargedTimeoutMs(const v1::ExecutionResult& result) {
  if (result.handler_ran() || result.problem().code() != "timeout") return 0;
  return std::max<int64_t>(1,
                           BilledMs(result.job().function(), result.runtime_ms(), result.cpu_ms()));
}

std::string_view EntryTypeName(EntryType type) {
  switch (type) {
    case EntryType::kTopUp:
      return "top_up";
    case EntryType::kCharge:
      return "charge";
    case EntryType::kRevenue:
      return "revenue";
    case EntryType::kGrant:
      return "grant";
    case EntryType::kPayout:
      return "payout";
    case EntryType::kPayment:
      return "payment";
    case EntryType::kRefund:
      return "refund";
    case EntryType::kDispute:
      return "dispute";
  }
  return "charge";
}

std::optional<EntryType> ParseEntryType(std::string_view name) {
  for (EntryType type :
       {EntryType::kTopUp, EntryType::kCharge, EntryType::kRevenue, EntryType::kGrant,
        EntryType::kPayment, EntryType::kRefund, EntryType::kDispute, EntryType::kPayout}) {
    if (name == EntryTypeName(type)) return type;
  }
  return std::nullopt;
}

std::vector<LedgerEntry> LedgerEntriesFor(const v1::InvokeJob& job, const Charge& charge) {
  std::vector<LedgerEntry> out;
  LedgerEntry entry;
  entry.org_id = job.principal().org_id();
  entry.type = EntryType::kCharge;
  entry.execution_id = job.execution_id();
  entry.function_id = job.function().function_id();
  entry.version = job.function().version();
  entry.compute_micro_usd = charge.compute_micro_usd;
  entry.function_micro_usd = charge.function_micro_usd;
  entry.amount_micro_usd = -charge.total_micro_usd;
  out.push_back(entry);
  if (charge.function_micro_usd > 0) {
    // The owner's row carries the gross fee it was paid from, and its share as the amount.
    entry.org_id = job.function().owner_org_id();
    entry.type = EntryType::kRevenue;
    entry.compute_micro_usd = 0;
    entry.amount_micro_usd = charge.owner_revenue_micro_usd;
    out.push_back(entry);
  }
  return out;
}

std::string HopsJson(const v1::InvokeJob& job) {
  JsonWriter w;
  w.BeginArray();
  for (const v1::Hop& hop : job.hops()) {
    w.BeginObject()
        .Field("name", hop.name())
        .Field("start_unix_us", hop.start_unix_us())
        .Field("duration_us", hop.duration_us())
        .EndObject();
  }
  w.EndArray();
  return w.Take();
}

std::string EgressJson(const v1::ExecutionResult& result) {
  JsonWriter w;
  w.BeginArray();
  for (const v1::EgressRequest& r : result.egress()) {
    w.BeginObject()
        .Field("method", SanitizeText(r.method()))
        .Field("host", SanitizeText(r.host()))
        .Field("port", static_cast<int64_t>(r.port()))
        .FieldOrNull("address", SanitizeText(r.address()))
        .Field("status", static_cast<int64_t>(r.status()))
        .Field("bytes_sent", r.bytes_sent())
        .Field("bytes_received", r.bytes_received())
        .Field("ms", r.ms())
        .FieldOrNull("refused", SanitizeText(r.refused()))
        .EndObject();
  }
  w.EndArray();
  return w.Take();
}

Settlement SettlementFor(const core::Rates& rates, const v1::ExecutionResult& result) {
  const v1::InvokeJob& job = result.job();
  Settlement s;
  ExecutionRecord& e = s.execution;
  e.execution_id = job.execution_id();
  e.org_id = job.principal().org_id();
  e.owner_org_id = job.function().owner_org_id();
  e.function_id = job.function().function_id();
  e.version = job.function().version();
  e.runtime_ms = result.runtime_ms();
  e.memory_used_mb = result.memory_used_mb();
  e.compute_type = std::string(core::ComputeTypeName(job.function().compute_type()));
  if (auto tc = trace::ParseTraceparent(job.traceparent())) e.trace_id = tc->trace_id;
  e.logs = SanitizeText(result.logs());
  e.egress_json = EgressJson(result);
  e.egress_bytes = result.egress_bytes();
  e.hops_json = HopsJson(job);
  e.grant_id = GrantIdOf(job.principal());
  if (!e.grant_id.empty()) e.client_name = SanitizeText(job.principal().client_name());
  e.key_id = job.principal().key_id();
  if (result.handler_ran()) {
    e.status_code = result.status_code();
    e.charge = ChargeFor(rates, job, result.runtime_ms(), result.cpu_ms());
    s.entries = LedgerEntriesFor(job, e.charge);
  } else {
    e.status_code = result.has_problem() ? result.problem().status() : 502;
  }
  // An asynchronous call's outcome, and a keyed call's first answer, are kept with it.
  if (job.respond_async() || !job.idempotency_key().empty()) {
    s.state = StateUpdate{e.execution_id, FinalStatusOf(result),
                          ReplyFor(result, e.charge).SerializeAsString()};
  }
  return s;
}

std::string GrantIdOf(const v1::Principal& principal) {
  if (!IsUuid(principal.grant_id())) return {};
  std::string id = principal.grant_id();
  for (char& c : id) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return id;
}

v1::InvokeReply ReplyFor(const v1::ExecutionResult& result, const Charge& charge) {
  v1::InvokeReply reply;
  reply.set_key_expires_at_ms(result.job().principal().key_expires_at_ms());
  if (!result.handler_ran()) {
    *reply.mutable_problem() = result.has_problem()
                                   ? result.problem()
                                   : core::MakeProblem("executor_failure",
                                                       "The platform failed to run the function; "
                                                       "nothing was charged. Retry the call.");
    return reply;
  }
  v1::InvokeSuccess* ok = reply.mutable_result();
  ok->set_status_code(result.status_code());
  ok->set_body(result.body());
  v1::Summary* summary = ok->mutable_summary();
  summary->set_runtime_ms(result.runtime_ms());
  summary->set_memory_used_mb(result.memory_used_mb());
  summary->set_compute_type(result.job().function().compute_type());
  summary->set_runtime(result.job().function().runtime());
  summary->set_version(result.job().function().version());
  summary->set_execution_id(result.job().execution_id());
  summary->set_egress_bytes(result.egress_bytes());
  v1::Cost* cost = summary->mutable_cost();
  cost->set_compute_micro_usd(charge.compute_micro_usd);
  cost->set_function_micro_usd(charge.function_micro_usd);
  cost->set_total_micro_usd(charge.total_micro_usd);
  // What the hold left, with this call's charge taken instead of its hold: exact when the
  // organization made no other call in between (docs/api.md, "Cost headers").
  const v1::Hold& hold = result.job().hold();
  const int64_t unused = hold.amount_micro_usd() - charge.total_micro_usd;
  summary->set_max_compute_micro_usd(
      std::max<int64_t>(0, hold.amount_micro_usd() - hold.function_micro_usd()));
  if (hold.has_available_micro_usd()) {
    summary->set_available_after_micro_usd(hold.available_micro_usd() + unused);
  }
  if (hold.has_budget_remaining_micro_usd()) {
    summary->set_budget_remaining_micro_usd(hold.budget_remaining_micro_usd() + unused);
    summary->set_budget_limit(hold.budget_limit());
  }
  return reply;
}

std::string SanitizeText(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  while (!text.empty()) {
    size_t n = Utf8SequenceLength(text);
    if (n == 0) {
      out += "\xEF\xBF\xBD";  // U+FFFD REPLACEMENT CHARACTER
      n = 1;
    } else if (!(n == 1 && text[0] == '\0')) {
      out.append(text.substr(0, n));
    }
    text.remove_prefix(n);
  }
  return out;
}

}  // namespace toolgate::billing
