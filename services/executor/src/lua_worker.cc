#include "toolgate/executor/lua_worker.h"

#include <sodium.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <string>
#include <vector>

#include "toolgate/base/json.h"
#include "toolgate/base/json_writer.h"
#include "toolgate/executor/lua_runtime.h"
#include "toolgate/executor/worker_protocol.h"

namespace toolgate::executor {
namespace {

using protocol::FrameKind;

bool ReadExact(int fd, char* buf, size_t n) {
  while (n > 0) {
    ssize_t got = ::read(fd, buf, n);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    buf += got;
    n -= static_cast<size_t>(got);
  }
  return true;
}

bool ReadFrame(int fd, FrameKind* kind, std::string* payload) {
  char header[protocol::kHeaderBytes];
  if (!ReadExact(fd, header, sizeof header)) return false;
  uint32_t n = 0;
  for (int i = 0; i < 4; ++i)
    n |= static_cast<uint32_t>(static_cast<unsigned char>(header[i])) << (8 * i);
  *kind = static_cast<FrameKind>(header[4]);
  payload->resize(n);
  return ReadExact(fd, payload->data(), n);
}

bool WriteAll(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

// A frame answering the request whose nonce is given: the nonce, then the payload. One write
// for the whole frame: each write to the pipe wakes an executor waiting on it, and a frame
// written in pieces would wake it once per piece (on a virtual machine, waking an idle core
// costs more than the write).
bool WriteFrame(int fd, FrameKind kind, std::string_view nonce, std::string_view payload) {
  const std::string header = protocol::FrameHeader(kind, nonce.size() + payload.size());
  std::string_view parts[3] = {header, nonce, payload};
  size_t first = 0;
  while (first < 3) {
    iovec iov[3];
    int count = 0;
    for (size_t i = first; i < 3; ++i) {
      if (parts[i].empty()) continue;
      iov[count++] = {const_cast<char*>(parts[i].data()), parts[i].size()};
    }
    if (count == 0) return true;
    ssize_t n = ::writev(fd, iov, count);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    // Past what was written: whole parts, then into the next one.
    auto left = static_cast<size_t>(n);
    for (; first < 3 && left >= parts[first].size(); ++first) left -= parts[first].size();
    if (first < 3) parts[first].remove_prefix(left);
  }
  return true;
}

// The handler's notices, each sent to the executor as a kNotice frame at once; the executor
// bounds them (it cannot trust a worker to). Past the protocol's cap, and for one too large to
// send (or to encode), only a count is kept, which Finish sends for the executor to count.
class FrameNoticeSink final : public NoticeSink {
 public:
  FrameNoticeSink(int replies, const std::string& nonce) : replies_(replies), nonce_(nonce) {}
  bool accepting() const override { return capped_ < protocol::kWorkerNoticeCap; }
  void Offer(Notice&& notice) override {
    if (!accepting()) {
      Drop();
      return;
    }
    std::string payload = protocol::NoticePayload("", notice);
    if (payload.size() > protocol::kMaxNoticePayloadBytes) {
      Drop();
      return;
    }
    // Only one the executor's size bound surely takes counts towards the cap (kWorkerNoticeCap).
    if (payload.size() <= NoticeLimits{}.max_notice_bytes) ++capped_;
    WriteFrame(replies_, FrameKind::kNotice, nonce_, payload);
  }
  void Drop(size_t n = 1) override { dropped_ += n; }
  // The handler has returned: what it dropped, before the answer.
  void Finish() {
    if (dropped_ == 0) return;
    JsonWriter w;
    w.BeginObject()
        .Field("kind", "dropped")
        .Field("count", static_cast<int64_t>(dropped_))
        .EndObject();
    WriteFrame(replies_, FrameKind::kNotice, nonce_, w.str());
    dropped_ = 0;
  }

 private:
  int replies_;
  const std::string& nonce_;
  size_t capped_ = 0;
  size_t dropped_ = 0;
};

// Runs one kCall payload, telling the executor (kStarted) when the handler's code starts. Its
// views into the parsed call live until the runtime returns. *nonce is the call's.
ExecutionOutcome RunCall(WarmLuaRuntime& runtime, const std::string& code,
                         const std::string& bundle_root, const std::string& handler,
                         int64_t memory_mb, simdjson::dom::parser& parser,
                         const std::string& payload, int replies, std::string* nonce) {
  ExecutionOutcome failed;
  failed.kind = ExecutionOutcome::Kind::kPlatformFailure;
  simdjson::dom::object call, context, env;
  simdjson::dom::element event;
  if (payload.size() < protocol::kNonceBytes) return failed;
  nonce->assign(payload, 0, protocol::kNonceBytes);
  if (parser.parse(payload.data() + protocol::kNonceBytes, payload.size() - protocol::kNonceBytes)
              .get_object()
              .get(call) != simdjson::SUCCESS ||
      call["event"].get(event) != simdjson::SUCCESS ||
      call["context"].get_object().get(context) != simdjson::SUCCESS ||
      call["env"].get_object().get(env) != simdjson::SUCCESS) {
    return failed;
  }
  std::string event_json = simdjson::minify(event);
  std::string execution_id, function_id, version, caller_org_id;
  int64_t deadline_ms = 0;
  GetString(context, "execution_id", &execution_id);
  GetString(context, "function_id", &function_id);
  GetString(context, "version", &version);
  GetString(context, "caller_org_id", &caller_org_id);
  GetInt(context, "deadline_ms", &deadline_ms);

  Invocation inv;
  inv.code = code;
  inv.bundle_root = bundle_root;
  inv.handler = handler;
  inv.event_json = event_json;
  inv.execution_id = execution_id;
  inv.function_id = function_id;
  inv.version = version;
  inv.caller_org_id = caller_org_id;
  inv.timeout_ms = std::max<int64_t>(deadline_ms, 1);
  inv.memory_mb = memory_mb;
  for (auto [name, value] : env) {
    std::string_view text;
    if (value.get_string().get(text) == simdjson::SUCCESS) inv.env.push_back({name, text});
  }
  bool notices = false;
  GetBool(call, "notices", &notices);  // absent from an older executor: none wanted
  FrameNoticeSink sink(replies, *nonce);
  if (notices) inv.notices = &sink;
  if (!WriteFrame(replies, FrameKind::kStarted, *nonce, "")) return failed;
  ExecutionOutcome out = runtime.Run(inv);
  sink.Finish();
  return out;
}

}  // namespace

int ServeLuaWorker(int requests, int replies, int log_fd, const EgressConfig& egress) {
  if (!WriteFrame(replies, FrameKind::kHello, "", "")) return 0;
  FrameKind kind;
  std::string payload;
  if (!ReadFrame(requests, &kind, &payload)) return 0;
  if (kind != FrameKind::kInit) return 2;
  std::string code, nonce, bundle_root, handler;
  int64_t memory_mb = 0, max_response = 0, max_log = 0;
  {
    if (payload.size() < protocol::kNonceBytes) return 2;
    nonce = payload.substr(0, protocol::kNonceBytes);
    auto init = ParseJson(std::string_view(payload).substr(protocol::kNonceBytes));
    simdjson::dom::object obj;
    if (!init.ok() || init->root.get_object().get(obj) != simdjson::SUCCESS ||
        GetString(obj, "code", &code) != Field::kOk ||
        GetInt(obj, "memory_mb", &memory_mb) != Field::kOk ||
        GetInt(obj, "max_response_bytes", &max_response) != Field::kOk ||
        GetInt(obj, "max_log_bytes", &max_log) != Field::kOk) {
      return 2;
    }
    // A bundle version's files, where the sandbox shows them (absent from an older executor).
    GetString(obj, "bundle_root", &bundle_root);
    GetString(obj, "handler", &handler);
  }
  RuntimeLimits limits;
  limits.max_response_bytes = static_cast<size_t>(max_response);
  limits.max_log_bytes = static_cast<size_t>(max_log);
  WarmLuaRuntime runtime(limits, egress);
  // The state is set up and the module compiled at the first call, whose outcome reports any
  // error in them: there is nothing to load now.
  if (!WriteFrame(replies, FrameKind::kReady, nonce, "")) return 0;

  simdjson::dom::parser parser;
  for (;;) {
    if (!ReadFrame(requests, &kind, &payload)) return 0;
    if (kind != FrameKind::kCall) return 2;
    ExecutionOutcome out =
        RunCall(runtime, code, bundle_root, handler, memory_mb, parser, payload, replies, &nonce);
    sodium_memzero(payload.data(), payload.size());  // the call's secrets
    if (!out.logs.empty()) WriteAll(log_fd, out.logs);
    bool sent = false;
    switch (out.kind) {
      case ExecutionOutcome::Kind::kCompleted: {
        // Already normalised: {"statusCode", "body"} normalises to itself.
        JsonWriter w;
        w.BeginObject()
            .Field("statusCode", out.status_code)
            .Field("body", ToValidUtf8(out.body))
            .EndObject();
        sent = WriteFrame(replies, FrameKind::kValue, nonce, w.str());
        break;
      }
      case ExecutionOutcome::Kind::kTimeout:
        sent = WriteFrame(replies, FrameKind::kTimeout, nonce, "");
        break;
      case ExecutionOutcome::Kind::kPlatformFailure:
      case ExecutionOutcome::Kind::kCancelled:  // never here: the executor kills a cancelled worker
      case ExecutionOutcome::Kind::kCancelledBeforeStart:
        return 3;  // no Lua state: the executor sees the worker die and replaces it
    }
    if (!sent) return 0;
  }
}

}  // namespace toolgate::executor
