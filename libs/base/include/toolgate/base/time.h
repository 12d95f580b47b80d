// Wall-clock and monotonic time, and RFC 3339 formatting. All functions are thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace toolgate {

// Milliseconds since the Unix epoch (wall clock).
int64_t NowMs();
// Microseconds from a monotonic clock; only differences mean anything.
int64_t MonotonicUs();

// "2027-01-31T00:00:00Z" (seconds precision), UTC.
std::string FormatRfc3339(int64_t epoch_ms);
// "2027-01-31T00:00:00.123Z", UTC.
std::string FormatRfc3339Millis(int64_t epoch_ms);
// Accepts "YYYY-MM-DDTHH:MM:SS[.fraction](Z|+HH:MM|-HH:MM)" and a bare date "YYYY-MM-DD"
// (midnight UTC). Returns nullopt for anything else or an impossible date.
std::optional<int64_t> ParseRfc3339(std::string_view text);

}  // namespace toolgate
