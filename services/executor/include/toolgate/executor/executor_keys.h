// ExecutorKeys: the executor pool's X25519 key pair. The secrets stage seals each call's EnvMap
// to the public key (crypto_box_seal), so secret values cross the bus readable only here.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "toolgate/base/status.h"
#include "toolgate/executor/runtime.h"
#include "toolgate/v1/toolgate.pb.h"

namespace toolgate::executor {

// The secrets of one call, opened. Wipes every value (sodium_memzero) when destroyed. Not
// copyable or movable, so no copy of a value outlives it.
class OpenedEnv {
 public:
  OpenedEnv() = default;
  ~OpenedEnv();
  OpenedEnv(const OpenedEnv&) = delete;
  OpenedEnv& operator=(const OpenedEnv&) = delete;

  // Views into this object: valid while it lives.
  std::vector<EnvVar> vars() const;
  v1::EnvMap& map() { return map_; }

 private:
  v1::EnvMap map_;
};

// Immutable after construction; thread-safe. Wipes the secret key when destroyed.
class ExecutorKeys {
 public:
  // Reads the base64 text of the 32-byte X25519 secret key (surrounding whitespace allowed).
  // NotFound when the file does not exist; InvalidArgument when it holds anything else.
  static Result<std::unique_ptr<ExecutorKeys>> LoadFile(const std::string& path);
  // secret_key: 32 raw bytes; InvalidArgument otherwise. The public key is derived from it.
  static Result<std::unique_ptr<ExecutorKeys>> FromSecretKey(std::string_view secret_key);
  ~ExecutorKeys();
  ExecutorKeys(const ExecutorKeys&) = delete;
  ExecutorKeys& operator=(const ExecutorKeys&) = delete;

  // 32 raw bytes.
  const std::string& public_key() const { return public_key_; }

  // Opens a sealed v1::EnvMap. Empty input is an empty map (a version that declares no keys).
  // InvalidArgument when the box does not open with this key or does not hold an EnvMap.
  Result<std::unique_ptr<OpenedEnv>> Open(std::string_view sealed) const;

 private:
  ExecutorKeys() = default;
  std::string secret_key_;
  std::string public_key_;
};

}  // namespace toolgate::executor
