// NoticeRecorder: a call's notices as the executor passes them on (BoundedNoticeSink, the real
// bounds), kept for a test to look at; and the five notices of the runtimes' notice handlers.
#pragma once

#include <gtest/gtest.h>

#include <vector>

#include "toolgate/executor/runtime.h"

namespace toolgate::executor::testing {

// Not thread-safe, like the sink: the thread that runs the call offers the notices.
struct NoticeRecorder {
  std::vector<Notice> seen;
  BoundedNoticeSink sink{[this](const Notice& n) { seen.push_back(n); }};
};

// What a handler that calls, in this order, progress(1, 3, "one"), progress(2, 3),
// log("info", {"step": 2}, "steps"), progress(3) and log("warning", "almost") reports.
inline void ExpectTheFiveNotices(const std::vector<Notice>& seen) {
  ASSERT_EQ(seen.size(), 5u);
  EXPECT_EQ(seen[0].kind, Notice::Kind::kProgress);
  EXPECT_EQ(seen[0].progress, 1);
  EXPECT_TRUE(seen[0].has_total);
  EXPECT_EQ(seen[0].total, 3);
  EXPECT_EQ(seen[0].message, "one");
  EXPECT_EQ(seen[1].kind, Notice::Kind::kProgress);
  EXPECT_EQ(seen[1].progress, 2);
  EXPECT_TRUE(seen[1].has_total);
  EXPECT_EQ(seen[1].total, 3);
  EXPECT_EQ(seen[1].message, "");
  EXPECT_EQ(seen[2].kind, Notice::Kind::kLog);
  EXPECT_EQ(seen[2].level, "info");
  EXPECT_EQ(seen[2].data_json, R"({"step":2})");
  EXPECT_EQ(seen[2].logger, "steps");
  EXPECT_EQ(seen[3].kind, Notice::Kind::kProgress);
  EXPECT_EQ(seen[3].progress, 3);
  EXPECT_FALSE(seen[3].has_total);
  EXPECT_EQ(seen[4].kind, Notice::Kind::kLog);
  EXPECT_EQ(seen[4].level, "warning");
  EXPECT_EQ(seen[4].data_json, R"("almost")");
  EXPECT_EQ(seen[4].logger, "");
}

}  // namespace toolgate::executor::testing
