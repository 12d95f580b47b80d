// The protocol between the executor and a worker process: frames on two pipes.
//
// A frame is a 4-byte little-endian payload length, one byte naming the frame's kind, then the
// payload. The executor writes to the worker's fd 3 and reads the worker's fd 4; the worker's
// fds 1 and 2 (print, console.log, tracebacks) are a third pipe, the execution log, so nothing
// the handler prints can be mistaken for a frame.
//
//   worker -> executor   kHello                 the interpreter is up, before anything else (no
//                                               payload, no nonce): no tool code has run yet
//   executor -> worker   kInit  {"code", "memory_mb", "max_result_bytes",
//                                "max_response_bytes", "max_log_bytes",
//                                "bundle_root", "handler"}    once, first; a bundle version
//                                has no code but its files at bundle_root (as the worker sees
//                                them) and its entry file at handler, relative to them
//   worker -> executor   kStarted               the tool's code starts now (the module's, then
//                                               the handler's): what fails before it is the
//                                               platform's failure, not the tool's
//                        kReady                 the module loaded and defines service_handler
//                        kLoadError {"errorType", "errorMessage"}   it did not; the worker is
//                                                                    not used again
//   executor -> worker   kCall  {"event", "context", "env"}         one per invocation
//   worker -> executor   kStarted
//                        kValue  the JSON text of service_handler's return value
//                        kError {"errorType", "errorMessage"}        an exception, a Promise,
//                                                                    a value JSON cannot hold...
//                        kTimeout   the worker stopped the handler at its deadline itself
//                                   (the Lua worker's instruction hook) and can serve again
//
// Every payload, both ways, starts with a nonce (kNonceBytes of lower-case hex, before the JSON):
// a fresh random value in each kInit and kCall, which every frame answering it repeats. A handler
// can write to fd 4 (it runs in the worker's process), but what it writes during one call carries
// no nonce of a later call, so it can never pass for a later call's answer: a frame out of step
// kills the worker, and bytes left in the pipe after an answer retire it before its next call.
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
  kStarted = 'S',
  kHello = 'H',
};

constexpr size_t kNonceBytes = 32;

// A fresh nonce: kNonceBytes of lower-case hex from the system's random source.
std::string NewNonce();
// True when payload starts with nonce; then *rest is what follows it.
bool TakeNonce(std::string_view payload, std::string_view nonce, std::string_view* rest);

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

// The kInit payload: the nonce, then the JSON. bundle_root and handler are empty for a
// single-file version.
std::string InitPayload(std::string_view nonce, std::string_view code, int64_t memory_mb,
                        size_t max_result_bytes, const RuntimeLimits& limits,
                        std::string_view bundle_root = {}, std::string_view handler = {});
// The kCall payload: the nonce, then the JSON of the event as sent, the context of contract section
// 3 with deadline_ms left, and the secrets as "env". It holds secret values: wipe it once written.
std::string CallPayload(std::string_view nonce, const Invocation& invocation, int64_t deadline_ms);

struct HandlerError {
  std::string type;
  std::string message;
};
// Reads a kError or kLoadError payload. False when it is not an object with string errorType
// and errorMessage.
bool ParseHandlerError(std::string_view payload, HandlerError* out);

}  // namespace toolgate::executor::protocol
