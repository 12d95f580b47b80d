// Structured logs: one JSON object per line on stderr.
//
//   log::Info("listening").Str("addr", addr).Int("port", port);
//
// The line is written when the temporary LogLine is destroyed, in one write(2) so that lines from
// concurrent threads never interleave. Thread-safe. Never pass a secret value, an API key or a
// request body: logs are shipped to dashboards.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "toolgate/base/json_writer.h"

namespace toolgate::log {

enum class Level { kDebug, kInfo, kWarn, kError };

// Names the process in every line ("service" field) and sets the minimum level.
void Init(std::string_view service, Level min_level = Level::kInfo);
// Parses "debug", "info", "warn" or "error"; anything else is kInfo.
Level ParseLevel(std::string_view name);

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
  bool enabled_;
  JsonWriter w_;
};

inline LogLine Debug(std::string_view msg) { return LogLine(Level::kDebug, msg); }
inline LogLine Info(std::string_view msg) { return LogLine(Level::kInfo, msg); }
inline LogLine Warn(std::string_view msg) { return LogLine(Level::kWarn, msg); }
inline LogLine Error(std::string_view msg) { return LogLine(Level::kError, msg); }

}  // namespace toolgate::log
