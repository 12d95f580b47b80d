#include "toolgate/core/subjects.h"

#include "toolgate/core/runtime_names.h"

namespace toolgate::core {
namespace {

constexpr std::string_view kSettlePrefix = "tg.billing.settle.";
constexpr std::string_view kUnservedPrefix = "tg.billing.unserved.";

std::string Join(std::string_view prefix, std::string_view token) {
  std::string out;
  out.reserve(prefix.size() + token.size());
  out.append(prefix);
  out.append(token);
  return out;
}

}  // namespace

std::optional<std::string> ExecSubject(v1::ComputeType compute, v1::Runtime runtime) {
  std::string_view pool = PoolName(compute);
  std::string_view name = RuntimeName(runtime);
  if (pool.empty() || name.empty()) return std::nullopt;
  return ExecSubject(pool, name);
}

std::string ExecSubject(std::string_view pool, std::string_view runtime_name) {
  std::string out = Join("tg.exec.", pool);
  out += '.';
  out.append(runtime_name);
  return out;
}

std::string SettleSubject(std::string_view execution_id) {
  return Join(kSettlePrefix, execution_id);
}

std::string UnservedSubject(std::string_view execution_id) {
  return Join(kUnservedPrefix, execution_id);
}

std::string AsyncQueueSubject(std::string_view org_id) {
  return std::string("tg.async.queue.") + (IsValidExecutionId(org_id) ? std::string(org_id) : "_");
}

std::string ExecutionIdOfUnservedSubject(std::string_view subject) {
  if (subject.substr(0, kUnservedPrefix.size()) != kUnservedPrefix) return "";
  std::string_view id = subject.substr(kUnservedPrefix.size());
  return IsValidExecutionId(id) ? std::string(id) : "";
}

bool IsValidExecutionId(std::string_view id) {
  if (id.empty() || id.size() > 128) return false;
  for (char c : id) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '_';
    if (!ok) return false;
  }
  return true;
}

std::string HttpSubject(std::string_view service) {
  std::string out = Join("tg.", service);
  out += ".http";
  return out;
}

}  // namespace toolgate::core
