#include "execution_feed.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace toolgate::cli {
namespace {

// The executions API over an in-memory list: ids newest first, pages of page_size.
class FakeExecutions {
 public:
  explicit FakeExecutions(size_t page_size) : page_size_(page_size) {}

  void Add(const std::string& id) { newest_first_.insert(newest_first_.begin(), id); }

  Result<ExecutionPage> Page(const std::string& cursor) {
    ++reads;
    if (fail_next) {
      fail_next = false;
      return Status::Unavailable("down");
    }
    size_t start = cursor.empty() ? 0 : std::stoul(cursor);
    ExecutionPage page;
    for (size_t i = start; i < newest_first_.size() && i < start + page_size_; ++i) {
      page.ids.push_back(newest_first_[i]);
    }
    if (start + page_size_ < newest_first_.size())
      page.next_cursor = std::to_string(start + page_size_);
    return page;
  }

  int reads = 0;
  bool fail_next = false;

 private:
  size_t page_size_;
  std::vector<std::string> newest_first_;
};

ExecutionFeed FeedOf(FakeExecutions& api, int max_pages = 20, size_t backlog = 0) {
  return ExecutionFeed([&api](const std::string& cursor) { return api.Page(cursor); }, backlog,
                       max_pages);
}

using Ids = std::vector<std::string>;

TEST(ExecutionFeedTest, OnlyWhatComesAfterTheFirstPollIsNew) {
  FakeExecutions api(2);
  api.Add("old1");
  api.Add("old2");
  api.Add("old3");
  ExecutionFeed feed = FeedOf(api);
  EXPECT_EQ(*feed.Poll(), Ids{});
  EXPECT_EQ(api.reads, 1);  // the newest page is enough to know where the list stands
  EXPECT_EQ(*feed.Poll(), Ids{});
  api.Add("new1");
  EXPECT_EQ(*feed.Poll(), Ids{"new1"});
  EXPECT_EQ(*feed.Poll(), Ids{});
}

TEST(ExecutionFeedTest, TheFirstPollReturnsTheBacklogOldestFirst) {
  FakeExecutions api(3);
  for (const char* id : {"e1", "e2", "e3", "e4"}) api.Add(id);
  ExecutionFeed feed = FeedOf(api, 20, 2);
  EXPECT_EQ(*feed.Poll(), (Ids{"e3", "e4"}));
  api.Add("e5");
  EXPECT_EQ(*feed.Poll(), Ids{"e5"});
  // A backlog longer than what there is: all of it.
  FakeExecutions few(3);
  few.Add("only");
  ExecutionFeed long_backlog = FeedOf(few, 20, 10);
  EXPECT_EQ(*long_backlog.Poll(), Ids{"only"});
}

TEST(ExecutionFeedTest, ABurstAcrossPagesComesOldestFirst) {
  FakeExecutions api(2);
  api.Add("old");
  ExecutionFeed feed = FeedOf(api);
  ASSERT_TRUE(feed.Poll().ok());
  for (const char* id : {"a", "b", "c", "d", "e"}) api.Add(id);
  EXPECT_EQ(*feed.Poll(), (Ids{"a", "b", "c", "d", "e"}));
}

TEST(ExecutionFeedTest, StartingFromAnEmptyList) {
  FakeExecutions api(2);
  ExecutionFeed feed = FeedOf(api);
  EXPECT_EQ(*feed.Poll(), Ids{});
  api.Add("first");
  api.Add("second");
  api.Add("third");
  EXPECT_EQ(*feed.Poll(), (Ids{"first", "second", "third"}));
}

TEST(ExecutionFeedTest, AFailedPollLosesNothing) {
  FakeExecutions api(2);
  ExecutionFeed feed = FeedOf(api);
  ASSERT_TRUE(feed.Poll().ok());
  api.Add("x");
  api.fail_next = true;
  EXPECT_FALSE(feed.Poll().ok());
  EXPECT_EQ(*feed.Poll(), Ids{"x"});
}

TEST(ExecutionFeedTest, ReadsAtMostMaxPagesPerPoll) {
  FakeExecutions api(1);
  api.Add("old");
  ExecutionFeed feed = FeedOf(api, 3);
  ASSERT_TRUE(feed.Poll().ok());
  for (const char* id : {"a", "b", "c", "d", "e"}) api.Add(id);
  api.reads = 0;
  EXPECT_EQ(*feed.Poll(), (Ids{"c", "d", "e"}));  // the newest three; older ones are skipped
  EXPECT_EQ(api.reads, 3);
  api.Add("f");
  EXPECT_EQ(*feed.Poll(), Ids{"f"});
}

}  // namespace
}  // namespace toolgate::cli
