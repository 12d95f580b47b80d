#include "execution_feed.h"

#include <algorithm>

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

}  // namespace toolgate::cli
