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
//   executor -> worker   kCall  {"event", "context", "env", "notices"}   one per invocation;
//                                "notices": the caller wants the handler's notices
//   worker -> executor   kStarted
//                        kNotice  {"kind": "progress", "progress", "total"?, "message"?}
//                                 {"kind": "log", "level", "data", "logger"?}
//                                 any number, while the handler runs, only for a call with
//                                 "notices" (the handler's context.progress / context.log; "data"
//                                 is the logged value itself, as JSON); at most
//                                 kMaxNoticePayloadBytes after the nonce: a worker drops a larger
//                                 one itself, and past kWorkerNoticeCap notices of a call it
//                                 drops every one without building it; as the handler returns
//                                 (before the answer) it sends {"kind": "dropped", "count": N}
//                                 for the executor to count them. So a handler that reports a
//                                 million times costs the executor nothing. The executor bounds
//                                 them (runtime.h, BoundedNoticeSink); one it cannot read is
//                                 dropped, never fatal
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
  kNotice = 'N',
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
  void Append(std::string_view bytes);
  // kComplete moves the next whole frame into *out; kNeedMore when it has not all arrived;
  // kInvalid when the header is over the limit or names a kind no worker sends, after which the
  // stream cannot be trusted.
  State Next(Frame* out);
  // Bytes received and not yet returned as a frame.
  size_t buffered() const { return buffer_.size() - start_; }

 private:
  size_t max_payload_;
  // Frames are taken from start_ on, and the taken bytes erased only at the next Append: one
  // read can bring hundreds of small frames (notices), and erasing each from the front would
  // move the rest of the buffer once per frame.
  std::string buffer_;
  size_t start_ = 0;
};

// The kInit payload: the nonce, then the JSON. bundle_root and handler are empty for a
// single-file version.
std::string InitPayload(std::string_view nonce, std::string_view code, int64_t memory_mb,
                        size_t max_result_bytes, const RuntimeLimits& limits,
                        std::string_view bundle_root = {}, std::string_view handler = {});
// The kCall payload: the nonce, then the JSON of the event as sent, the context of contract section
// 3 with deadline_ms left, the secrets as "env" and "notices": whether invocation.notices is set.
// It holds secret values: wipe it once written.
std::string CallPayload(std::string_view nonce, const Invocation& invocation, int64_t deadline_ms);

struct HandlerError {
  std::string type;
  std::string message;
};
// Reads a kError or kLoadError payload. False when it is not an object with string errorType
// and errorMessage.
bool ParseHandlerError(std::string_view payload, HandlerError* out);

// The most a kNotice payload holds after its nonce: room for a notice of
// NoticeLimits::max_notice_bytes with every character escaped.
constexpr size_t kMaxNoticePayloadBytes = 6 * (16 << 10) + 1024;

// The kNotice payload of notice: the nonce, then its JSON. notice.data_json must be JSON
// ("null" when empty); progress and total must be finite.
std::string NoticePayload(std::string_view nonce, const Notice& notice);
// How many notices of one call a worker sends at most, of those whose payload is at most
// NoticeLimits::max_notice_bytes: the executor's size bound takes each, so past this many its
// count bound (NoticeLimits::max_notices, the same number) would drop every further one. (When
// its byte bound dropped some of them, a few later ones that would have fitted are lost too.)
constexpr size_t kWorkerNoticeCap = 100;
// How many notices a kind "dropped" payload stands for (its "count", 1 without one, at most a
// million: a forged count can only swell a metric); 0 when it is not that marker. Cheap for any
// other payload.
size_t DroppedNotices(std::string_view payload);
// Reads a kNotice payload (after its nonce). False when it is not one.
bool ParseNotice(std::string_view payload, Notice* out);

}  // namespace toolgate::executor::protocol
