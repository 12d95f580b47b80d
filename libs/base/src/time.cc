#include "toolgate/base/time.h"

#include <charconv>
#include <chrono>
#include <climits>
#include <cstdio>
#include <ctime>

namespace toolgate {

int64_t NowMs() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

int64_t MonotonicUs() {
  using namespace std::chrono;
  return duration_cast<microseconds>(steady_clock::now().time_since_epoch()).count();
}

namespace {

std::string Format(int64_t epoch_ms, bool millis) {
  int64_t secs = epoch_ms >= 0 ? epoch_ms / 1000 : (epoch_ms - 999) / 1000;
  int ms = static_cast<int>(epoch_ms - secs * 1000);
  time_t t = static_cast<time_t>(secs);
  struct tm tm;
  gmtime_r(&t, &tm);
  char buf[64];
  if (millis) {
    std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                  tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ms);
  } else {
    std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02dZ", tm.tm_year + 1900,
                  tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
  }
  return buf;
}

bool Digits(std::string_view s, size_t pos, size_t n, int* out) {
  if (pos + n > s.size()) return false;
  int v = 0;
  for (size_t i = pos; i < pos + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    v = v * 10 + (s[i] - '0');
  }
  *out = v;
  return true;
}

}  // namespace

std::string FormatRfc3339(int64_t epoch_ms) {
  return Format(epoch_ms, false);
}
std::string FormatRfc3339Millis(int64_t epoch_ms) {
  // Every log line asks for the time, mostly the same second as the line before: each thread
  // keeps that second's text and writes only the milliseconds anew. (gmtime_r takes glibc's
  // time-zone lock, shared by every thread, and snprintf was a visible share of a span's cost.)
  thread_local int64_t cached_secs = INT64_MIN;
  thread_local std::string cached;  // "YYYY-MM-DDTHH:MM:SS" of cached_secs
  const int64_t secs = epoch_ms >= 0 ? epoch_ms / 1000 : (epoch_ms - 999) / 1000;
  if (secs != cached_secs) {
    cached = Format(secs * 1000, false);
    cached.pop_back();  // its "Z"
    cached_secs = secs;
  }
  const auto ms = static_cast<int>(epoch_ms - secs * 1000);
  std::string out;
  out.reserve(cached.size() + 5);
  out += cached;
  out += '.';
  out += static_cast<char>('0' + ms / 100);
  out += static_cast<char>('0' + ms / 10 % 10);
  out += static_cast<char>('0' + ms % 10);
  out += 'Z';
  return out;
}

std::optional<int64_t> ParseRfc3339(std::string_view s) {
  int year, mon, day, hour = 0, min = 0, sec = 0;
  if (!Digits(s, 0, 4, &year) || s.size() < 10 || s[4] != '-' || !Digits(s, 5, 2, &mon) ||
      s[7] != '-' || !Digits(s, 8, 2, &day)) {
    return std::nullopt;
  }
  size_t pos = 10;
  int64_t frac_ms = 0;
  int64_t offset_s = 0;
  if (s.size() > 10) {
    if ((s[10] != 'T' && s[10] != 't') || !Digits(s, 11, 2, &hour) || s.size() < 19 ||
        s[13] != ':' || !Digits(s, 14, 2, &min) || s[16] != ':' || !Digits(s, 17, 2, &sec)) {
      return std::nullopt;
    }
    pos = 19;
    if (pos < s.size() && s[pos] == '.') {
      ++pos;
      size_t start = pos;
      int64_t scale = 100;
      while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
        frac_ms += (s[pos] - '0') * scale;
        scale /= 10;
        ++pos;
      }
      if (pos == start) return std::nullopt;
    }
    if (pos >= s.size()) return std::nullopt;
    if (s[pos] == 'Z' || s[pos] == 'z') {
      ++pos;
    } else if (s[pos] == '+' || s[pos] == '-') {
      int oh, om;
      if (!Digits(s, pos + 1, 2, &oh) || pos + 3 >= s.size() || s[pos + 3] != ':' ||
          !Digits(s, pos + 4, 2, &om) || oh > 23 || om > 59) {
        return std::nullopt;
      }
      offset_s = (oh * 3600 + om * 60) * (s[pos] == '+' ? 1 : -1);
      pos += 6;
    } else {
      return std::nullopt;
    }
    if (pos != s.size()) return std::nullopt;
  }
  static const int kDays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (mon < 1 || mon > 12 || day < 1 || day > kDays[mon - 1] || hour > 23 || min > 59 || sec > 60) {
    return std::nullopt;
  }
  bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  if (mon == 2 && day == 29 && !leap) return std::nullopt;
  // Days from civil (Howard Hinnant's algorithm).
  int y = year - (mon <= 2 ? 1 : 0);
  int era = (y >= 0 ? y : y - 399) / 400;
  unsigned yoe = static_cast<unsigned>(y - era * 400);
  unsigned doy = (153 * (mon + (mon > 2 ? -3 : 9)) + 2) / 5 + day - 1;
  unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  int64_t days = static_cast<int64_t>(era) * 146097 + static_cast<int64_t>(doe) - 719468;
  int64_t secs = days * 86400 + hour * 3600 + min * 60 + sec - offset_s;
  return secs * 1000 + frac_ms;
}

}  // namespace toolgate
