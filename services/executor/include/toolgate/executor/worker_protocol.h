// The protocol between the executor and a worker process: frames on two pipes.
//
// A frame is a 4-byte little-endian payload length, one byte naming the frame's kind, then the
// payload. The executor writes to the worker's fd 3 and reads the worker's fd 4; the worker's
// fds 1 and 2 (print, console.log, tracebacks) are a third pipe, the execution log, so nothing
// the handler prints can be mistaken for a frame.
//
//   executor -> worker   kInit  {"code", "memory_mb", "max_result_bytes",
//                                "max_response_bytes", "max_log_bytes"}    once, first
//   worker -> executor   kReady                 the module loaded and defines service_handler
//                        kLoadError {"errorType", "errorMessage"}   it did not; the worker is
//                                                                    not used again
//   executor -> worker   kCall  {"event", "context", "env"}         one per invocation
//   worker -> executor   kValue  the JSON text of service_handler's return value
//                        kError {"errorType", "errorMessage"}        an exception, a Promise,
//                                                                    a value JSON cannot hold...
//                        kTimeout   the worker stopped the handler at its deadline itself
//                                   (the Lua worker's instruction hook) and can serve again
//
// The workers (runtimes/python/worker.py, runtimes/javascript/worker.js, lua_worker.h) are the
// other side of this file; keep them in step.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "toolgate/executor/runtime.h"

namespace toolgate::executor::protocol {

enum class FrameKind : char {
  kInit = 'I',
  kCall = 'C',
  kReady = 'R',
  kLoadError = 'L',
  kValue = 'V',
  kError = 'E',
  kTimeout = 'T',
};

constexpr size_t kHeaderBytes = 5;

// The header of a frame of kind with payload_size bytes of payload.
std::string FrameHeader(FrameKind kind, size_t payload_size);
// A whole frame.
std::string EncodeFrame(FrameKind kind, std::string_view payload);

struct Frame {
  FrameKind kind = FrameKind::kValue;
  std::string payload;
};

// Reassembles frames from the bytes of a pipe, in any chunking. Not thread-safe.
class FrameReader {
 public:
  // A frame announcing more than max_payload bytes is refused (kInvalid) before it is read.
  explicit FrameReader(size_t max_payload) : max_payload_(max_payload) {}

  enum class State { kNeedMore, kComplete, kInvalid };
  // Appends bytes read from the pipe.
  void Append(std::string_view bytes) { buffer_.append(bytes); }
  // kComplete moves the next whole frame into *out; kNeedMore when it has not all arrived;
  // kInvalid when the header is over the limit or names a kind no worker sends, after which the
  // stream cannot be trusted.
  State Next(Frame* out);
  // Bytes received and not yet returned as a frame.
  size_t buffered() const { return buffer_.size(); }

 private:
  size_t max_payload_;
  std::string buffer_;
};

// The kInit payload.
std::string InitPayload(std::string_view code, int64_t memory_mb, size_t max_result_bytes,
                        const RuntimeLimits& limits);
// The kCall payload: the event as sent, the context of contract section 3 with deadline_ms left,
// and the secrets as "env". It holds secret values: wipe it once written.
std::string CallPayload(const Invocation& invocation, int64_t deadline_ms);

struct HandlerError {
  std::string type;
  std::string message;
};
// Reads a kError or kLoadError payload. False when it is not an object with string errorType
// and errorMessage.
bool ParseHandlerError(std::string_view payload, HandlerError* out);

}  // namespace toolgate::executor::protocol
