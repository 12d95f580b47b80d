#include "toolgate/webhook/dispatcher.h"

#include <gtest/gtest.h>

#include <chrono>
#include <deque>
#include <mutex>
#include <thread>

#include "toolgate/base/crypto.h"

namespace toolgate::webhook {
namespace {

// Answers each attempt with the next scripted outcome (kDelivered once the script is spent) and
// records what was attempted.
class ScriptedTransport : public Transport {
 public:
  explicit ScriptedTransport(std::deque<AttemptOutcome> script) : script_(std::move(script)) {}

  AttemptResult Attempt(const Request& request, int64_t timestamp_s) override {
    std::lock_guard<std::mutex> lock(mu_);
    attempts_.push_back({request.message_id, timestamp_s});
    AttemptResult result;
    if (script_.empty()) {
      result.outcome = AttemptOutcome::kDelivered;
      result.status = 200;
    } else {
      result.outcome = script_.front();
      script_.pop_front();
    }
    return result;
  }

  std::vector<std::pair<std::string, int64_t>> attempts() {
    std::lock_guard<std::mutex> lock(mu_);
    return attempts_;
  }

 private:
  std::mutex mu_;
  std::deque<AttemptOutcome> script_;
  std::vector<std::pair<std::string, int64_t>> attempts_;
};

struct Ended {
  std::mutex mu;
  std::vector<std::pair<AttemptOutcome, int>> results;  // last outcome, attempts
  size_t size() {
    std::lock_guard<std::mutex> lock(mu);
    return results.size();
  }
};

// Fast retries, so the test runs in milliseconds.
Dispatcher::Options FastOptions(int max_attempts = 4) {
  Dispatcher::Options options;
  options.source = "dispatcher_test";
  options.retry.max_attempts = max_attempts;
  options.retry.initial_backoff_ms = 1;
  options.retry.max_backoff_ms = 4;
  options.retry.max_total_ms = 60'000;
  return options;
}

Request Message(const std::string& id) {
  return Request{"https://hooks.example.com/", id, "{}", "key"};
}

// Waits for the condition with a deadline (the worker delivers in its own time).
bool Eventually(const std::function<bool()>& condition) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    if (condition()) return true;
    std::this_thread::yield();
  }
  return condition();
}

class DispatcherTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { InitCrypto(); }

  Dispatcher::Finished Record() {
    return [this](const Request&, const AttemptResult& last, int attempts) {
      std::lock_guard<std::mutex> lock(ended_.mu);
      ended_.results.push_back({last.outcome, attempts});
    };
  }

  Ended ended_;
};

