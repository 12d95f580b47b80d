#include "execution_feed.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <deque>

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

// ---- WaitForExecution ----

using std::chrono::milliseconds;

// One execution's documents as the API would answer them, in turn, on a clock that only the
// waiter's pauses move.
class FakeExecution {
 public:
  void Then(const std::string& status) {
    answers_.push_back(R"({"execution_id":"x1","status":")" + status + R"("})");
  }
  void ThenFail(Status failure) { answers_.push_back(std::move(failure)); }

  ExecutionWaitIo Io() {
    ExecutionWaitIo io;
    io.fetch = [this]() -> Result<std::string> {
      ++reads;
      read_at.push_back(std::chrono::duration_cast<milliseconds>(now_ - start_));
      // The last answer stands once the script runs out (an execution that stays queued).
      Result<std::string> answer = answers_.front();
      if (answers_.size() > 1) answers_.pop_front();
      return answer;
    };
    io.pause = [this](milliseconds pause) {
      pauses.push_back(pause);
      now_ += pause;
    };
    io.now = [this] { return now_; };
    io.on_status = [this](const std::string& status) { statuses.push_back(status); };
    io.on_retry = [this](const Status& failure) { retries.push_back(failure.message()); };
    return io;
  }

  int reads = 0;
  std::vector<milliseconds> read_at;  // since the start
  std::vector<milliseconds> pauses;
  std::vector<std::string> statuses;  // each new one
  std::vector<std::string> retries;

 private:
  std::deque<Result<std::string>> answers_;
  std::chrono::steady_clock::time_point start_{};
  std::chrono::steady_clock::time_point now_{};
};

ExecutionWaitOptions Every(milliseconds interval, std::optional<milliseconds> timeout = {}) {
  ExecutionWaitOptions options;
  options.interval = interval;
  options.timeout = timeout;
  return options;
}

TEST(ExecutionWaitTest, FinalStatusesAreTheFourEndings) {
  for (const char* status : {"succeeded", "failed", "timed_out", "cancelled"}) {
    EXPECT_TRUE(IsFinalExecutionStatus(status)) << status;
  }
  for (const char* status : {"queued", "running", "", "paused"}) {
    EXPECT_FALSE(IsFinalExecutionStatus(status)) << status;
  }
  EXPECT_EQ(ExecutionStatusOf(R"({"status":"running","async":true})"), "running");
  EXPECT_EQ(ExecutionStatusOf(R"({"status":7})"), "");
  EXPECT_EQ(ExecutionStatusOf("not json"), "");
}

TEST(ExecutionWaitTest, PollsEveryIntervalUntilTheStatusIsFinal) {
  FakeExecution api;
  api.Then("queued");
  api.Then("queued");
  api.Then("running");
  api.Then("succeeded");
  auto waited = WaitForExecution(api.Io(), Every(milliseconds(500)));
  ASSERT_TRUE(waited.ok()) << waited.status().ToString();
  EXPECT_TRUE(waited->finished);
  EXPECT_EQ(waited->status, "succeeded");
  EXPECT_EQ(waited->document, R"({"execution_id":"x1","status":"succeeded"})");
  EXPECT_EQ(api.reads, 4);
  EXPECT_EQ(api.pauses, std::vector<milliseconds>(3, milliseconds(500)));
  EXPECT_EQ(api.statuses, (std::vector<std::string>{"queued", "running", "succeeded"}));
}

TEST(ExecutionWaitTest, AFinishedExecutionIsReadOnceWithoutAPause) {
  for (const char* ending : {"failed", "timed_out", "cancelled", "succeeded"}) {
    FakeExecution api;
    api.Then(ending);
    auto waited = WaitForExecution(api.Io(), Every(milliseconds(1000), milliseconds(5000)));
    ASSERT_TRUE(waited.ok());
    EXPECT_TRUE(waited->finished);
    EXPECT_EQ(waited->status, ending);
    EXPECT_EQ(api.reads, 1);
    EXPECT_TRUE(api.pauses.empty());
  }
}

TEST(ExecutionWaitTest, TheTimeoutEndsTheWaitWithOneLastReadOnIt) {
  FakeExecution api;
  api.Then("running");  // for ever
  auto waited = WaitForExecution(api.Io(), Every(milliseconds(1000), milliseconds(2500)));
  ASSERT_TRUE(waited.ok());
  EXPECT_FALSE(waited->finished);
  EXPECT_EQ(waited->status, "running");
  // Reads at 0, 1000, 2000 and 2500 ms: the last pause is cut short to fall on the timeout.
  EXPECT_EQ(api.read_at, (std::vector<milliseconds>{milliseconds(0), milliseconds(1000),
                                                    milliseconds(2000), milliseconds(2500)}));
  EXPECT_EQ(api.statuses, std::vector<std::string>{"running"});
}

TEST(ExecutionWaitTest, APassingFailureIsReportedAndWaitedThrough) {
  FakeExecution api;
  api.Then("running");
  api.ThenFail(Status::Unavailable("connection refused"));
  api.ThenFail(Status::Timeout("no answer"));
  api.Then("succeeded");
  auto waited = WaitForExecution(api.Io(), Every(milliseconds(100)));
  ASSERT_TRUE(waited.ok()) << waited.status().ToString();
  EXPECT_TRUE(waited->finished);
  EXPECT_EQ(waited->status, "succeeded");
  EXPECT_EQ(api.retries, (std::vector<std::string>{"connection refused", "no answer"}));
}

TEST(ExecutionWaitTest, ARefusalOrAFirstFailureEndsTheWait) {
  {
    FakeExecution api;
    api.Then("queued");
    api.ThenFail(Status::InvalidArgument("Not found: no execution with this id"));
    auto waited = WaitForExecution(api.Io(), Every(milliseconds(100)));
    ASSERT_FALSE(waited.ok());
    EXPECT_EQ(waited.status().message(), "Not found: no execution with this id");
    EXPECT_EQ(api.reads, 2);
  }
  {
    // Nothing was ever read: a wrong URL or a stopped server is not waited on.
    FakeExecution api;
    api.ThenFail(Status::Unavailable("connection refused"));
    auto waited = WaitForExecution(api.Io(), Every(milliseconds(100), milliseconds(60000)));
    ASSERT_FALSE(waited.ok());
    EXPECT_EQ(api.reads, 1);
    EXPECT_TRUE(api.retries.empty());
  }
}

TEST(ExecutionWaitTest, ADocumentWithoutAStatusIsAnError) {
  FakeExecution api;
  ExecutionWaitIo io = api.Io();
  io.fetch = []() -> Result<std::string> { return std::string(R"({"execution_id":"x1"})"); };
  auto waited = WaitForExecution(io, Every(milliseconds(100)));
  ASSERT_FALSE(waited.ok());
  EXPECT_EQ(waited.status().code(), Status::Code::kInvalidArgument);
}

}  // namespace
}  // namespace toolgate::cli
