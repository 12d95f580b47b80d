#include "toolgate/executor/worker_protocol.h"

#include <sodium.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "toolgate/base/crypto.h"
#include "toolgate/base/json.h"
#include "toolgate/base/json_writer.h"

namespace toolgate::executor::protocol {

std::string FrameHeader(FrameKind kind, size_t payload_size) {
  auto n = static_cast<uint32_t>(payload_size);
  std::string header(kHeaderBytes, '\0');
  for (int i = 0; i < 4; ++i) header[i] = static_cast<char>((n >> (8 * i)) & 0xFF);
  header[4] = static_cast<char>(kind);
  return header;
}

std::string EncodeFrame(FrameKind kind, std::string_view payload) {
  std::string frame = FrameHeader(kind, payload.size());
  frame.append(payload);
  return frame;
}

namespace {

bool IsWorkerKind(char c) {
  switch (static_cast<FrameKind>(c)) {
    case FrameKind::kReady:
    case FrameKind::kLoadError:
    case FrameKind::kValue:
    case FrameKind::kError:
    case FrameKind::kTimeout:
    case FrameKind::kStarted:
    case FrameKind::kNotice:
      return true;
    default:
      return false;
  }
}

}  // namespace

void FrameReader::Append(std::string_view bytes) {
  buffer_.erase(0, start_);
  start_ = 0;
  buffer_.append(bytes);
}

FrameReader::State FrameReader::Next(Frame* out) {
  if (buffered() < kHeaderBytes) return State::kNeedMore;
  const char* header = buffer_.data() + start_;
  uint32_t n = 0;
  for (int i = 0; i < 4; ++i)
    n |= static_cast<uint32_t>(static_cast<unsigned char>(header[i])) << (8 * i);
  if (n > max_payload_ || !IsWorkerKind(header[4])) return State::kInvalid;
  if (buffered() < kHeaderBytes + n) return State::kNeedMore;
  out->kind = static_cast<FrameKind>(header[4]);
  out->payload.assign(buffer_, start_ + kHeaderBytes, n);
  start_ += kHeaderBytes + n;
  return State::kComplete;
}

std::string NewNonce() {
  return HexEncode(RandomBytes(kNonceBytes / 2));
}

bool TakeNonce(std::string_view payload, std::string_view nonce, std::string_view* rest) {
  if (nonce.size() != kNonceBytes || payload.size() < kNonceBytes ||
      payload.substr(0, kNonceBytes) != nonce) {
    return false;
  }
  *rest = payload.substr(kNonceBytes);
  return true;
}

std::string InitPayload(std::string_view nonce, std::string_view code, int64_t memory_mb,
                        size_t max_result_bytes, const RuntimeLimits& limits,
                        std::string_view bundle_root, std::string_view handler) {
  JsonWriter w;
  w.BeginObject()
      .Field("code", code)
      .Field("memory_mb", memory_mb)
      .Field("max_result_bytes", static_cast<int64_t>(max_result_bytes))
      .Field("max_response_bytes", static_cast<int64_t>(limits.max_response_bytes))
      .Field("max_log_bytes", static_cast<int64_t>(limits.max_log_bytes))
      .Field("bundle_root", bundle_root)
      .Field("handler", handler)
      .EndObject();
  return std::string(nonce) + w.Take();
}

std::string CallPayload(std::string_view nonce, const Invocation& invocation, int64_t deadline_ms) {
  JsonWriter w;
  w.BeginObject().Key("event").Raw(invocation.event_json);
  w.Key("context")
      .BeginObject()
      .Field("execution_id", invocation.execution_id)
      .Field("function_id", invocation.function_id)
      .Field("version", invocation.version)
      .Field("caller_org_id", invocation.caller_org_id)
      .Field("deadline_ms", deadline_ms)
      .EndObject();
  w.Key("env").BeginObject();
  for (const EnvVar& var : invocation.env) w.Field(var.name, var.value);
  w.EndObject().Field("notices", invocation.notices != nullptr).EndObject();
  std::string json = w.Take();
  std::string payload(nonce);
  payload += json;
  sodium_memzero(json.data(), json.size());
  return payload;
}

bool ParseHandlerError(std::string_view payload, HandlerError* out) {
  auto doc = ParseJson(payload);
  if (!doc.ok()) return false;
  simdjson::dom::object obj;
  if (doc->root.get_object().get(obj) != simdjson::SUCCESS) return false;
  return GetString(obj, "errorType", &out->type) == Field::kOk &&
         GetString(obj, "errorMessage", &out->message) == Field::kOk;
}

namespace {

// A finite double as JSON: the shortest text that reads back the same value.
std::string NumberJson(double value) {
  char buf[32];
  for (int precision = 15; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, value);
    if (std::strtod(buf, nullptr) == value) break;
  }
  return buf;
}

}  // namespace

std::string NoticePayload(std::string_view nonce, const Notice& notice) {
  JsonWriter w;
  w.BeginObject();
  if (notice.kind == Notice::Kind::kProgress) {
    w.Field("kind", "progress").Key("progress").Raw(NumberJson(notice.progress));
    if (notice.has_total) w.Key("total").Raw(NumberJson(notice.total));
    if (!notice.message.empty()) w.Field("message", notice.message);
  } else {
    w.Field("kind", "log").Field("level", notice.level);
    w.Key("data").Raw(notice.data_json.empty() ? std::string_view("null") : notice.data_json);
    if (!notice.logger.empty()) w.Field("logger", notice.logger);
  }
  w.EndObject();
  return std::string(nonce) + w.Take();
}

size_t DroppedNotices(std::string_view payload) {
  constexpr size_t kMaxMarkerBytes = 64;
  constexpr int64_t kMaxCount = 1000000;
  if (payload.size() > kMaxMarkerBytes || payload.find("dropped") == std::string_view::npos) {
    return 0;
  }
  auto doc = ParseJson(payload);
  if (!doc.ok()) return 0;
  simdjson::dom::object obj;
  std::string kind;
  if (doc->root.get_object().get(obj) != simdjson::SUCCESS ||
      GetString(obj, "kind", &kind) != Field::kOk || kind != "dropped") {
    return 0;
  }
  int64_t count = 1;
  GetInt(obj, "count", &count);
  return static_cast<size_t>(std::clamp<int64_t>(count, 1, kMaxCount));
}

bool ParseNotice(std::string_view payload, Notice* out) {
  auto doc = ParseJson(payload);
  if (!doc.ok()) return false;
  simdjson::dom::object obj;
  std::string kind;
  if (doc->root.get_object().get(obj) != simdjson::SUCCESS ||
      GetString(obj, "kind", &kind) != Field::kOk) {
    return false;
  }
  *out = Notice{};
  if (kind == "progress") {
    out->kind = Notice::Kind::kProgress;
    if (obj["progress"].get_double().get(out->progress) != simdjson::SUCCESS) return false;
    simdjson::dom::element total;
    if (obj["total"].get(total) == simdjson::SUCCESS && !total.is_null()) {
      if (total.get_double().get(out->total) != simdjson::SUCCESS) return false;
      out->has_total = true;
    }
    return GetString(obj, "message", &out->message) != Field::kWrongType;
  }
  if (kind == "log") {
    out->kind = Notice::Kind::kLog;
    simdjson::dom::element data;
    if (GetString(obj, "level", &out->level) != Field::kOk ||
        obj["data"].get(data) != simdjson::SUCCESS) {
      return false;
    }
    out->data_json = ToJson(data);
    return GetString(obj, "logger", &out->logger) != Field::kWrongType;
  }
  return false;
}

}  // namespace toolgate::executor::protocol