TEST_F(DispatcherTest, RetriesA5xxAndANetworkErrorWithTheSameMessageId) {
  ScriptedTransport transport({AttemptOutcome::kRetryableHttp, AttemptOutcome::kNetworkError});
  Dispatcher dispatcher(transport, FastOptions(), Record());
  ASSERT_TRUE(dispatcher.Enqueue(Message("msg_a")));
  ASSERT_TRUE(Eventually([&] { return ended_.size() == 1; }));
  const auto attempts = transport.attempts();
  ASSERT_EQ(attempts.size(), 3u);
  for (const auto& [id, timestamp] : attempts) {
    EXPECT_EQ(id, "msg_a");
    EXPECT_GT(timestamp, 1'600'000'000);  // the attempt's wall-clock time, in seconds
  }
  EXPECT_EQ(ended_.results[0].first, AttemptOutcome::kDelivered);
  EXPECT_EQ(ended_.results[0].second, 3);
  EXPECT_EQ(dispatcher.pending(), 0u);
}

TEST_F(DispatcherTest, GivesUpAfterMaxAttempts) {
  ScriptedTransport transport(std::deque<AttemptOutcome>(10, AttemptOutcome::kRetryableHttp));
  Dispatcher dispatcher(transport, FastOptions(3), Record());
  ASSERT_TRUE(dispatcher.Enqueue(Message("msg_b")));
  ASSERT_TRUE(Eventually([&] { return ended_.size() == 1; }));
  EXPECT_EQ(transport.attempts().size(), 3u);
  EXPECT_EQ(ended_.results[0].first, AttemptOutcome::kRetryableHttp);
  EXPECT_EQ(ended_.results[0].second, 3);
}

TEST_F(DispatcherTest, NeverRetriesARejectionOrARefusedTarget) {
  ScriptedTransport transport({AttemptOutcome::kRejected, AttemptOutcome::kRefused});
  Dispatcher dispatcher(transport, FastOptions(), Record());
  ASSERT_TRUE(dispatcher.Enqueue(Message("msg_c")));
  ASSERT_TRUE(dispatcher.Enqueue(Message("msg_d")));
  ASSERT_TRUE(Eventually([&] { return ended_.size() == 2; }));
  EXPECT_EQ(transport.attempts().size(), 2u);
  EXPECT_EQ(ended_.results[0].first, AttemptOutcome::kRejected);
  EXPECT_EQ(ended_.results[1].first, AttemptOutcome::kRefused);
  EXPECT_EQ(ended_.results[0].second, 1);
  EXPECT_EQ(ended_.results[1].second, 1);
}

TEST_F(DispatcherTest, StopsRetryingOnceTheTotalBoundWouldPass) {
  ScriptedTransport transport(std::deque<AttemptOutcome>(10, AttemptOutcome::kNetworkError));
  Dispatcher::Options options = FastOptions(10);
  options.retry.initial_backoff_ms = 1000;
  options.retry.max_backoff_ms = 1000;
  options.retry.max_total_ms = 100;  // the first backoff (at least 500 ms) passes it
  Dispatcher dispatcher(transport, options, Record());
  ASSERT_TRUE(dispatcher.Enqueue(Message("msg_e")));
  ASSERT_TRUE(Eventually([&] { return ended_.size() == 1; }));
  EXPECT_EQ(transport.attempts().size(), 1u);
}

// Blocks every attempt until released, so the queue fills behind it.
class GatedTransport : public Transport {
 public:
  AttemptResult Attempt(const Request&, int64_t) override {
    std::unique_lock<std::mutex> lock(mu_);
    ++started_;
    cv_.notify_all();
    cv_.wait(lock, [&] { return open_; });
    return AttemptResult{AttemptOutcome::kDelivered, 200, ""};
  }
  void WaitStarted() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return started_ > 0; });
  }
  void Open() {
    std::lock_guard<std::mutex> lock(mu_);
    open_ = true;
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int started_ = 0;
  bool open_ = false;
};

TEST_F(DispatcherTest, AFullQueueDropsInsteadOfWaiting) {
  GatedTransport transport;
  Dispatcher::Options options = FastOptions();
  options.max_queue = 2;
  Dispatcher dispatcher(transport, options, Record());
  ASSERT_TRUE(dispatcher.Enqueue(Message("msg_1")));
  transport.WaitStarted();  // msg_1 is being attempted: the queue is empty again
  EXPECT_TRUE(dispatcher.Enqueue(Message("msg_2")));
  EXPECT_TRUE(dispatcher.Enqueue(Message("msg_3")));
  EXPECT_FALSE(dispatcher.Enqueue(Message("msg_4")));
  EXPECT_EQ(dispatcher.pending(), 3u);
  transport.Open();
  ASSERT_TRUE(Eventually([&] { return ended_.size() == 3; }));
  auto& deliveries = metrics::Registry::Global().Counter("toolgate_webhook_deliveries_total", "",
                                                         {"source", "outcome"});
  EXPECT_GE(deliveries.With({"dispatcher_test", "dropped"}).value(), 1u);
}

TEST_F(DispatcherTest, StopDropsWhatWaitsAndRefusesMore) {
  ScriptedTransport transport(std::deque<AttemptOutcome>(10, AttemptOutcome::kNetworkError));
  Dispatcher::Options options = FastOptions(10);
  options.retry.initial_backoff_ms = 60'000;  // the retry waits far beyond the test
  options.retry.max_backoff_ms = 60'000;
  Dispatcher dispatcher(transport, options, Record());
  ASSERT_TRUE(dispatcher.Enqueue(Message("msg_f")));
  ASSERT_TRUE(Eventually([&] { return transport.attempts().size() == 1; }));
  dispatcher.Stop();
  EXPECT_EQ(dispatcher.pending(), 0u);
  EXPECT_FALSE(dispatcher.Enqueue(Message("msg_g")));
  EXPECT_EQ(ended_.size(), 0u);
}

}  // namespace
}  // namespace toolgate::webhook
