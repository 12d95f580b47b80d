// ExecutionStates: the state of executions that outlive a connection, in PostgreSQL
// (billing.execution_states, migration 012): every asynchronous call (Prefer: respond-async)
// from the moment it is accepted, and every call made with an Idempotency-Key from the moment
// its key is claimed. What GET /api/v1/executions/{id} shows of such a call, what a repeated
// key is answered with, and what cancel acts on.
//
//   queued ──MarkRunning──► running ──(settlement)──► succeeded | failed | timed_out | cancelled
//     │                        └──MarkQueued (no executor took it)──► queued
//     └──Cancel──► cancelled            queued | running ──SweepLost──► failed (lost)
//
// A settlement writes the final state in the statement that records the execution's charge
// (LedgerStore::RecordSettlements, StateUpdate), so an outcome and its charge commit together;
// a late result replaces a lost one. The job itself (its sealed secrets) is never stored here:
// it waits in the JetStream stream (async_queue.h).
//
// Thread-safe (pg::Pool is); every method returns Unavailable when PostgreSQL cannot be reached.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "toolgate/base/status.h"
#include "toolgate/pg/pg.h"
#include "toolgate/v1/toolgate.pb.h"

namespace toolgate::billing {

enum class ExecutionStatus { kQueued, kRunning, kSucceeded, kFailed, kTimedOut, kCancelled };

// "queued", "running", "succeeded", "failed", "timed_out", "cancelled": the API's names.
std::string_view ExecutionStatusName(ExecutionStatus status);
std::optional<ExecutionStatus> ExecutionStatusOfName(std::string_view name);
// Whether nothing changes an execution in this status any more (a lost one aside).
bool IsFinal(ExecutionStatus status);

// The final status of a settled result: cancelled (its sandbox killed by a cancel), timed_out
// (408), failed (the handler did not run, or answered 500 or above), else succeeded.
ExecutionStatus FinalStatusOf(const v1::ExecutionResult& result);

// How long a repeated Idempotency-Key is answered with its first execution.
inline constexpr int64_t kIdempotencyWindowMs = 24LL * 3600 * 1000;

struct ExecutionState {
  std::string execution_id;
  std::string org_id;
  std::string function_id;
  std::string version;
  std::string key_id;  // the API key that made it; empty: a session
  bool async = false;
  ExecutionStatus status = ExecutionStatus::kQueued;
  bool cancel_requested = false;
  bool lost = false;                     // failed because its hold expired with no result
  std::optional<v1::InvokeReply> reply;  // once final
  std::string request_sha256;            // of the request that claimed its key; empty: no key
  int64_t created_ms = 0;
  int64_t started_ms = 0;   // 0: not started
  int64_t finished_ms = 0;  // 0: not finished
  // X-Callback-Url (empty: none), the attempts made to deliver it, and how it ended ("" not
  // yet, "delivered", "failed").
  std::string callback_url;
  int callback_attempts = 0;
  std::string callback_outcome;
};

// One attempt to deliver a callback, as recorded.
struct CallbackAttempt {
  int attempt = 0;  // 1-based
  int64_t attempted_ms = 0;
  int status_code = 0;  // 0: no answer
  std::string error;    // "" when delivered
  std::string outcome;  // "delivered", "rejected", "retryable", "network_error", "refused"
};

// The row Claim inserts: queued for an asynchronous call, running for a synchronous one.
struct NewExecutionState {
  std::string execution_id;
  std::string org_id;
  std::string function_id;
  std::string version;
  std::string key_id;  // empty: a session
  bool async = false;
  std::string idempotency_key;  // empty: none
  std::string request_sha256;   // with a key
  int64_t deadline_ms = 0;      // presumed lost if unfinished after this
  std::string callback_url;     // empty: none
};

struct ClaimOutcome {
  enum class Kind {
    kClaimed,   // the row was inserted: run the call
    kRepeat,    // the key's first execution, made with the same request: answer with it
    kMismatch,  // the key's first execution was made with another request: 422
  };
  Kind kind = Kind::kClaimed;
  ExecutionState first;  // kRepeat, kMismatch
};

enum class CancelOutcome {
  kCancelled,  // it was queued: now cancelled, its hold to be released
  kStopping,   // it is running: cancel_requested set, the executor to be told
  kFinished,   // it had finished: nothing changed
  kNotFound,   // no such asynchronous execution of the organization
};

// The final state a settlement writes (LedgerStore::RecordSettlements).
struct StateUpdate {
  std::string execution_id;
  ExecutionStatus status = ExecutionStatus::kSucceeded;
  std::string reply;  // a serialized v1::InvokeReply
};

// What waits in the queue: how many, and the oldest's age (0: none).
struct QueuedStats {
  int64_t count = 0;
  int64_t oldest_age_ms = 0;
};

class ExecutionStates {
 public:
  // pool must outlive the store.
  explicit ExecutionStates(pg::Pool& pool) : pool_(pool) {}

  // Inserts state. With a key, one row per (organization, key) within kIdempotencyWindowMs:
  // concurrent claims of one key insert one row, and the others get it (kRepeat or kMismatch);
  // a key whose first execution is older than the window names the new one from now on.
  Result<ClaimOutcome> Claim(const NewExecutionState& state, int64_t now_ms);
  // Deletes a claimed row whose call was refused before anything ran (a hold's problem, a
  // queue that could not take it), so that its key may be used again.
  Status Forget(const std::string& execution_id);
  // queued -> running, presumed lost after deadline_ms; false when it is not queued (cancelled,
  // lost, or started before).
  Result<bool> MarkRunning(const std::string& execution_id, int64_t deadline_ms);
  // running -> queued (no executor took the job); false when it is not running.
  Result<bool> MarkQueued(const std::string& execution_id, int64_t deadline_ms);
  // An unfinished execution ends with reply (queue_timeout, no capacity); false when it had
  // finished.
  Result<bool> Fail(const std::string& execution_id, const v1::InvokeReply& reply);
  Result<CancelOutcome> Cancel(const std::string& org_id, const std::string& execution_id);
  // nullopt when org_id has no such execution.
  Result<std::optional<ExecutionState>> Find(const std::string& org_id,
                                             const std::string& execution_id);
  // Unfinished executions whose deadline passed before now_ms end failed with reply and
  // lost = true (at most max); returns their ids.
  Result<std::vector<std::string>> SweepLost(int64_t now_ms, const v1::InvokeReply& reply, int max);
  Result<QueuedStats> Queued(int64_t now_ms);
  // Deletes finished rows created before before_ms; returns how many.
  Result<int64_t> DeleteFinishedBefore(int64_t before_ms);

  // Finished executions whose callback is due (at most max, oldest due first), each leased for
  // lease_ms so that no other replica takes it meanwhile.
  Result<std::vector<ExecutionState>> TakeDueCallbacks(int max, int64_t lease_ms);
  // Records attempt `attempt` of a callback; next_ms: when the next is due, or nullopt when the
  // delivery ended (outcome "delivered" or "failed").
  Status RecordCallbackAttempt(const std::string& execution_id, const CallbackAttempt& attempt,
                               std::optional<int64_t> next_ms, std::string_view final_outcome);
  Result<std::vector<CallbackAttempt>> CallbackAttempts(const std::string& execution_id);

 private:
  pg::Pool& pool_;
};

}  // namespace toolgate::billing
