#include "toolgate/base/log.h"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <string>
#include <vector>

#include "toolgate/base/batch_queue.h"
#include "toolgate/base/time.h"

namespace toolgate::log {

struct LineWriter::Queue {
  Queue(const Sink& sink, size_t max_queued, std::chrono::milliseconds linger)
      : lines(
            kMaxBatchLines,
            [&sink](std::vector<std::string> batch) {
              if (batch.size() == 1) return sink(batch.front());
              std::string text;
              size_t bytes = 0;
              for (const std::string& line : batch) bytes += line.size();
              text.reserve(bytes);
              for (const std::string& line : batch) text += line;
              sink(text);
            },
            max_queued, linger) {}

  static constexpr size_t kMaxBatchLines = 1024;
  BatchQueue<std::string> lines;
};

LineWriter::LineWriter(Sink sink, size_t max_queued, std::chrono::milliseconds linger)
    : sink_(std::move(sink)), queue_(std::make_unique<Queue>(sink_, max_queued, linger)) {}

LineWriter::~LineWriter() {
  queue_->lines.Stop();
}

void LineWriter::Write(Level level, std::string line) {
  if (level < Level::kWarn) {
    queue_->lines.Push(std::move(line));  // dropped and counted when full
    return;
  }
  queue_->lines.Hurry();               // a warning waits for no linger
  if (!queue_->lines.TryPush(line)) {  // full: written here, after what is queued
    queue_->lines.Flush();
    sink_(line);
    return;
  }
  if (level == Level::kError) queue_->lines.Flush();
}

void LineWriter::Flush() {
  queue_->lines.Flush();
}

uint64_t LineWriter::dropped() const {
  return queue_->lines.dropped();
}

namespace {

constexpr size_t kMaxQueuedLines = 16384;

// Writes all of text to stderr; a write that fails (stderr closed) loses the rest.
void WriteToStderr(std::string_view text) {
  while (!text.empty()) {
    ssize_t n = ::write(STDERR_FILENO, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    text.remove_prefix(static_cast<size_t>(n));
  }
}

std::atomic<pid_t> g_writer_pid{0};  // the process whose thread the writer runs in

// The process's writer, started by its first line and never destroyed: lines may be logged
// until the very end, from static destructors too.
LineWriter& ProcessWriter() {
  static LineWriter* writer = [] {
    auto* w = new LineWriter(WriteToStderr, kMaxQueuedLines);
    g_writer_pid = ::getpid();
    std::atexit(Flush);
    return w;
  }();
  return *writer;
}

std::string& ServiceName() {
  static std::string name = "toolgate";
  return name;
}
std::atomic<int> g_min_level{static_cast<int>(Level::kInfo)};

const char* LevelName(Level level) {
  switch (level) {
    case Level::kDebug:
      return "debug";
    case Level::kInfo:
      return "info";
    case Level::kWarn:
      return "warn";
    case Level::kError:
      return "error";
  }
  return "info";
}

}  // namespace

void Init(std::string_view service, Level min_level) {
  ServiceName() = std::string(service);
  g_min_level = static_cast<int>(min_level);
}

void Flush() {
  if (::getpid() != g_writer_pid) return;  // no line yet, or a forked child
  ProcessWriter().Flush();
}

uint64_t DroppedLines() {
  return g_writer_pid == 0 ? 0 : ProcessWriter().dropped();
}

Level ParseLevel(std::string_view name) {
  if (name == "debug") return Level::kDebug;
  if (name == "warn") return Level::kWarn;
  if (name == "error") return Level::kError;
  return Level::kInfo;
}

LogLine::LogLine(Level level, std::string_view msg)
    : level_(level),
      enabled_(static_cast<int>(level) >= g_min_level.load(std::memory_order_relaxed)) {
  if (!enabled_) return;
  w_.BeginObject()
      .Field("ts", FormatRfc3339Millis(NowMs()))
      .Field("level", LevelName(level))
      .Field("service", ServiceName())
      .Field("msg", msg);
}

LogLine::~LogLine() {
  if (!enabled_) return;
  w_.EndObject();
  std::string line = w_.Take();
  line.push_back('\n');
  ProcessWriter().Write(level_, std::move(line));
}

LogLine& LogLine::Str(std::string_view key, std::string_view value) {
  if (enabled_) w_.Field(key, value);
  return *this;
}

LogLine& LogLine::Int(std::string_view key, int64_t value) {
  if (enabled_) w_.Field(key, value);
  return *this;
}

LogLine& LogLine::Bool(std::string_view key, bool value) {
  if (enabled_) w_.Field(key, value);
  return *this;
}

}  // namespace toolgate::log
