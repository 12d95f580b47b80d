#include "execution_feed.h"

#include <algorithm>

#include "toolgate/base/json.h"

namespace toolgate::cli {

Result<std::vector<std::string>> ExecutionFeed::Poll() {
  std::vector<std::string> fresh;  // newest first while collecting
  std::string cursor;
  for (int page = 0; page < max_pages_; ++page) {
    auto read = fetch_(cursor);
    if (!read.ok()) return read.status();
    bool met = false;
    for (const auto& id : read->ids) {
      if (id == newest_seen_) {
        met = true;
        break;
      }
      fresh.push_back(id);
    }
    // The first poll only needs the newest id; an empty list has no place to meet.
    if (met || !started_ || read->next_cursor.empty()) break;
    cursor = read->next_cursor;
  }
  if (!fresh.empty()) newest_seen_ = fresh.front();
  if (!started_) {
    started_ = true;
    fresh.resize(std::min(fresh.size(), backlog_));
  }
  std::reverse(fresh.begin(), fresh.end());
  return fresh;
}

std::string ExecutionStatusOf(std::string_view document_json) {
  auto doc = ParseJson(document_json);
  simdjson::dom::object obj;
  std::string status;
  if (doc.ok() && doc->root.get_object().get(obj) == simdjson::SUCCESS) {
    GetString(obj, "status", &status);
  }
  return status;
}

bool IsFinalExecutionStatus(std::string_view status) {
  return status == "succeeded" || status == "failed" || status == "timed_out" ||
         status == "cancelled";
}

Result<ExecutionWaitResult> WaitForExecution(const ExecutionWaitIo& io,
                                             const ExecutionWaitOptions& options) {
  using std::chrono::milliseconds;
  const auto start = io.now();
  ExecutionWaitResult out;
  bool read_once = false;
  while (true) {
    auto document = io.fetch();
    if (document.ok()) {
      std::string status = ExecutionStatusOf(*document);
      if (status.empty()) {
        return Status::InvalidArgument("the server's answer has no execution status: " + *document);
      }
      if (status != out.status && io.on_status) io.on_status(status);
      out.status = std::move(status);
      out.document = std::move(*document);
      read_once = true;
      if (IsFinalExecutionStatus(out.status)) {
        out.finished = true;
        return out;
      }
    } else {
      const Status::Code code = document.status().code();
      const bool passing = code == Status::Code::kUnavailable || code == Status::Code::kTimeout;
      if (!read_once || !passing) return document.status();
      if (io.on_retry) io.on_retry(document.status());
    }
    milliseconds pause = options.interval;
    if (options.timeout) {
      const auto elapsed = std::chrono::duration_cast<milliseconds>(io.now() - start);
      if (elapsed >= *options.timeout) return out;  // finished stays false
      pause = std::min(pause, *options.timeout - elapsed);
    }
    io.pause(pause);
  }
}

}  // namespace toolgate::cli
