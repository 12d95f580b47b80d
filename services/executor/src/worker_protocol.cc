#include "toolgate/executor/worker_protocol.h"

#include <sodium.h>

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
      return true;
    default:
      return false;
  }
}

}  // namespace

FrameReader::State FrameReader::Next(Frame* out) {
  if (buffer_.size() < kHeaderBytes) return State::kNeedMore;
  uint32_t n = 0;
  for (int i = 0; i < 4; ++i)
    n |= static_cast<uint32_t>(static_cast<unsigned char>(buffer_[i])) << (8 * i);
  if (n > max_payload_ || !IsWorkerKind(buffer_[4])) return State::kInvalid;
  if (buffer_.size() < kHeaderBytes + n) return State::kNeedMore;
  out->kind = static_cast<FrameKind>(buffer_[4]);
  out->payload.assign(buffer_, kHeaderBytes, n);
  buffer_.erase(0, kHeaderBytes + n);
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
  w.EndObject().EndObject();
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

}  // namespace toolgate::executor::protocol
