#include "toolgate/secrets/crypto.h"

#include <fcntl.h>
#include <sodium.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cassert>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "toolgate/base/crypto.h"
#include "toolgate/base/log.h"
#include "toolgate/base/strings.h"

namespace toolgate::secrets {
namespace {

// The 32-byte key in base64 text, or an error that says what is wrong with `source`.
Result<std::string> DecodeKey(std::string text, const std::string& source) {
  std::string key;
  bool decoded = Base64Decode(Trim(text, " \t\r\n"), &key);
  Wipe(text);
  if (!decoded || key.size() != kKeyBytes) {
    Wipe(key);
    return Status::InvalidArgument(source + " must hold base64 of exactly " +
                                   std::to_string(kKeyBytes) + " bytes");
  }
  return key;
}

Result<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound(path + ": " + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Writes a new key file atomically: a private temporary file, then link(2), which fails rather
// than replace a key another replica created meanwhile (the caller then reads that one).
Status CreateKeyFile(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  // The directories created here are private; existing ones keep the operator's permissions.
  std::vector<fs::path> missing;
  for (fs::path p = fs::path(path).parent_path(); !p.empty() && !fs::exists(p, ec);
       p = p.parent_path()) {
    missing.push_back(p);
  }
  for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
    if (mkdir(it->c_str(), 0700) != 0 && errno != EEXIST) {
      return Status::InvalidArgument("cannot create " + it->string() + ": " + std::strerror(errno));
    }
  }
  std::string tmp = path + ".tmp-" + HexEncode(RandomBytes(6));
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return Status::InvalidArgument("cannot create " + tmp + ": " + std::strerror(errno));
  std::string raw = RandomBytes(kKeyBytes);
  std::string text = Base64Encode(raw) + "\n";
  Wipe(raw);
  bool written =
      write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) && fsync(fd) == 0;
  Wipe(text);
  close(fd);
  int linked = written ? link(tmp.c_str(), path.c_str()) : -1;
  int link_errno = errno;
  unlink(tmp.c_str());
  if (!written) return Status::InvalidArgument("cannot write " + tmp);
  if (linked != 0 && link_errno != EEXIST) {
    return Status::InvalidArgument("cannot create " + path + ": " + std::strerror(link_errno));
  }
  if (linked == 0) log::Info("master key created").Str("path", path);
  return Status::Ok();
}

}  // namespace

void Wipe(std::string& s) {
  if (!s.empty()) sodium_memzero(s.data(), s.size());
}

Result<std::string> LoadMasterKey(std::string_view base64_value, const std::string& path) {
  if (!base64_value.empty()) {
    return DecodeKey(std::string(base64_value), "--master-key (TOOLGATE_MASTER_KEY)");
  }
  if (access(path.c_str(), F_OK) != 0) {
    if (Status s = CreateKeyFile(path); !s.ok()) return s;
  }
  auto text = ReadFile(path);
  if (!text.ok()) return Status::InvalidArgument("master key file " + text.status().message());
  struct stat st;
  if (stat(path.c_str(), &st) == 0 && (st.st_mode & 077) != 0) {
    // A warning, not a refusal: orchestrators mount secrets 0644 in private containers.
    log::Warn("master key file is readable by other users").Str("path", path);
  }
  return DecodeKey(std::move(text).value(), "master key file " + path);
}

Result<std::string> LoadExecutorPublicKey(const std::string& path) {
  auto text = ReadFile(path);
  if (!text.ok()) {
    return Status::InvalidArgument("executor public key file " + text.status().message() +
                                   " (toolgate up creates it; or pass --executor-public-key-file)");
  }
  return DecodeKey(std::move(text).value(), "executor public key file " + path);
}

SecretBox::SecretBox(std::string_view key) {
  assert(key.size() == kKeyBytes);
  std::memcpy(key_.data(), key.data(), kKeyBytes);
  sodium_mlock(key_.data(), key_.size());  // best effort: keep it out of swap
}

SecretBox::~SecretBox() {
  sodium_munlock(key_.data(), key_.size());
}  // also zeroes it

SecretBox::Sealed SecretBox::Encrypt(std::string_view org_id, std::string_view secret_id,
                                     std::string_view plaintext) const {
  const std::string ad = std::string(org_id) + ":" + std::string(secret_id);
  Sealed out;
  out.nonce = RandomBytes(crypto_aead_xchacha20poly1305_ietf_NPUBBYTES);
  out.ciphertext.resize(plaintext.size() + crypto_aead_xchacha20poly1305_ietf_ABYTES);
  unsigned long long len = 0;
  crypto_aead_xchacha20poly1305_ietf_encrypt(
      reinterpret_cast<unsigned char*>(out.ciphertext.data()), &len,
      reinterpret_cast<const unsigned char*>(plaintext.data()), plaintext.size(),
      reinterpret_cast<const unsigned char*>(ad.data()), ad.size(), nullptr,
      reinterpret_cast<const unsigned char*>(out.nonce.data()), key_.data());
  out.ciphertext.resize(len);
  return out;
}

Result<std::string> SecretBox::Decrypt(std::string_view org_id, std::string_view secret_id,
                                       std::string_view nonce, std::string_view ciphertext) const {
  if (nonce.size() != crypto_aead_xchacha20poly1305_ietf_NPUBBYTES ||
      ciphertext.size() < crypto_aead_xchacha20poly1305_ietf_ABYTES) {
    return Status::InvalidArgument("malformed ciphertext");
  }
  const std::string ad = std::string(org_id) + ":" + std::string(secret_id);
  std::string plaintext(ciphertext.size() - crypto_aead_xchacha20poly1305_ietf_ABYTES, '\0');
  unsigned long long len = 0;
  if (crypto_aead_xchacha20poly1305_ietf_decrypt(
          reinterpret_cast<unsigned char*>(plaintext.data()), &len, nullptr,
          reinterpret_cast<const unsigned char*>(ciphertext.data()), ciphertext.size(),
          reinterpret_cast<const unsigned char*>(ad.data()), ad.size(),
          reinterpret_cast<const unsigned char*>(nonce.data()), key_.data()) != 0) {
    return Status::InvalidArgument("ciphertext does not authenticate");
  }
  plaintext.resize(len);
  return plaintext;
}

std::string SealTo(std::string_view public_key, std::string_view plaintext) {
  std::string out(plaintext.size() + crypto_box_SEALBYTES, '\0');
  crypto_box_seal(reinterpret_cast<unsigned char*>(out.data()),
                  reinterpret_cast<const unsigned char*>(plaintext.data()), plaintext.size(),
                  reinterpret_cast<const unsigned char*>(public_key.data()));
  return out;
}

}  // namespace toolgate::secrets
