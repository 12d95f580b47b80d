#include "toolgate/executor/runtime.h"

#include <simdjson.h>

#include "toolgate/core/handler_result.h"
#include "toolgate/metrics/metrics.h"

namespace toolgate::executor {

void CompleteWithReturnValue(std::string_view returned_json, const RuntimeLimits& limits,
                             ExecutionOutcome* out) {
  core::HandlerResult result = core::NormalizeHandlerResult(returned_json);
  if (result.body.size() > limits.max_response_bytes) {
    CompleteWithError("ResponseTooLarge",
                      "the response body is " + std::to_string(result.body.size()) +
                          " bytes, over the limit of " + std::to_string(limits.max_response_bytes) +
                          " bytes",
                      out);
    return;
  }
  out->kind = ExecutionOutcome::Kind::kCompleted;
  out->status_code = result.status_code;
  out->body = std::move(result.body);
}

void CompleteWithError(std::string_view type, std::string_view message, ExecutionOutcome* out) {
  constexpr size_t kMaxMessageBytes = 8 << 10;
  std::string text = ToValidUtf8(message.substr(0, kMaxMessageBytes));
  if (message.size() > kMaxMessageBytes) text += " [truncated]";
  out->kind = ExecutionOutcome::Kind::kCompleted;
  out->status_code = 500;
  out->body = core::ErrorBody(type, text);
}

int64_t MemoryUsedMb(size_t peak_bytes) {
  constexpr size_t kMiB = size_t{1} << 20;
  size_t mb = (peak_bytes + kMiB - 1) / kMiB;
  return mb < 1 ? 1 : static_cast<int64_t>(mb);
}

namespace {

// The length of the well-formed UTF-8 sequence at the start of s (RFC 3629: no overlong forms,
// no surrogates, nothing past U+10FFFF), or 0 when it is not one.
size_t Utf8SequenceLength(std::string_view s) {
  auto byte = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  unsigned char b0 = byte(0);
  if (b0 < 0x80) return 1;
  size_t n;
  unsigned char lo = 0x80, hi = 0xBF;  // the allowed range of the second byte
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    n = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    n = 3;
    if (b0 == 0xE0) lo = 0xA0;  // overlong
    if (b0 == 0xED) hi = 0x9F;  // surrogates
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    n = 4;
    if (b0 == 0xF0) lo = 0x90;  // overlong
    if (b0 == 0xF4) hi = 0x8F;  // past U+10FFFF
  } else {
    return 0;
  }
  if (s.size() < n) return 0;
  if (byte(1) < lo || byte(1) > hi) return 0;
  for (size_t i = 2; i < n; ++i) {
    if (byte(i) < 0x80 || byte(i) > 0xBF) return 0;
  }
  return n;
}

}  // namespace

std::string ToValidUtf8(std::string_view text) {
  if (simdjson::validate_utf8(text.data(), text.size())) return std::string(text);
  std::string out;
  out.reserve(text.size() + 16);
  while (!text.empty()) {
    size_t n = Utf8SequenceLength(text);
    if (n == 0) {
      out += "\xEF\xBF\xBD";  // U+FFFD REPLACEMENT CHARACTER
      n = 1;
    } else {
      out.append(text.substr(0, n));
    }
    text.remove_prefix(n);
  }
  return out;
}

bool IsNoticeLevel(std::string_view level) {
  for (std::string_view known : kNoticeLevels) {
    if (level == known) return true;
  }
  return false;
}

namespace {

void CountNoticesDropped(size_t n) {
  static metrics::Counter& dropped =
      metrics::Registry::Global()
          .Counter("toolgate_executor_notices_dropped_total",
                   "Notices of running handlers (progress, log) dropped: past their call's "
                   "bounds, oversized or malformed.")
          .With({});
  dropped.Inc(n);
}

}  // namespace

void BoundedNoticeSink::Offer(Notice&& notice) {
  const size_t size = notice.data_json.size() + notice.message.size() + notice.logger.size();
  if (delivered_ >= limits_.max_notices || size > limits_.max_notice_bytes ||
      bytes_ + size > limits_.max_total_bytes ||
      (notice.kind == Notice::Kind::kLog && !IsNoticeLevel(notice.level))) {
    Drop();
    return;
  }
  ++delivered_;
  bytes_ += size;
  deliver_(notice);
}

void BoundedNoticeSink::Drop(size_t n) {
  dropped_ += n;
  CountNoticesDropped(n);
}

void LogBuffer::Append(std::string_view text) {
  if (truncated_) return;
  size_t room = limit_ - text_.size();
  if (text.size() <= room) {
    text_.append(text);
    return;
  }
  text_.append(text.substr(0, room));
  text_.append("\n[truncated]\n");
  truncated_ = true;
}

}  // namespace toolgate::executor
