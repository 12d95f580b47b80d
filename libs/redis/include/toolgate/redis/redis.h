// Redis access on hiredis: a pool of blocking connections, commands as argument vectors (never
// formatted strings, so values cannot inject commands), and Lua scripts run by SHA with a
// fallback to EVAL after a Redis restart forgot them.
//
// A broken connection is dropped and the next command opens a new one, so a Redis restart costs
// the commands in flight an Unavailable status, not the process. Thread-safe.
#pragma once

#include <hiredis.h>

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "toolgate/base/status.h"

namespace toolgate::redis {

struct Reply {
  enum class Type { kNil, kInteger, kString, kStatus, kArray };
  Type type = Type::kNil;
  int64_t integer = 0;
  std::string str;              // kString and kStatus
  std::vector<Reply> elements;  // kArray
};

// A Lua script; its SHA-1 is computed once.
class Script {
 public:
  explicit Script(std::string source);
  const std::string& source() const { return source_; }
  const std::string& sha1() const { return sha1_; }

 private:
  std::string source_;
  std::string sha1_;
};

struct Options {
  std::string host = "127.0.0.1";
  int port = 6379;
  std::string password;  // empty: no AUTH
  size_t pool_size = 8;
  int timeout_ms = 2000;  // connect and command timeout
};

class Client {
 public:
  explicit Client(Options options);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // Runs one command. A Redis error reply becomes Internal with Redis's message; a lost
  // connection becomes Unavailable.
  Result<Reply> Command(const std::vector<std::string>& argv);
  // EVALSHA script keys... args...; loads the script with EVAL when Redis does not know it.
  // A script that takes a whole batch makes Redis execute it in one pass, so under `appendfsync
  // always` the batch shares one fsync. written, when set, runs once the command is on its way
  // to Redis and before its reply (and so its fsync) is waited for: work that must follow the
  // command but need not wait for its durability goes there. It runs exactly once, even when the
  // round trip fails; when Redis has forgotten the script (it restarted), after the refused
  // first attempt, one round trip before the script runs.
  Result<Reply> Eval(const Script& script, const std::vector<std::string>& keys,
                     const std::vector<std::string>& args,
                     const std::function<void()>& written = {});

 private:
  // Sends every command, then reads every reply, on one connection.
  // written: see Eval (run by the caller's wrapper when the pipeline fails before it).
  Result<std::vector<Result<Reply>>> Pipeline(const std::vector<std::vector<std::string>>& commands,
                                              const std::function<void()>& written = {});
  // Command and Pipeline without the round-trip metrics (toolgate_redis_*) they add.
  Result<Reply> CommandOnce(const std::vector<std::string>& argv);
  Result<std::vector<Result<Reply>>> PipelineOnce(
      const std::vector<std::vector<std::string>>& commands,
      const std::function<void()>& written = {});
  Result<redisContext*> Acquire();
  void Release(redisContext* ctx, bool healthy);
  Options options_;
  std::mutex mu_;
  std::condition_variable cv_;       // a connection was returned
  std::vector<redisContext*> idle_;  // guarded by mu_
  size_t open_ = 0;                  // guarded by mu_
};

}  // namespace toolgate::redis
