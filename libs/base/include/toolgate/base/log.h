// Structured logs: one JSON object per line on stderr.
//
//   log::Info("listening").Str("addr", addr).Int("port", port);
//
// The line is formed when the temporary LogLine is destroyed and queued for one writer thread,
// which writes whatever has queued in one write(2): a span ending on an event loop costs no
// system call, and lines from concurrent threads never interleave. The queue is bounded: past
// it, debug and info lines are dropped and counted (DroppedLines), while warnings and errors are
// written all the same. An error line is on stderr, after every line logged before it, when
// log::Error's statement ends, so that it survives the abort that may follow. Flush runs at exit;
// what is queued when the process dies by a signal or _exit is lost.
//
// Thread-safe. Never pass a secret value, an API key or a request body: logs are shipped to
// dashboards.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "toolgate/base/json_writer.h"

namespace toolgate::log {

enum class Level { kDebug, kInfo, kWarn, kError };

// The queue and writer thread behind the process's log (exposed for tests, which give it a sink
// of their own). Thread-safe.
class LineWriter {
 public:
  // Receives whole lines, a batch at a time; called from the writer thread, and from the
  // thread logging a warning or an error when the queue is full. Must be thread-safe.
  using Sink = std::function<void(std::string_view lines)>;

  // Starts the writer thread; at most max_queued lines wait for it. After each write, debug and
  // info lines gather for up to linger before the next (BatchQueue's linger), so that under load
  // the thread wakes once per linger rather than once per line; a warning, an error or Flush
  // ends the wait at once.
  LineWriter(Sink sink, size_t max_queued,
             std::chrono::milliseconds linger = std::chrono::milliseconds(20));
  // Writes what is queued, then stops the thread.
  ~LineWriter();
  LineWriter(const LineWriter&) = delete;
  LineWriter& operator=(const LineWriter&) = delete;

  // Queues line (one JSON object and its '\n'). A full queue drops a debug or info line
  // (counted) and writes a warning or an error itself, after what was queued. An error line
  // is written before Write returns.
  void Write(Level level, std::string line);
  // Waits until every line queued before the call is written.
  void Flush();
  // Lines dropped because the queue was full.
  uint64_t dropped() const;

 private:
  struct Queue;
  Sink sink_;
  std::unique_ptr<Queue> queue_;
};

// Names the process in every line ("service" field) and sets the minimum level.
void Init(std::string_view service, Level min_level = Level::kInfo);
// Parses "debug", "info", "warn" or "error"; anything else is kInfo.
Level ParseLevel(std::string_view name);

// Waits until every line logged before the call is on stderr. Runs at exit (std::atexit); a
// process that stops by other means (a signal handler's clean stop) calls it before it ends.
// Does nothing in a forked child, which has no writer thread.
void Flush();
// Debug and info lines dropped so far because the writer had fallen behind.
uint64_t DroppedLines();

class LogLine {
 public:
  LogLine(Level level, std::string_view msg);
  ~LogLine();
  LogLine(const LogLine&) = delete;
  LogLine& operator=(const LogLine&) = delete;

  LogLine& Str(std::string_view key, std::string_view value);
  LogLine& Int(std::string_view key, int64_t value);
  LogLine& Bool(std::string_view key, bool value);

 private:
  Level level_;
  bool enabled_;
  JsonWriter w_;
};

inline LogLine Debug(std::string_view msg) {
  return LogLine(Level::kDebug, msg);
}
inline LogLine Info(std::string_view msg) {
  return LogLine(Level::kInfo, msg);
}
inline LogLine Warn(std::string_view msg) {
  return LogLine(Level::kWarn, msg);
}
inline LogLine Error(std::string_view msg) {
  return LogLine(Level::kError, msg);
}

}  // namespace toolgate::log
