#include "toolgate/redis/redis.h"

#include <openssl/sha.h>

#include "toolgate/base/crypto.h"
#include "toolgate/base/time.h"
#include "toolgate/metrics/metrics.h"

namespace toolgate::redis {
namespace {

// Counts one round trip to Redis (a command, or a pipeline of them) and its time, and an error
// when the connection failed ("unavailable") or Redis answered one ("reply").
class RoundTrip {
 public:
  RoundTrip() : start_us_(MonotonicUs()) {}
  void Done(const Status& status) {
    static auto& trips = metrics::Registry::Global()
                             .Counter("toolgate_redis_round_trips_total",
                                      "Round trips to Redis (a command or a pipeline).")
                             .With({});
    static auto& seconds = metrics::Registry::Global()
                               .Histogram("toolgate_redis_round_trip_duration_seconds",
                                          "Time of one round trip to Redis.")
                               .With({});
    trips.Inc();
    seconds.Observe(static_cast<double>(MonotonicUs() - start_us_) / 1e6);
    if (status.ok()) return;
    static auto& errors = metrics::Registry::Global().Counter(
        "toolgate_redis_errors_total",
        "Failed round trips to Redis: kind unavailable (connection) or reply (an error reply).",
        {"kind"});
    static auto& unavailable = errors.With({"unavailable"});
    static auto& reply = errors.With({"reply"});
    (status.code() == Status::Code::kUnavailable ? unavailable : reply).Inc();
  }

 private:
  int64_t start_us_;
};

}  // namespace

Script::Script(std::string source) : source_(std::move(source)) {
  // Redis names scripts by SHA-1; libsodium has no SHA-1, OpenSSL's libcrypto does.
  unsigned char digest[SHA_DIGEST_LENGTH];
  SHA1(reinterpret_cast<const unsigned char*>(source_.data()), source_.size(), digest);
  sha1_ = HexEncode(std::string_view(reinterpret_cast<char*>(digest), sizeof digest));
}

Client::Client(Options options) : options_(std::move(options)) {}

Client::~Client() {
  for (redisContext* c : idle_) redisFree(c);
}

Result<redisContext*> Client::Acquire() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [this] { return !idle_.empty() || open_ < options_.pool_size; });
  if (!idle_.empty()) {
    redisContext* c = idle_.back();
    idle_.pop_back();
    return c;
  }
  ++open_;
  lock.unlock();
  timeval tv{options_.timeout_ms / 1000, (options_.timeout_ms % 1000) * 1000};
  redisContext* c = redisConnectWithTimeout(options_.host.c_str(), options_.port, tv);
  std::string err;
  if (!c || c->err) {
    err = c ? c->errstr : "cannot allocate redis context";
  } else {
    redisSetTimeout(c, tv);
    if (!options_.password.empty()) {
      auto* r = static_cast<redisReply*>(redisCommand(c, "AUTH %s", options_.password.c_str()));
      if (!r || r->type == REDIS_REPLY_ERROR) err = "redis AUTH failed";
      if (r) freeReplyObject(r);
    }
  }
  if (!err.empty()) {
    if (c) redisFree(c);
    lock.lock();
    --open_;
    cv_.notify_one();
    return Status::Unavailable("redis connect: " + err);
  }
  return c;
}

void Client::Release(redisContext* ctx, bool healthy) {
  std::lock_guard<std::mutex> lock(mu_);
  if (healthy) {
    idle_.push_back(ctx);
  } else {
    redisFree(ctx);
    --open_;
  }
  cv_.notify_one();
}

namespace {

Reply Convert(const redisReply* r) {
  Reply out;
  switch (r->type) {
    case REDIS_REPLY_INTEGER:
      out.type = Reply::Type::kInteger;
      out.integer = r->integer;
      break;
    case REDIS_REPLY_STRING:
      out.type = Reply::Type::kString;
      out.str.assign(r->str, r->len);
      break;
    case REDIS_REPLY_STATUS:
      out.type = Reply::Type::kStatus;
      out.str.assign(r->str, r->len);
      break;
    case REDIS_REPLY_ARRAY:
      out.type = Reply::Type::kArray;
      for (size_t i = 0; i < r->elements; ++i) out.elements.push_back(Convert(r->element[i]));
      break;
    default:
      break;
  }
  return out;
}

}  // namespace

