// The secrets service's cryptography, on libsodium (call InitCrypto() first).
//
// At rest: each value is encrypted with XChaCha20-Poly1305 (crypto_aead_xchacha20poly1305_ietf)
// under the master key, with a fresh random 24-byte nonce and the additional data
// "<org_id>:<secret_id>", so a ciphertext copied onto another row or organization does not
// decrypt.
//
// On the bus: the values one invocation needs travel as a v1::EnvMap sealed (crypto_box_seal) to
// the executor pool's X25519 public key; only the executor, holding the secret key, opens it.
//
// Key files hold base64 text (standard alphabet, padding optional, surrounding whitespace
// ignored) of the raw key:
//   master.key    32 bytes, the master key; created by this service when missing, mode 0600
//   executor.pub  32 bytes, the executor pool's X25519 public key (crypto_box_PUBLICKEYBYTES)
//   executor.key  32 bytes, its secret key (crypto_box_SECRETKEYBYTES); read by executors only
// The launcher creates executor.key and executor.pub (crypto_box_keypair).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "toolgate/base/status.h"

namespace toolgate::secrets {

inline constexpr size_t kKeyBytes = 32;

// The master key from base64_value when it is not empty (the --master-key flag or
// TOOLGATE_MASTER_KEY), else from the file at path, which is created (32 random bytes, mode
// 0600, missing directories 0700) when it does not exist; replicas starting together agree on
// one key. InvalidArgument, with a message naming the flag or file, for a key that is not base64
// of 32 bytes or a file that cannot be read or created.
Result<std::string> LoadMasterKey(std::string_view base64_value, const std::string& path);

// The executor pool's public key from path. InvalidArgument naming the file when it is missing
// or not base64 of 32 bytes.
Result<std::string> LoadExecutorPublicKey(const std::string& path);

// Encryption at rest under the master key. The key is held in locked memory and wiped on
// destruction. Thread-safe (const methods only).
class SecretBox {
 public:
  struct Sealed {
    std::string nonce;       // 24 bytes
    std::string ciphertext;  // plaintext + 16-byte tag
  };

  // key must be kKeyBytes long (LoadMasterKey's result).
  explicit SecretBox(std::string_view key);
  ~SecretBox();
  SecretBox(const SecretBox&) = delete;
  SecretBox& operator=(const SecretBox&) = delete;

  Sealed Encrypt(std::string_view org_id, std::string_view secret_id,
                 std::string_view plaintext) const;
  // The plaintext (the caller wipes it after use), or InvalidArgument when the ciphertext was
  // not made by this key for this org_id and secret_id, or was altered.
  Result<std::string> Decrypt(std::string_view org_id, std::string_view secret_id,
                              std::string_view nonce, std::string_view ciphertext) const;

 private:
  std::array<unsigned char, kKeyBytes> key_;
};

// plaintext sealed to public_key (kKeyBytes) with crypto_box_seal.
std::string SealTo(std::string_view public_key, std::string_view plaintext);

// Overwrites s's characters with zeros (sodium_memzero); the size is unchanged.
void Wipe(std::string& s);

}  // namespace toolgate::secrets
