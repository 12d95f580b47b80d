#include "toolgate/billing/execution_states.h"

#include <algorithm>
#include <array>

#include "toolgate/base/crypto.h"

namespace toolgate::billing {
namespace {

constexpr std::array<std::string_view, 6> kStatusNames = {"queued", "running",   "succeeded",
                                                          "failed", "timed_out", "cancelled"};

std::string Ms(int64_t ms) {
  return std::to_string(ms);
}

// The columns Find and Claim read, in StateOf's order.
constexpr std::string_view kColumns =
    "execution_id, org_id, function_id, version, async, status, cancel_requested, lost, "
    "encode(reply, 'base64'), encode(request_sha256, 'base64'), "
    "(extract(epoch FROM created_at) * 1000)::bigint, "
    "COALESCE((extract(epoch FROM started_at) * 1000)::bigint, 0), "
    "COALESCE((extract(epoch FROM finished_at) * 1000)::bigint, 0), COALESCE(key_id, ''), "
    "COALESCE(callback_url, ''), callback_attempts, COALESCE(callback_outcome, '')";

// PostgreSQL's base64 breaks lines every 76 characters.
std::string Unbase64(std::string text) {
  std::erase(text, '\n');
  std::string out;
  if (!Base64Decode(text, &out)) return {};
  return out;
}

ExecutionState StateOf(const pg::Rows& rows, int i) {
  ExecutionState s;
  s.execution_id = rows.Str(i, 0);
  s.org_id = rows.Str(i, 1);
  s.function_id = rows.Str(i, 2);
  s.version = rows.Str(i, 3);
  s.async = rows.Bool(i, 4);
  s.status = ExecutionStatusOfName(rows.Str(i, 5)).value_or(ExecutionStatus::kFailed);
  s.cancel_requested = rows.Bool(i, 6);
  s.lost = rows.Bool(i, 7);
  if (!rows.IsNull(i, 8)) {
    v1::InvokeReply reply;
    if (reply.ParseFromString(Unbase64(rows.Str(i, 8)))) s.reply = std::move(reply);
  }
  if (!rows.IsNull(i, 9)) s.request_sha256 = Unbase64(rows.Str(i, 9));
  s.created_ms = rows.Int(i, 10);
  s.started_ms = rows.Int(i, 11);
  s.finished_ms = rows.Int(i, 12);
  s.key_id = rows.Str(i, 13);
  s.callback_url = rows.Str(i, 14);
  s.callback_attempts = static_cast<int>(rows.Int(i, 15));
  s.callback_outcome = rows.Str(i, 16);
  return s;
}

pg::Param Bytes(std::string_view bytes) {
  return Base64Encode(bytes);
}

}  // namespace

std::string_view ExecutionStatusName(ExecutionStatus status) {
  return kStatusNames[static_cast<size_t>(status)];
}

std::optional<ExecutionStatus> ExecutionStatusOfName(std::string_view name) {
  for (size_t i = 0; i < kStatusNames.size(); ++i) {
    if (kStatusNames[i] == name) return static_cast<ExecutionStatus>(i);
  }
  return std::nullopt;
}

bool IsFinal(ExecutionStatus status) {
  return status != ExecutionStatus::kQueued && status != ExecutionStatus::kRunning;
}

ExecutionStatus FinalStatusOf(const v1::ExecutionResult& result) {
  if (result.cancelled()) return ExecutionStatus::kCancelled;
  if (!result.handler_ran()) {
    return result.problem().status() == 408 ? ExecutionStatus::kTimedOut : ExecutionStatus::kFailed;
  }
  return result.status_code() >= 500 ? ExecutionStatus::kFailed : ExecutionStatus::kSucceeded;
}

Result<ClaimOutcome> ExecutionStates::Claim(const NewExecutionState& state, int64_t now_ms) {
  const bool keyed = !state.idempotency_key.empty();
  for (int attempt = 0; attempt < 3; ++attempt) {
    if (keyed) {
      // A key past its window names no execution any more: the row stays (its status is still
      // readable), without the key.
      auto stale = pool_.Exec(
          "UPDATE billing.execution_states SET idempotency_key = NULL "
          "WHERE org_id = $1 AND idempotency_key = $2 "
          "AND created_at < to_timestamp($3::bigint / 1000.0)",
          {state.org_id, state.idempotency_key, Ms(now_ms - kIdempotencyWindowMs)});
      if (!stale.ok()) return stale.status();
    }
    auto inserted = pool_.Exec(
        "INSERT INTO billing.execution_states (execution_id, org_id, function_id, version, "
        "async, status, idempotency_key, request_sha256, deadline_at, started_at, key_id, "
        "callback_url) "
        "VALUES ($1, $2, $3, $4, $5::boolean, $6, $7, decode($8, 'base64'), "
        "to_timestamp($9::bigint / 1000.0), CASE WHEN $5::boolean THEN NULL ELSE now() END, "
        "$10, $11) "
        "ON CONFLICT DO NOTHING RETURNING execution_id",
        {state.execution_id, state.org_id, state.function_id, state.version,
         state.async ? "t" : "f", state.async ? "queued" : "running",
         keyed ? pg::Param(state.idempotency_key) : std::nullopt,
         keyed ? Bytes(state.request_sha256) : std::nullopt, Ms(state.deadline_ms),
         state.key_id.empty() ? std::nullopt : pg::Param(state.key_id),
         state.callback_url.empty() ? std::nullopt : pg::Param(state.callback_url)});
    if (!inserted.ok()) return inserted.status();
    if (inserted->size() == 1) return ClaimOutcome{};
    if (!keyed) {
      // The execution id exists: a job delivered twice. Its first delivery runs it.
      return Status::Conflict("execution " + state.execution_id + " is recorded already");
    }
    auto first = pool_.Exec("SELECT " + std::string(kColumns) +
                                " FROM billing.execution_states "
                                "WHERE org_id = $1 AND idempotency_key = $2",
                            {state.org_id, state.idempotency_key});
    if (!first.ok()) return first.status();
    if (first->size() == 0) continue;  // it went stale or was forgotten meanwhile
    ClaimOutcome out;
    out.first = StateOf(*first, 0);
    out.kind = out.first.request_sha256 == state.request_sha256 ? ClaimOutcome::Kind::kRepeat
                                                                : ClaimOutcome::Kind::kMismatch;
    return out;
  }
  return Status::Unavailable("the idempotency key could not be claimed");
}

Status ExecutionStates::Forget(const std::string& execution_id) {
  auto r = pool_.Exec(
      "DELETE FROM billing.execution_states WHERE execution_id = $1 AND finished_at IS NULL",
      {execution_id});
  return r.ok() ? Status::Ok() : r.status();
}

Result<bool> ExecutionStates::MarkRunning(const std::string& execution_id, int64_t deadline_ms) {
  auto r = pool_.Exec(
      "UPDATE billing.execution_states SET status = 'running', started_at = now(), "
      "deadline_at = to_timestamp($2::bigint / 1000.0) "
      "WHERE execution_id = $1 AND status = 'queued' AND finished_at IS NULL",
      {execution_id, Ms(deadline_ms)});
  if (!r.ok()) return r.status();
  return r->affected() == 1;
}

Result<bool> ExecutionStates::MarkQueued(const std::string& execution_id, int64_t deadline_ms) {
  auto r = pool_.Exec(
      "UPDATE billing.execution_states SET status = 'queued', started_at = NULL, "
      "deadline_at = to_timestamp($2::bigint / 1000.0) "
      "WHERE execution_id = $1 AND status = 'running' AND finished_at IS NULL",
      {execution_id, Ms(deadline_ms)});
  if (!r.ok()) return r.status();
  return r->affected() == 1;
}

Result<bool> ExecutionStates::Fail(const std::string& execution_id, const v1::InvokeReply& reply) {
  auto r = pool_.Exec(
      "UPDATE billing.execution_states SET status = 'failed', reply = decode($2, 'base64'), "
      "finished_at = now() WHERE execution_id = $1 AND finished_at IS NULL",
      {execution_id, Bytes(reply.SerializeAsString())});
  if (!r.ok()) return r.status();
  return r->affected() == 1;
}

Result<CancelOutcome> ExecutionStates::Cancel(const std::string& org_id,
                                              const std::string& execution_id) {
  // One statement decides from the row as it is: a queued execution is cancelled, a running one
  // asked to stop, a finished one left alone.
  auto r = pool_.Exec(
      "WITH target AS (SELECT execution_id, status, finished_at FROM billing.execution_states "
      "  WHERE execution_id = $1 AND org_id = $2 AND async FOR UPDATE), "
      "changed AS (UPDATE billing.execution_states s SET "
      "  status = CASE WHEN t.status = 'queued' THEN 'cancelled' ELSE s.status END, "
      "  finished_at = CASE WHEN t.status = 'queued' THEN now() ELSE s.finished_at END, "
      "  cancel_requested = true "
      "  FROM target t WHERE s.execution_id = t.execution_id AND t.finished_at IS NULL "
      "  RETURNING t.status) "
      "SELECT (SELECT status FROM target), (SELECT status FROM changed)",
      {execution_id, org_id});
  if (!r.ok()) return r.status();
  if (r->IsNull(0, 0)) return CancelOutcome::kNotFound;
  if (r->IsNull(0, 1)) return CancelOutcome::kFinished;
  return r->Str(0, 1) == "queued" ? CancelOutcome::kCancelled : CancelOutcome::kStopping;
}

Result<std::optional<ExecutionState>> ExecutionStates::Find(const std::string& org_id,
                                                            const std::string& execution_id) {
  auto r = pool_.Exec("SELECT " + std::string(kColumns) +
                          " FROM billing.execution_states WHERE execution_id = $1 AND org_id = $2",
                      {execution_id, org_id});
  if (!r.ok()) return r.status();
  if (r->size() == 0) return std::optional<ExecutionState>();
  return std::optional<ExecutionState>(StateOf(*r, 0));
}

Result<std::vector<std::string>> ExecutionStates::SweepLost(int64_t now_ms,
                                                            const v1::InvokeReply& reply, int max) {
  auto r = pool_.Exec(
      "UPDATE billing.execution_states SET status = 'failed', lost = true, "
      "reply = decode($2, 'base64'), finished_at = now() "
      "WHERE execution_id IN (SELECT execution_id FROM billing.execution_states "
      "  WHERE finished_at IS NULL AND deadline_at < to_timestamp($1::bigint / 1000.0) "
      "  ORDER BY deadline_at LIMIT $3::integer FOR UPDATE SKIP LOCKED) "
      "RETURNING execution_id",
      {Ms(now_ms), Bytes(reply.SerializeAsString()), std::to_string(max)});
  if (!r.ok()) return r.status();
  std::vector<std::string> ids;
  for (int i = 0; i < r->size(); ++i) ids.push_back(r->Str(i, 0));
  return ids;
}

Result<QueuedStats> ExecutionStates::Queued(int64_t now_ms) {
  auto r = pool_.Exec(
      "SELECT count(*), COALESCE($1::bigint - (extract(epoch FROM min(created_at)) * "
      "1000)::bigint, "
      "0) FROM billing.execution_states WHERE status = 'queued' AND finished_at IS NULL",
      {Ms(now_ms)});
  if (!r.ok()) return r.status();
  QueuedStats out;
  out.count = r->Int(0, 0);
  out.oldest_age_ms = std::max<int64_t>(0, r->Int(0, 1));
  return out;
}

Result<int64_t> ExecutionStates::DeleteFinishedBefore(int64_t before_ms) {
  auto r = pool_.Exec(
      "DELETE FROM billing.execution_states WHERE finished_at IS NOT NULL "
      "AND created_at < to_timestamp($1::bigint / 1000.0)",
      {Ms(before_ms)});
  if (!r.ok()) return r.status();
  return r->affected();
}

Result<std::vector<ExecutionState>> ExecutionStates::TakeDueCallbacks(int max, int64_t lease_ms) {
  auto r = pool_.Exec(
      "UPDATE billing.execution_states SET "
      "callback_next_at = now() + make_interval(secs => $2::bigint / 1000.0) "
      "WHERE execution_id IN (SELECT execution_id FROM billing.execution_states "
      "  WHERE callback_url IS NOT NULL AND callback_outcome IS NULL AND finished_at IS NOT NULL "
      "  AND COALESCE(callback_next_at, finished_at) <= now() "
      "  ORDER BY COALESCE(callback_next_at, finished_at) LIMIT $1::integer "
      "  FOR UPDATE SKIP LOCKED) "
      "RETURNING " +
          std::string(kColumns),
      {std::to_string(max), Ms(lease_ms)});
  if (!r.ok()) return r.status();
  std::vector<ExecutionState> due;
  for (int i = 0; i < r->size(); ++i) due.push_back(StateOf(*r, i));
  return due;
}

Status ExecutionStates::RecordCallbackAttempt(const std::string& execution_id,
                                              const CallbackAttempt& attempt,
                                              std::optional<int64_t> next_ms,
                                              std::string_view final_outcome) {
  // The attempt and the delivery's new state in one statement.
  auto r = pool_.Exec(
      "WITH attempt AS (INSERT INTO billing.callback_attempts (execution_id, attempt, "
      "  status_code, error, outcome) VALUES ($1, $2::integer, $3::integer, $4, $5) "
      "  ON CONFLICT DO NOTHING) "
      "UPDATE billing.execution_states SET callback_attempts = $2::integer, "
      "callback_next_at = CASE WHEN $6::bigint IS NULL THEN NULL "
      "  ELSE to_timestamp($6::bigint / 1000.0) END, "
      "callback_outcome = $7 WHERE execution_id = $1",
      {execution_id, std::to_string(attempt.attempt),
       attempt.status_code > 0 ? pg::Param(std::to_string(attempt.status_code)) : std::nullopt,
       attempt.error.empty() ? std::nullopt : pg::Param(attempt.error), attempt.outcome,
       next_ms ? pg::Param(Ms(*next_ms)) : std::nullopt,
       final_outcome.empty() ? std::nullopt : pg::Param(std::string(final_outcome))});
  return r.ok() ? Status::Ok() : r.status();
}

Result<std::vector<CallbackAttempt>> ExecutionStates::CallbackAttempts(
    const std::string& execution_id) {
  auto r = pool_.Exec(
      "SELECT attempt, (extract(epoch FROM attempted_at) * 1000)::bigint, "
      "COALESCE(status_code, 0), COALESCE(error, ''), outcome FROM billing.callback_attempts "
      "WHERE execution_id = $1 ORDER BY attempt",
      {execution_id});
  if (!r.ok()) return r.status();
  std::vector<CallbackAttempt> out;
  for (int i = 0; i < r->size(); ++i) {
    CallbackAttempt a;
    a.attempt = static_cast<int>(r->Int(i, 0));
    a.attempted_ms = r->Int(i, 1);
    a.status_code = static_cast<int>(r->Int(i, 2));
    a.error = r->Str(i, 3);
    a.outcome = r->Str(i, 4);
    out.push_back(std::move(a));
  }
  return out;
}

}  // namespace toolgate::billing
