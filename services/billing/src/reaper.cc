#include "toolgate/billing/reaper.h"

#include <chrono>

#include "toolgate/base/log.h"
#include "toolgate/base/time.h"

namespace toolgate::billing {
namespace {

constexpr size_t kReapBatch = 256;

}  // namespace

Reaper::Reaper(LedgerStore& ledger, BalanceStore& balances, const Config& config)
    : ledger_(ledger), balances_(balances), config_(config) {}

Reaper::~Reaper() {
  Stop();
}

void Reaper::Start() {
  thread_ = std::thread([this] { Loop(); });
}

void Reaper::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Reaper::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    cv_.wait_for(lock, std::chrono::milliseconds(config_.reaper_interval_ms),
                 [this] { return stopping_; });
    if (stopping_) return;
    lock.unlock();
    auto reaped = ReapDue(NowMs());
    if (!reaped.ok()) {
      log::Warn("hold reaper pass failed").Str("error", reaped.status().ToString());
    }
    auto captured = CaptureCharged();
    if (!captured.ok()) {
      log::Warn("charged-hold pass failed").Str("error", captured.status().ToString());
    }
    lock.lock();
  }
}

Result<int> Reaper::ReapDue(int64_t now_ms) {
  auto due = balances_.DueHolds(now_ms, kReapBatch);
  if (!due.ok()) return due.status();
  int ended = 0;
  for (const std::string& execution_id : *due) {
    auto charge = ledger_.ChargeOf(execution_id);
    if (!charge.ok()) return charge.status();
    if (charge->has_value()) {
      auto settled = balances_.Settle(**charge);
      if (!settled.ok()) return settled.status();
      if (*settled) {
        ++ended;
        log::Warn("hold captured by the reaper").Str("execution_id", execution_id);
      }
      continue;
    }
    auto hold = balances_.GetHold(execution_id);
    if (!hold.ok()) return hold.status();
    if (!hold->has_value()) {
      Status forgotten = balances_.ForgetDue(execution_id);
      if (!forgotten.ok()) return forgotten;
      continue;
    }
    auto released = balances_.Release(execution_id, (*hold)->org_id, ReleaseMode::kKeepTombstone);
    if (!released.ok()) return released.status();
    if (*released) {
      ++ended;
      log::Warn("abandoned hold released by the reaper").Str("execution_id", execution_id);
    }
  }
  return ended;
}

Result<int> Reaper::CaptureCharged() {
  auto holds = balances_.DueHolds(INT64_MAX, kReapBatch);
  if (!holds.ok()) return holds.status();
  int captured = 0;
  for (const std::string& execution_id : *holds) {
    auto charge = ledger_.ChargeOf(execution_id);
    if (!charge.ok()) return charge.status();
    if (!charge->has_value()) continue;  // still running, or not yet committed
    auto settled = balances_.Settle(**charge);
    if (!settled.ok()) return settled.status();
    if (*settled) {
      ++captured;
      log::Warn("charged hold captured by the reaper").Str("execution_id", execution_id);
    }
  }
  return captured;
}

}  // namespace toolgate::billing
