// `toolgate logs --follow`: which executions appeared since the last look. The executions API
// pages newest first with a cursor towards older ones; the feed remembers the newest execution
// it has seen and, on each poll, reads pages until it meets that one again. The transport is a
// function, so tests drive the feed with pages of their own.
//
// Not thread-safe: one feed per follower.
#pragma once

#include <functional>
#include <string>
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

}  // namespace toolgate::cli
