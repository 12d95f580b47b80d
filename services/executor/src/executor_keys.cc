#include "toolgate/executor/executor_keys.h"

#include <sodium.h>

#include <fstream>
#include <sstream>

#include "toolgate/base/crypto.h"

namespace toolgate::executor {

OpenedEnv::~OpenedEnv() {
  for (auto& [name, value] : *map_.mutable_values()) sodium_memzero(value.data(), value.size());
}

std::vector<EnvVar> OpenedEnv::vars() const {
  std::vector<EnvVar> out;
  out.reserve(map_.values_size());
  for (const auto& [name, value] : map_.values()) out.push_back({name, value});
  return out;
}

Result<std::unique_ptr<ExecutorKeys>> ExecutorKeys::LoadFile(const std::string& path) {
  std::ifstream file(path);
  if (!file) return Status::NotFound(path + ": no such file");
  std::stringstream buffer;
  buffer << file.rdbuf();
  std::string text = buffer.str();
  size_t begin = text.find_first_not_of(" \t\r\n");
  size_t end = text.find_last_not_of(" \t\r\n");
  std::string key;
  bool decoded = begin != std::string::npos &&
                 Base64Decode(std::string_view(text).substr(begin, end - begin + 1), &key);
  sodium_memzero(text.data(), text.size());
  if (!decoded || key.size() != crypto_box_SECRETKEYBYTES) {
    sodium_memzero(key.data(), key.size());
    return Status::InvalidArgument(path + ": not the base64 text of a 32-byte X25519 secret key");
  }
  auto keys = FromSecretKey(key);
  sodium_memzero(key.data(), key.size());
  return keys;
}

Result<std::unique_ptr<ExecutorKeys>> ExecutorKeys::FromSecretKey(std::string_view secret_key) {
  if (secret_key.size() != crypto_box_SECRETKEYBYTES) {
    return Status::InvalidArgument("an X25519 secret key is 32 bytes");
  }
  std::unique_ptr<ExecutorKeys> keys(new ExecutorKeys());
  keys->secret_key_.assign(secret_key);
  keys->public_key_.resize(crypto_box_PUBLICKEYBYTES);
  crypto_scalarmult_base(reinterpret_cast<unsigned char*>(keys->public_key_.data()),
                         reinterpret_cast<const unsigned char*>(keys->secret_key_.data()));
  return keys;
}

ExecutorKeys::~ExecutorKeys() {
  sodium_memzero(secret_key_.data(), secret_key_.size());
}

Result<std::unique_ptr<OpenedEnv>> ExecutorKeys::Open(std::string_view sealed) const {
  auto env = std::make_unique<OpenedEnv>();
  if (sealed.empty()) return env;
  if (sealed.size() < crypto_box_SEALBYTES) {
    return Status::InvalidArgument("sealed env is shorter than a sealed box");
  }
  std::string plain(sealed.size() - crypto_box_SEALBYTES, '\0');
  bool opened =
      crypto_box_seal_open(reinterpret_cast<unsigned char*>(plain.data()),
                           reinterpret_cast<const unsigned char*>(sealed.data()), sealed.size(),
                           reinterpret_cast<const unsigned char*>(public_key_.data()),
                           reinterpret_cast<const unsigned char*>(secret_key_.data())) == 0;
  bool parsed = opened && env->map().ParseFromString(plain);
  sodium_memzero(plain.data(), plain.size());
  if (!opened) return Status::InvalidArgument("sealed env does not open with the executor key");
  if (!parsed) return Status::InvalidArgument("sealed env does not hold an EnvMap");
  return env;
}

}  // namespace toolgate::executor
