#include "toolgate/bus/jet_stream.h"

#include <utility>

#include "toolgate/base/time.h"
#include "toolgate/bus/bus.h"

namespace toolgate::bus {
namespace {

// Bus::Publish's header name, so a traceparent reads the same from either.
constexpr const char* kTraceHeader = "traceparent";

constexpr int64_t kNanosPerMilli = 1000000;
// A pull request shorter than this is not worth sending (the library shortens what it asks the
// server for by 10 ms, so the server's answer arrives before the client stops waiting).
constexpr int64_t kMinPullWaitMs = 20;

// Whether s means the server could not be reached or did not answer in time: worth a retry.
bool IsUnavailable(natsStatus s) {
  switch (s) {
    case NATS_TIMEOUT:
    case NATS_NO_RESPONDERS:
    case NATS_CONNECTION_CLOSED:
    case NATS_CONNECTION_DISCONNECTED:
    case NATS_NO_SERVER:
    case NATS_STALE_CONNECTION:
    case NATS_IO_ERROR:
    case NATS_NOT_YET_CONNECTED:
    case NATS_DRAINING:
      return true;
    default:
      return false;
  }
}

// A Status for a failed call: what was being done, the library's text for it (which carries the
// server's description of an API error), and the JetStream error code when the server sent one.
// Call right after the failure, on the same thread: the text is the thread's last error, used
// only when it is of the same status (the library keeps the last one until the next).
Status FromJs(natsStatus s, jsErrCode code, std::string_view what) {
  std::string msg(what);
  msg += ": ";
  natsStatus last = NATS_OK;
  const char* text = nats_GetLastError(&last);
  std::string_view detail = natsStatus_GetText(s);
  if (text != nullptr && *text != '\0' && last == s) {
    detail = text;
    // The library prefixes where it noticed the error: "(jsm.c:1033): ".
    if (size_t end = detail.find("): "); detail.front() == '(' && end != std::string_view::npos) {
      detail.remove_prefix(end + 3);
    }
  }
  msg += detail;
  if (s == NATS_NO_RESPONDERS) {
    // The library reports this as "JetStream not enabled" whatever the reason.
    msg += " (no JetStream on the server, or no stream for the subject)";
  } else if (code != 0) {
    msg += " (JetStream error " + std::to_string(static_cast<int>(code)) + ")";
  }
  return IsUnavailable(s) ? Status::Unavailable(msg) : Status::Internal(msg);
}

// One pull request on sub, for up to batch messages within timeout_ms: see Fetch.
natsStatus Pull(natsMsgList* list, natsSubscription* sub, int batch, int64_t timeout_ms,
                bool no_wait, jsErrCode* code) {
  jsFetchRequest req;
  jsFetchRequest_Init(&req);
  req.Batch = batch;
  req.Expires = timeout_ms * kNanosPerMilli;
  req.NoWait = no_wait;
  *code = static_cast<jsErrCode>(0);
  return natsSubscription_FetchRequest(list, sub, &req);
}

// Options for calls that wait for the server: kApiTimeoutMs.
jsOptions WaitOptions() {
  jsOptions o;
  jsOptions_Init(&o);
  o.Wait = JetStream::kApiTimeoutMs;
  return o;
}

}  // namespace

// QueuedMessage

QueuedMessage::QueuedMessage(std::shared_ptr<natsSubscription> sub, natsMsg* msg)
    : sub_(std::move(sub)), msg_(msg) {
  subject_ = natsMsg_GetSubject(msg_);
  if (const char* d = natsMsg_GetData(msg_)) data_.assign(d, natsMsg_GetDataLength(msg_));
  const char* tp = nullptr;
  if (natsMsgHeader_Get(msg_, kTraceHeader, &tp) == NATS_OK && tp != nullptr) traceparent_ = tp;
  jsMsgMetaData* meta = nullptr;
  if (natsMsg_GetMetaData(&meta, msg_) == NATS_OK) {
    delivered_ = meta->NumDelivered;
    stream_sequence_ = meta->Sequence.Stream;
    jsMsgMetaData_Destroy(meta);
  }
}

QueuedMessage::QueuedMessage(QueuedMessage&& other) noexcept
    : sub_(std::move(other.sub_)),
      msg_(std::exchange(other.msg_, nullptr)),
      subject_(std::move(other.subject_)),
      data_(std::move(other.data_)),
      traceparent_(std::move(other.traceparent_)),
      delivered_(other.delivered_),
      stream_sequence_(other.stream_sequence_) {}

QueuedMessage& QueuedMessage::operator=(QueuedMessage&& other) noexcept {
  if (this != &other) {
    Release();
    sub_ = std::move(other.sub_);
    msg_ = std::exchange(other.msg_, nullptr);
    subject_ = std::move(other.subject_);
    data_ = std::move(other.data_);
    traceparent_ = std::move(other.traceparent_);
    delivered_ = other.delivered_;
    stream_sequence_ = other.stream_sequence_;
  }
  return *this;
}

QueuedMessage::~QueuedMessage() {
  Release();
}

void QueuedMessage::Release() {
  if (msg_ != nullptr) natsMsg_Destroy(msg_);
  msg_ = nullptr;
  sub_.reset();  // after the message: the subscription may go with it
}

Status QueuedMessage::Ack() {
  if (msg_ == nullptr) return Status::InvalidArgument("ack of a moved-from QueuedMessage");
  jsOptions o = WaitOptions();
  jsErrCode code = static_cast<jsErrCode>(0);
  natsStatus s = natsMsg_AckSync(msg_, &o, &code);
  return s == NATS_OK ? Status::Ok() : FromJs(s, code, "ack of a message from " + subject_);
}

Status QueuedMessage::Nak(int64_t delay_ms) {
  if (msg_ == nullptr) return Status::InvalidArgument("nak of a moved-from QueuedMessage");
  if (delay_ms < 0) return Status::InvalidArgument("nak delay must be >= 0 ms");
  natsStatus s = natsMsg_NakWithDelay(msg_, delay_ms, nullptr);
  return s == NATS_OK ? Status::Ok()
                      : FromJs(s, static_cast<jsErrCode>(0), "nak of a message from " + subject_);
}

Status QueuedMessage::InProgress() {
  if (msg_ == nullptr) return Status::InvalidArgument("progress of a moved-from QueuedMessage");
  natsStatus s = natsMsg_InProgress(msg_, nullptr);
  return s == NATS_OK
             ? Status::Ok()
             : FromJs(s, static_cast<jsErrCode>(0), "in-progress of a message from " + subject_);
}

Status QueuedMessage::Term() {
  if (msg_ == nullptr) return Status::InvalidArgument("term of a moved-from QueuedMessage");
  // A Wait in the options makes the library send it as a request: the server confirms it.
  jsOptions o = WaitOptions();
  natsStatus s = natsMsg_Term(msg_, &o);
  return s == NATS_OK ? Status::Ok()
                      : FromJs(s, static_cast<jsErrCode>(0), "term of a message from " + subject_);
}

// PullConsumer

PullConsumer::PullConsumer(natsConnection* nc, natsSubscription* sub, std::string stream,
                           std::string durable)
    : nc_(nc),
      sub_(sub, natsSubscription_Destroy),
      stream_(std::move(stream)),
      durable_(std::move(durable)) {}

PullConsumer::~PullConsumer() = default;

Result<std::vector<QueuedMessage>> PullConsumer::Fetch(int max, int timeout_ms) {
  if (max < 1) return Status::InvalidArgument("fetch of fewer than 1 message");
  if (timeout_ms < 1) return Status::InvalidArgument("fetch timeout must be >= 1 ms");
  std::lock_guard<std::mutex> lock(fetch_mu_);
  const int64_t deadline_us = MonotonicUs() + int64_t{timeout_ms} * 1000;
  natsMsgList list{};
  jsErrCode code = static_cast<jsErrCode>(0);
  // "No wait" with an expiry: the server answers with what it has as soon as it has anything
  // (up to max), waiting up to the expiry for a first message; a plain request would be held
  // until max had come. (The library's natsSubscription_Fetch sends the same, but ends at the
  // early refusal below.)
  natsStatus s = Pull(&list, sub_.get(), max, timeout_ms, /*no_wait=*/true, &code);
  if (s == NATS_TIMEOUT) {
    // An early "no" (the server's 408 "Requests Pending": other fetchers' requests claim every
    // pending message, e.g. while max_ack_pending holds them back) must not make a caller's
    // loop spin: wait the rest of the time in line for one message.
    const int64_t left_ms = (deadline_us - MonotonicUs()) / 1000;
    if (left_ms >= kMinPullWaitMs) {
      s = Pull(&list, sub_.get(), 1, left_ms, /*no_wait=*/false, &code);
    }
  }
  std::vector<QueuedMessage> out;
  if (s == NATS_OK) {
    out.reserve(static_cast<size_t>(list.Count));
    for (int i = 0; i < list.Count; ++i) {
      natsMsg* m = list.Msgs[i];
      list.Msgs[i] = nullptr;  // ours now: natsMsgList_Destroy leaves it
      out.push_back(QueuedMessage(sub_, m));
    }
    natsMsgList_Destroy(&list);
    return out;
  }
  std::string what = "fetch from " + stream_ + "/" + durable_;
  if (s == NATS_TIMEOUT) {
    // Nothing came in time: an empty queue, unless the request could not reach the server.
    if (natsConnection_Status(nc_) != NATS_CONN_STATUS_CONNECTED) {
      return Status::Unavailable(what + ": not connected to NATS");
    }
    return out;
  }
  return FromJs(s, code, what);
}

// JetStream

Result<std::unique_ptr<JetStream>> JetStream::Open(Bus& bus) {
  jsOptions o = WaitOptions();
  jsCtx* js = nullptr;
  natsStatus s = natsConnection_JetStream(&js, bus.nc_, &o);
  if (s != NATS_OK) return FromJs(s, static_cast<jsErrCode>(0), "jetstream context");
  return std::unique_ptr<JetStream>(new JetStream(bus.nc_, js));
}

JetStream::~JetStream() {
  jsCtx_Destroy(js_);
}

Status JetStream::EnsureStream(const StreamSpec& spec) {
  if (spec.name.empty()) return Status::InvalidArgument("a stream needs a name");
  if (spec.subjects.empty())
    return Status::InvalidArgument("stream " + spec.name + " has no subjects");
  if (spec.replicas < 1) return Status::InvalidArgument("stream replicas must be >= 1");
  if (spec.max_age_ms < 0 || spec.duplicate_window_ms < 0) {
    return Status::InvalidArgument("stream durations must be >= 0 ms");
  }
  std::vector<const char*> subjects;
  subjects.reserve(spec.subjects.size());
  for (const std::string& subject : spec.subjects) subjects.push_back(subject.c_str());
  jsStreamConfig cfg;
  jsStreamConfig_Init(&cfg);
  cfg.Name = spec.name.c_str();
  cfg.Subjects = subjects.data();
  cfg.SubjectsLen = static_cast<int>(subjects.size());
  cfg.Retention = js_WorkQueuePolicy;
  cfg.Storage = js_FileStorage;
  cfg.Discard = js_DiscardOld;
  cfg.Replicas = spec.replicas;
  cfg.MaxAge = spec.max_age_ms * kNanosPerMilli;
  cfg.Duplicates = spec.duplicate_window_ms * kNanosPerMilli;
  jsErrCode code = static_cast<jsErrCode>(0);
  // Creating a stream that exists with the same configuration succeeds; with another, the
  // server answers "name already in use" and the configuration is updated instead.
  natsStatus s = js_AddStream(nullptr, js_, &cfg, nullptr, &code);
  if (s == NATS_OK) return Status::Ok();
  if (code != JSStreamNameExistErr) return FromJs(s, code, "create stream " + spec.name);
  code = static_cast<jsErrCode>(0);
  s = js_UpdateStream(nullptr, js_, &cfg, nullptr, &code);
  if (s == NATS_OK) return Status::Ok();
  return FromJs(s, code, "update stream " + spec.name);
}

Status JetStream::Publish(std::string_view subject, std::string_view data, std::string_view msg_id,
                          std::string_view traceparent, int timeout_ms) {
  if (timeout_ms < 1) return Status::InvalidArgument("publish timeout must be >= 1 ms");
  std::string subj(subject);
  std::string id(msg_id);
  natsMsg* msg = nullptr;
  natsStatus s =
      natsMsg_Create(&msg, subj.c_str(), nullptr, data.data(), static_cast<int>(data.size()));
  if (s == NATS_OK && !traceparent.empty()) {
    s = natsMsgHeader_Set(msg, kTraceHeader, std::string(traceparent).c_str());
  }
  jsErrCode code = static_cast<jsErrCode>(0);
  if (s == NATS_OK) {
    jsPubOptions o;
    jsPubOptions_Init(&o);
    o.MaxWait = timeout_ms;
    if (!id.empty()) o.MsgId = id.c_str();
    jsPubAck* ack = nullptr;
    // A duplicate is acknowledged like a first store (ack->Duplicate): Ok either way.
    s = js_PublishMsg(&ack, js_, msg, &o, &code);
    jsPubAck_Destroy(ack);
  }
  natsMsg_Destroy(msg);
  return s == NATS_OK ? Status::Ok() : FromJs(s, code, "jetstream publish to " + subj);
}

Result<std::unique_ptr<PullConsumer>> JetStream::Consumer(const ConsumerSpec& spec) {
  if (spec.stream.empty() || spec.durable.empty()) {
    return Status::InvalidArgument("a consumer needs a stream and a durable name");
  }
  if (spec.ack_wait_ms < 1) return Status::InvalidArgument("ack wait must be >= 1 ms");
  if (spec.max_ack_pending < 1) return Status::InvalidArgument("max ack pending must be >= 1");
  jsConsumerConfig cfg;
  jsConsumerConfig_Init(&cfg);
  cfg.Durable = spec.durable.c_str();
  cfg.AckPolicy = js_AckExplicit;
  cfg.DeliverPolicy = js_DeliverAll;
  cfg.AckWait = spec.ack_wait_ms * kNanosPerMilli;
  cfg.MaxAckPending = spec.max_ack_pending;
  jsErrCode code = static_cast<jsErrCode>(0);
  // The durable create of an existing consumer updates it (what the server allows changing) and
  // succeeds, so one call creates or updates.
  natsStatus s = js_AddConsumer(nullptr, js_, spec.stream.c_str(), &cfg, nullptr, &code);
  std::string what = "consumer " + spec.stream + "/" + spec.durable;
  if (s != NATS_OK) return FromJs(s, code, "create " + what);
  // Bound to the consumer just made: the library neither creates nor deletes it.
  jsSubOptions so;
  jsSubOptions_Init(&so);
  so.Stream = spec.stream.c_str();
  so.Consumer = spec.durable.c_str();
  natsSubscription* sub = nullptr;
  code = static_cast<jsErrCode>(0);
  s = js_PullSubscribe(&sub, js_, nullptr, spec.durable.c_str(), nullptr, &so, &code);
  if (s != NATS_OK) return FromJs(s, code, "bind " + what);
  // A burst must queue, not be dropped as a slow consumer (Bus::Subscribe's limits).
  s = natsSubscription_SetPendingLimits(sub, 1 << 20, 1 << 30);
  if (s != NATS_OK) {
    Status failed = FromJs(s, static_cast<jsErrCode>(0), "bind " + what);
    natsSubscription_Destroy(sub);
    return failed;
  }
  return std::unique_ptr<PullConsumer>(new PullConsumer(nc_, sub, spec.stream, spec.durable));
}

}  // namespace toolgate::bus