Result<Reply> Client::Command(const std::vector<std::string>& argv) {
  RoundTrip trip;
  Result<Reply> out = CommandOnce(argv);
  trip.Done(out.status());
  return out;
}

Result<Reply> Client::CommandOnce(const std::vector<std::string>& argv) {
  auto ctx = Acquire();
  if (!ctx.ok()) return ctx.status();
  std::vector<const char*> args;
  std::vector<size_t> lens;
  for (const auto& a : argv) {
    args.push_back(a.data());
    lens.push_back(a.size());
  }
  auto* r = static_cast<redisReply*>(
      redisCommandArgv(*ctx, static_cast<int>(args.size()), args.data(), lens.data()));
  if (!r) {
    std::string err = (*ctx)->errstr;
    Release(*ctx, false);
    return Status::Unavailable("redis: " + err);
  }
  Result<Reply> out = r->type == REDIS_REPLY_ERROR
                          ? Result<Reply>(Status::Internal(std::string(r->str, r->len)))
                          : Result<Reply>(Convert(r));
  freeReplyObject(r);
  Release(*ctx, true);
  return out;
}

Result<Reply> Client::Eval(const Script& script, const std::vector<std::string>& keys,
                           const std::vector<std::string>& args,
                           const std::function<void()>& written) {
  std::vector<std::string> argv = {"EVALSHA", script.sha1(), std::to_string(keys.size())};
  argv.insert(argv.end(), keys.begin(), keys.end());
  argv.insert(argv.end(), args.begin(), args.end());
  // written runs exactly once: after the first attempt's command left, or when it failed first.
  bool ran = false;
  auto once = [&] {
    if (!ran && written) {
      ran = true;
      written();
    }
  };
  Result<Reply> r = [&]() -> Result<Reply> {
    if (!written) return Command(argv);
    auto replies = Pipeline({argv}, once);
    once();
    if (!replies.ok()) return replies.status();
    return std::move(replies->front());
  }();
  if (r.ok() || r.status().message().rfind("NOSCRIPT", 0) != 0) return r;
  // A Redis that restarted has forgotten the script: send the source instead.
  argv[0] = "EVAL";
  argv[1] = script.source();
  return Command(argv);
}

Result<std::vector<Result<Reply>>> Client::Pipeline(
    const std::vector<std::vector<std::string>>& commands, const std::function<void()>& written) {
  RoundTrip trip;
  auto out = PipelineOnce(commands, written);
  trip.Done(out.status());
  return out;
}

Result<std::vector<Result<Reply>>> Client::PipelineOnce(
    const std::vector<std::vector<std::string>>& commands, const std::function<void()>& written) {
  auto ctx = Acquire();
  if (!ctx.ok()) return ctx.status();
  for (const auto& argv : commands) {
    std::vector<const char*> args;
    std::vector<size_t> lens;
    for (const auto& a : argv) {
      args.push_back(a.data());
      lens.push_back(a.size());
    }
    if (redisAppendCommandArgv(*ctx, static_cast<int>(args.size()), args.data(), lens.data()) !=
        REDIS_OK) {
      std::string err = (*ctx)->errstr;
      Release(*ctx, false);
      return Status::Unavailable("redis: " + err);
    }
  }
  if (written) {
    // Put the commands on the wire before anything else happens (redisGetReply would too, but
    // only after written had run).
    for (int done = 0; !done;) {
      if (redisBufferWrite(*ctx, &done) != REDIS_OK) {
        std::string err = (*ctx)->errstr;
        Release(*ctx, false);
        return Status::Unavailable("redis: " + err);
      }
    }
    written();
  }
  std::vector<Result<Reply>> out;
  out.reserve(commands.size());
  for (size_t i = 0; i < commands.size(); ++i) {
    void* raw = nullptr;
    if (redisGetReply(*ctx, &raw) != REDIS_OK || raw == nullptr) {
      std::string err = (*ctx)->errstr;
      Release(*ctx, false);
      return Status::Unavailable("redis: " + err);
    }
    auto* r = static_cast<redisReply*>(raw);
    out.push_back(r->type == REDIS_REPLY_ERROR
                      ? Result<Reply>(Status::Internal(std::string(r->str, r->len)))
                      : Result<Reply>(Convert(r)));
    freeReplyObject(r);
  }
  Release(*ctx, true);
  return out;
}

}  // namespace toolgate::redis
