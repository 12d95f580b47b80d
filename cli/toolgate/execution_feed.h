// Polling the executions API.
//
// `toolgate logs --follow`: which executions appeared since the last look. The executions API
// pages newest first with a cursor towards older ones; the feed remembers the newest execution
// it has seen and, on each poll, reads pages until it meets that one again.
//
// `toolgate executions wait`: one execution (GET /executions/{id}) read again and again until
// its status is final (WaitForExecution).
//
// The transport, the clock and the pause between polls are functions, so tests drive both with
// answers and time of their own. Not thread-safe: one feed or wait per caller.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "toolgate/base/status.h"

namespace toolgate::cli {

// One page of GET /executions: execution ids newest first, and the cursor of the next (older)
// page, "" on the last.
struct ExecutionPage {
  std::vector<std::string> ids;
  std::string next_cursor;
};

class ExecutionFeed {
 public:
  // fetch(cursor) reads one page ("" for the newest); its failures come back from Poll.
  using FetchPage = std::function<Result<ExecutionPage>(const std::string& cursor)>;

  // backlog: how many of the executions already there the first poll returns (like tail -f's
  // last lines), at most one page. max_pages bounds how far back one poll reads when very many
  // executions came at once: the oldest of a burst beyond that are skipped rather than read
  // without end.
  explicit ExecutionFeed(FetchPage fetch, size_t backlog = 0, int max_pages = 20)
      : fetch_(std::move(fetch)), backlog_(backlog), max_pages_(max_pages) {}

  // The first call remembers where the list stands and returns the newest `backlog` ids there
  // were; each later call returns the ids that appeared since the previous one. Oldest first.
  // A fetch failure is returned as is, and the next poll starts from the same place.
  Result<std::vector<std::string>> Poll();

 private:
  FetchPage fetch_;
  size_t backlog_;
  int max_pages_;
  bool started_ = false;
  std::string newest_seen_;  // "" while the list was empty
};

// The `status` of an execution's document (GET /executions/{id}): "queued", "running",
// "succeeded", ...; "" when the text is not an object with a string status.
std::string ExecutionStatusOf(std::string_view document_json);

// Whether an execution's status is final: succeeded, failed, timed_out or cancelled. queued,
// running and any status this client does not know are not.
bool IsFinalExecutionStatus(std::string_view status);

struct ExecutionWaitOptions {
  std::chrono::milliseconds interval{1000};          // between two reads
  std::optional<std::chrono::milliseconds> timeout;  // none: until the execution finishes
};

// What WaitForExecution uses to read, to wait and to tell the time, and whom it tells.
struct ExecutionWaitIo {
  // The execution's document (the JSON of GET /executions/{id}), or why not. After a first
  // document, an Unavailable or Timeout error is a passing failure (a restarting server, a
  // dropped connection): on_retry hears of it and the wait goes on. Any other error, and any
  // error of the first read (a wrong URL is not waited on), ends the wait.
  std::function<Result<std::string>()> fetch;
  std::function<void(std::chrono::milliseconds)> pause;
  std::function<std::chrono::steady_clock::time_point()> now;
  std::function<void(const std::string& status)> on_status;  // optional: each new status seen
  std::function<void(const Status& failure)> on_retry;       // optional: each passing failure
};

struct ExecutionWaitResult {
  bool finished = false;  // false: the timeout passed first
  std::string status;     // the last status read
  std::string document;   // the last document read
};

// Reads the execution until its status is final, pausing options.interval between reads (the
// last pause cut short so that one read falls on the timeout). A document without a status is
// InvalidArgument; fetch's failures that end the wait come back as they are.
Result<ExecutionWaitResult> WaitForExecution(const ExecutionWaitIo& io,
                                             const ExecutionWaitOptions& options);

}  // namespace toolgate::cli
