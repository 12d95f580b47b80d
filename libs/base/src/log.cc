#include "toolgate/base/log.h"

#include <unistd.h>

#include <atomic>
#include <string>

#include "toolgate/base/time.h"

namespace toolgate::log {
namespace {

std::string& ServiceName() {
  static std::string name = "toolgate";
  return name;
}
std::atomic<int> g_min_level{static_cast<int>(Level::kInfo)};

const char* LevelName(Level level) {
  switch (level) {
    case Level::kDebug: return "debug";
    case Level::kInfo: return "info";
    case Level::kWarn: return "warn";
    case Level::kError: return "error";
  }
  return "info";
}

}  // namespace

void Init(std::string_view service, Level min_level) {
  ServiceName() = std::string(service);
  g_min_level = static_cast<int>(min_level);
}

Level ParseLevel(std::string_view name) {
  if (name == "debug") return Level::kDebug;
  if (name == "warn") return Level::kWarn;
  if (name == "error") return Level::kError;
  return Level::kInfo;
}

LogLine::LogLine(Level level, std::string_view msg)
    : enabled_(static_cast<int>(level) >= g_min_level.load(std::memory_order_relaxed)) {
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
  // One write per line keeps concurrent lines whole; a short write to stderr is not retried.
  ssize_t n = ::write(STDERR_FILENO, line.data(), line.size());
  (void)n;
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
