#include "toolgate/base/log.h"

#include <gtest/gtest.h>

#include <future>
#include <mutex>
#include <string>
#include <vector>

namespace toolgate::log {
namespace {

// A sink that records each write and can hold the writer thread inside its first write, so
// that the lines logged meanwhile pile up in the queue.
class HeldSink {
 public:
  LineWriter::Sink sink() {
    return [this](std::string_view text) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        writes_.emplace_back(text);
        if (writes_.size() != 1) return;
      }
      entered_.set_value();
      released_.wait();
    };
  }
  void WaitUntilHeld() { entered_.get_future().wait(); }
  void Release() { release_.set_value(); }
  std::vector<std::string> writes() {
    std::lock_guard<std::mutex> lock(mu_);
    return writes_;
  }

 private:
  std::mutex mu_;
  std::vector<std::string> writes_;
  std::promise<void> entered_;
  std::promise<void> release_;
  std::shared_future<void> released_ = release_.get_future().share();
};

TEST(LineWriterTest, LinesThatPileUpAreWrittenInOneGo) {
  HeldSink held;
  LineWriter writer(held.sink(), 100);
  writer.Write(Level::kInfo, "a\n");
  held.WaitUntilHeld();
  for (const char* line : {"b\n", "c\n", "d\n"}) writer.Write(Level::kInfo, line);
  held.Release();
  writer.Flush();
  EXPECT_EQ(held.writes(), (std::vector<std::string>{"a\n", "b\nc\nd\n"}));
}

TEST(LineWriterTest, AFullQueueDropsInfoLinesAndCountsThemWithoutWaiting) {
  HeldSink held;
  LineWriter writer(held.sink(), 2);
  writer.Write(Level::kInfo, "a\n");
  held.WaitUntilHeld();  // the writer holds a; two lines may wait
  writer.Write(Level::kInfo, "b\n");
  writer.Write(Level::kDebug, "c\n");
  writer.Write(Level::kInfo, "dropped\n");  // returns although the writer is stuck
  EXPECT_EQ(writer.dropped(), 1u);
  held.Release();
  writer.Flush();
  EXPECT_EQ(held.writes(), (std::vector<std::string>{"a\n", "b\nc\n"}));
}

TEST(LineWriterTest, AnErrorIsWrittenBeforeWriteReturnsAfterTheLinesBeforeIt) {
  std::mutex mu;
  std::string written;
  LineWriter writer(
      [&](std::string_view text) {
        std::lock_guard<std::mutex> lock(mu);
        written += text;
      },
      100);
  writer.Write(Level::kInfo, "before\n");
  writer.Write(Level::kError, "error\n");
  std::lock_guard<std::mutex> lock(mu);
  EXPECT_EQ(written, "before\nerror\n");
}

TEST(LineWriterTest, AWarningIsNeverDroppedEvenWhenTheQueueIsFull) {
  HeldSink held;
  LineWriter writer(held.sink(), 1);
  writer.Write(Level::kInfo, "a\n");
  held.WaitUntilHeld();
  writer.Write(Level::kInfo, "b\n");  // the queue is full now
  auto warned = std::async(std::launch::async, [&] { writer.Write(Level::kWarn, "warn\n"); });
  held.Release();
  warned.get();
  writer.Flush();
  EXPECT_EQ(writer.dropped(), 0u);
  std::string all;
  for (const std::string& w : held.writes()) all += w;
  EXPECT_EQ(all, "a\nb\nwarn\n");
}

TEST(LineWriterTest, StoppingWritesEverythingQueued) {
  HeldSink held;
  {
    LineWriter writer(held.sink(), 100);
    writer.Write(Level::kInfo, "a\n");
    held.WaitUntilHeld();
    writer.Write(Level::kInfo, "b\n");
    writer.Write(Level::kInfo, "c\n");
    held.Release();
  }  // the destructor: a clean stop loses nothing
  EXPECT_EQ(held.writes(), (std::vector<std::string>{"a\n", "b\nc\n"}));
}

}  // namespace
}  // namespace toolgate::log
